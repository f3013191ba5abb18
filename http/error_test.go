package http_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

func TestErrorStatus(t *testing.T) {
	for code, status := range map[string]int{
		chainquery.EINVALID:      400,
		chainquery.EUNAUTHORIZED: 401,
		chainquery.EFORBIDDEN:    403,
		chainquery.ENOTFOUND:     404,
		chainquery.ENOTALLOWED:   405,
		chainquery.ECONFLICT:     409,
		chainquery.ETOOLARGE:     413,
		chainquery.ERATELIMIT:    429,
		chainquery.EINTERNAL:     500,
		chainquery.EUNAVAILABLE:  503,
		chainquery.ETIMEOUT:      503,
		"":                       500,
		"something_new":          500,
	} {
		if got := cqhttp.ErrorStatus(code); got != status {
			t.Errorf("ErrorStatus(%q) = %d, want %d", code, got, status)
		}
	}
}

// faultStore is the fixture store with some methods replaced, to make the
// store fail in the ways a real one can.
type faultStore struct {
	*sqlite.DB
	findBlock   func() (*chainquery.Block, error)
	latestBlock func() (uint64, error)
	findLogs    func()
	findKey     func() (*chainquery.APIKey, error)
}

func (s *faultStore) FindBlock(ctx context.Context, chain chainquery.Chain, number uint64, full bool) (*chainquery.Block, error) {
	if s.findBlock != nil {
		return s.findBlock()
	}
	return s.DB.FindBlock(ctx, chain, number, full)
}

func (s *faultStore) LatestBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	if s.latestBlock != nil {
		return s.latestBlock()
	}
	return s.DB.LatestBlock(ctx, chain)
}

func (s *faultStore) FindTransactionLogs(ctx context.Context, f chainquery.LogFilter) ([]*chainquery.Log, int, error) {
	if s.findLogs != nil {
		s.findLogs()
	}
	return s.DB.FindTransactionLogs(ctx, f)
}

func (s *faultStore) FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*chainquery.APIKey, error) {
	if s.findKey != nil {
		return s.findKey()
	}
	return s.DB.FindAPIKeyByHash(ctx, hash)
}

// openFaultServer serves a faultStore over the fixture.
func openFaultServer(t *testing.T, fs *faultStore) *Server {
	t.Helper()
	return MustOpenServer(t, func(c *cqhttp.Config) {
		fs.DB = c.Store.(*sqlite.DB)
		c.Store = fs
		// The key lookups change from subtest to subtest: ask the store
		// every time rather than trust the key cache.
		c.KeyCacheTTL = -1
	})
}

