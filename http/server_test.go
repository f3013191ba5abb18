package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Now is the pinned current time of every test server: an hour and more after
// the Solana fixture's cursor (13:00), so that snapshots up to 14:00 are
// allowed and later ones are within the last hour.
var Now = time.Date(2025, 6, 1, 15, 0, 0, 0, time.UTC)

// Server is a test server: the real handler over a real SQLite store loaded
// with the fixture, served on 127.0.0.1.
type Server struct {
	*cqhttp.Server
	DB   *sqlite.DB
	HTTP *httptest.Server
	Logs *syncBuffer // everything the server logged

	Key        string // enabled for every endpoint
	LogsKey    string // enabled for Get Transaction Logs only
	RevokedKey string // created, then revoked

	docOnce sync.Once
	doc     *apiDoc // what the server serves at /openapi.json; see Doc
}

// MustOpenDB opens a SQLite store in a temporary directory and loads the
// fixture: the EVM blocks of every chain and the Solana balances and tokens.
func MustOpenDB(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(filepath.Join(tb.TempDir(), "db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	ctx := context.Background()
	for chain, blocks := range storetest.Blocks() {
		if err := db.WriteBlocks(ctx, chain, blocks); err != nil {
			tb.Fatalf("write %s blocks: %v", chain, err)
		}
	}
	if err := db.WriteSolana(ctx, &chainquery.SolanaWrite{Tokens: storetest.TokenBalanceChanges(),
		SOL: &chainquery.SOLChanges{First: storetest.SOLFirst, Changes: storetest.SOLChanges()}, Cursor: storetest.SolanaCursor}); err != nil {
		tb.Fatal(err)
	}
	if err := db.WriteTokens(ctx, storetest.Tokens()); err != nil {
		tb.Fatal(err)
	}
	return db
}

// MustCreateKey stores a new key enabled for endpoints and returns it.
func MustCreateKey(tb testing.TB, store chainquery.APIKeyService, name string, endpoints ...chainquery.Endpoint) string {
	tb.Helper()
	key, hash := chainquery.NewAPIKey()
	k := &chainquery.APIKey{Name: name, Hash: hash, Endpoints: endpoints, CreatedAt: Now}
	if err := store.CreateAPIKey(context.Background(), k); err != nil {
		tb.Fatal(err)
	}
	return key
}

// MustOpenServer returns a running test server over a fixture store. edit,
// when given, changes the config before the server is built.
func MustOpenServer(tb testing.TB, edit ...func(*cqhttp.Config)) *Server {
	tb.Helper()
	db := MustOpenDB(tb)
	s := &Server{DB: db, Logs: &syncBuffer{}}
	s.Key = MustCreateKey(tb, db, "all", chainquery.Endpoints...)
	s.LogsKey = MustCreateKey(tb, db, "logs-only", chainquery.EndpointGetTransactionLogs)
	s.RevokedKey = MustCreateKey(tb, db, "revoked", chainquery.Endpoints...)
	if err := db.RevokeAPIKey(context.Background(), "revoked"); err != nil {
		tb.Fatal(err)
	}
	cfg := cqhttp.Config{
		Store:  db,
		Logger: slog.New(slog.NewTextHandler(s.Logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    func() time.Time { return Now },
	}
	for _, f := range edit {
		f(&cfg)
	}
	s.Server = cqhttp.NewServer(cfg)
	s.HTTP = httptest.NewServer(s.Handler()) // listens on 127.0.0.1
	tb.Cleanup(s.HTTP.Close)
	s.Doc(tb)
	s.Logs.Reset() // the tests read the log of their own requests only
	return s
}

// Response is a response read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// NoKey, given as the key of Do, sends no apikey header at all ("" sends an
// empty one).
const NoKey = "\x00no key"

// Do sends a request with the given API key and reads the response. Every
// answer is checked against the OpenAPI document the server serves: its
// status must be documented for the operation and its headers and body must
// validate (see apiDoc.problems); a breach fails the test.
func (s *Server) Do(tb testing.TB, method, path, key string, body io.Reader) Response {
	tb.Helper()
	var reqBody []byte
	if body != nil {
		var err error
		if reqBody, err = io.ReadAll(body); err != nil { // kept for the check
			tb.Fatal(err)
		}
		body = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequest(method, s.HTTP.URL+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	if key != NoKey {
		req.Header.Set("apikey", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp := s.send(tb, req)
	s.Doc(tb).check(tb, req, reqBody, resp)
	return resp
}

// send sends req as it is and reads the response.
func (s *Server) send(tb testing.TB, req *http.Request) Response {
	tb.Helper()
	resp, err := s.HTTP.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Doc returns the OpenAPI document the server serves at /openapi.json,
// fetched once.
func (s *Server) Doc(tb testing.TB) *apiDoc {
	tb.Helper()
	s.docOnce.Do(func() {
		req, err := http.NewRequest(http.MethodGet, s.HTTP.URL+"/openapi.json", nil)
		if err != nil {
			tb.Fatal(err)
		}
		resp := s.send(tb, req)
		if resp.Status != http.StatusOK {
			tb.Fatalf("GET /openapi.json: status %d: %s", resp.Status, resp.Body)
		}
		s.doc = loadAPIDoc(tb, resp.Body)
	})
	if s.doc == nil {
		tb.Fatal("the OpenAPI document could not be loaded")
	}
	return s.doc
}

// Get sends a GET with the all-endpoints key.
func (s *Server) Get(tb testing.TB, path string) Response {
	tb.Helper()
	return s.Do(tb, http.MethodGet, path, s.Key, nil)
}

// Post sends a POST of body with the all-endpoints key.
func (s *Server) Post(tb testing.TB, path, body string) Response {
	tb.Helper()
	return s.Do(tb, http.MethodPost, path, s.Key, strings.NewReader(body))
}

// ErrorCase is one request that must fail.
type ErrorCase struct {
	Name   string
	Method string // GET when empty
	Path   string
	Body   string  // sent when not empty (POST)
	Key    *string // the all-endpoints key when nil
	Status int
	Detail string // a substring the detail must contain
}

// RunErrorCases sends every case and checks its status, its JSON error
// body and that its detail names what was wrong.
func RunErrorCases(t *testing.T, s *Server, cases []ErrorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			method := tc.Method
			if method == "" {
				method = http.MethodGet
			}
			key := s.Key
			if tc.Key != nil {
				key = *tc.Key
			}
			var body io.Reader
			if tc.Body != "" {
				body = strings.NewReader(tc.Body)
			}
			resp := s.Do(t, method, tc.Path, key, body)
			detail := MustErrorDetail(t, resp, tc.Status)
			if !strings.Contains(detail, tc.Detail) {
				t.Errorf("detail = %q, want it to contain %q", detail, tc.Detail)
			}
		})
	}
}

// MustErrorDetail checks that resp is an error with the given status and a
// JSON body of exactly {"detail": "<non-empty>"}, and returns the detail.
func MustErrorDetail(tb testing.TB, resp Response, status int) string {
	tb.Helper()
	if resp.Status != status {
		tb.Fatalf("status = %d, want %d; body: %s", resp.Status, status, resp.Body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body map[string]any
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		tb.Fatalf("error body is not JSON: %v: %s", err, resp.Body)
	}
	detail, ok := body["detail"].(string)
	if !ok || detail == "" || len(body) != 1 {
		tb.Fatalf("error body = %s, want {\"detail\": \"...\"}", resp.Body)
	}
	return detail
}

// MustOK checks for a 200 JSON answer and returns its body.
func MustOK(tb testing.TB, resp Response) []byte {
	tb.Helper()
	if resp.Status != http.StatusOK {
		tb.Fatalf("status = %d, want 200; body: %s", resp.Status, resp.Body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	return resp.Body
}

// AssertGolden compares a JSON body with testdata/name.json, after indenting
// both; -update rewrites the file instead.
func AssertGolden(tb testing.TB, name string, body []byte) {
	tb.Helper()
	var got bytes.Buffer
	if err := json.Indent(&got, body, "", "  "); err != nil {
		tb.Fatalf("body is not JSON: %v: %s", err, body)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		tb.Errorf("body differs from %s (run go test -update after checking the change):\n got: %s\nwant: %s", path, got.Bytes(), want)
	}
}

// AssertJSON compares a JSON body with the expected JSON text, ignoring
// layout but not member order, which the interface fixes.
func AssertJSON(tb testing.TB, body []byte, want string) {
	tb.Helper()
	var g, w bytes.Buffer
	if err := json.Compact(&g, body); err != nil {
		tb.Fatalf("body is not JSON: %v: %s", err, body)
	}
	if err := json.Compact(&w, []byte(want)); err != nil {
		tb.Fatalf("expected text is not JSON: %v", err)
	}
	if g.String() != w.String() {
		tb.Errorf("body:\n got: %s\nwant: %s", g.String(), w.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines to log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