func TestStoreFailures(t *testing.T) {
	secret := `sqlite: SELECT number FROM blocks WHERE chain = ?: open /var/lib/chainquery/db: disk I/O error`
	fs := &faultStore{
		findBlock: func() (*chainquery.Block, error) { return nil, errors.New(secret) },
		latestBlock: func() (uint64, error) {
			return 0, chainquery.Errorf(chainquery.EUNAVAILABLE, "the database is unavailable; retry later")
		},
		findLogs: func() { panic("boom: " + secret) },
	}
	s := openFaultServer(t, fs)

	t.Run("InternalErrorHidesDetails", func(t *testing.T) {
		detail := MustErrorDetail(t, s.Get(t, blockPath("polygon", "?block_number=68000000")), http.StatusInternalServerError)
		if detail != "Internal server error" {
			t.Errorf("detail %q", detail)
		}
		if !strings.Contains(s.Logs.String(), "disk I/O error") {
			t.Errorf("the real error must be logged:\n%s", s.Logs)
		}
	})
	t.Run("Unavailable", func(t *testing.T) {
		detail := MustErrorDetail(t, s.Get(t, latestPath("polygon")), http.StatusServiceUnavailable)
		if !strings.Contains(detail, "unavailable") {
			t.Errorf("detail %q", detail)
		}
	})
	t.Run("PanicIsA500", func(t *testing.T) {
		resp := s.Get(t, logsPath("polygon", storetest.TxNested.Hex()))
		if detail := MustErrorDetail(t, resp, http.StatusInternalServerError); detail != "Internal server error" {
			t.Errorf("detail %q", detail)
		}
		logs := s.Logs.String()
		if !strings.Contains(logs, "panic serving request") || !strings.Contains(logs, "boom") {
			t.Errorf("the panic must be logged:\n%s", logs)
		}
		// The server goes on serving.
		MustOK(t, s.Get(t, receiptsPath("ethereum", "?block_number=18000000")))
	})
	t.Run("KeyStoreUnavailable", func(t *testing.T) {
		fs.findKey = func() (*chainquery.APIKey, error) {
			return nil, chainquery.Errorf(chainquery.EUNAVAILABLE, "the database is unavailable; retry later")
		}
		defer func() { fs.findKey = nil }()
		MustErrorDetail(t, s.Get(t, receiptsPath("ethereum", "?block_number=18000000")), http.StatusServiceUnavailable)
	})
	t.Run("KeyStoreBroken", func(t *testing.T) {
		fs.findKey = func() (*chainquery.APIKey, error) { return nil, errors.New(secret) }
		defer func() { fs.findKey = nil }()
		detail := MustErrorDetail(t, s.Get(t, receiptsPath("ethereum", "?block_number=18000000")), http.StatusInternalServerError)
		if strings.Contains(detail, "SELECT") {
			t.Errorf("detail leaks internals: %q", detail)
		}
	})
	t.Run("KeyStoreReturnsWrongKey", func(t *testing.T) {
		// A store whose lookup is not exact must not let a key through.
		fs.findKey = func() (*chainquery.APIKey, error) {
			return &chainquery.APIKey{Name: "other", Endpoints: chainquery.Endpoints}, nil
		}
		defer func() { fs.findKey = nil }()
		MustErrorDetail(t, s.Get(t, receiptsPath("ethereum", "?block_number=18000000")), http.StatusUnauthorized)
	})
}

func TestRequestLog(t *testing.T) {
	s := MustOpenServer(t)
	MustOK(t, s.Get(t, blockPath("polygon", "?block_number=68000000")))
	s.Do(t, http.MethodGet, "/nowhere/"+s.Key, NoKey, nil)
	s.Post(t, tracesPath, strings.Repeat(" ", 100))

	lines := strings.Split(strings.TrimSpace(s.Logs.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want one per request:\n%s", len(lines), s.Logs)
	}
	for i, want := range [][]string{
		{`msg=request`, `method=GET`, `route="GET /api/v1/customer/{chain}/block"`, `status=200`, `duration=`, `key=all`, `response_bytes=`},
		{`method=GET`, `route=unmatched`, `status=404`},
		{`method=POST`, `route="POST /api/v1/customer/{chain}/traces/filter"`, `status=400`, `request_bytes=100`, `key=all`},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d lacks %s: %s", i, w, lines[i])
			}
		}
	}
	if strings.Contains(s.Logs.String(), s.Key) || strings.Contains(s.Logs.String(), "/nowhere") {
		t.Errorf("the log must hold neither keys nor raw paths:\n%s", s.Logs)
	}
}

// TestServeShutdown checks that Shutdown lets an in-flight request finish
// and that Serve then returns http.ErrServerClosed.
func TestServeShutdown(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	fs := &faultStore{latestBlock: func() (uint64, error) {
		close(entered)
		<-release
		return 42, nil
	}}
	db := MustOpenDB(t)
	fs.DB = db
	key := MustCreateKey(t, db, "k", chainquery.Endpoints...)
	srv := cqhttp.NewServer(cqhttp.Config{Store: fs})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	type result struct {
		resp Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+latestPath("polygon"), nil)
		req.Header.Set("apikey", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, err}
	}()
	<-entered

	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) before the in-flight request finished", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)

	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+latestPath("polygon"), nil)
	handlerDoc(t, srv.Handler()).check(t, req, nil, r.resp)
	AssertJSON(t, MustOK(t, r.resp), `{"block_number":42}`)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve returned %v, want http.ErrServerClosed", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts connections after Shutdown")
	}
}
