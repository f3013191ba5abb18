package http_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// openExportServer is MustOpenServer with exports of chunks of chunkRows
// rows, responses of at most responseRows (0: the default), and afterFirst
// run once the first chunk of each response is sent.
func openExportServer(tb testing.TB, chunkRows, responseRows int, afterFirst func(s *Server), edit ...func(*cqhttp.Config)) *Server {
	tb.Helper()
	db := MustOpenDB(tb)
	s := &Server{DB: db, Logs: &syncBuffer{}}
	s.Key = MustCreateKey(tb, db, "all", chainquery.Endpoints...)
	s.LogsKey = MustCreateKey(tb, db, "logs-only", chainquery.EndpointGetTransactionLogs)
	cfg := cqhttp.Config{
		Store:  db,
		Logger: slog.New(slog.NewTextHandler(s.Logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    func() time.Time { return Now },
	}
	for _, f := range edit {
		f(&cfg)
	}
	s.Server = cqhttp.NewServer(cfg)
	var hook func()
	if afterFirst != nil {
		hook = func() { afterFirst(s) }
	}
	s.SetExportLimits(chunkRows, responseRows, hook)
	s.HTTP = httptest.NewServer(s.Handler())
	tb.Cleanup(s.HTTP.Close)
	s.Doc(tb)
	return s
}

// exportLines is an export answer cut into its rows and checkpoints.
type exportLines struct {
	rows     []string
	cursors  []string // each checkpoint's cursor, "" for the null one
	before   []int    // rows before each checkpoint
	complete bool     // the last line is {"cursor":null}
}

// mustExport posts body to path with key and reads the NDJSON answer.
func mustExport(tb testing.TB, s *Server, path, key, body string) exportLines {
	tb.Helper()
	resp := s.Do(tb, http.MethodPost, path, key, strings.NewReader(body))
	if resp.Status != http.StatusOK {
		tb.Fatalf("status %d, want 200: %s", resp.Status, resp.Body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		tb.Errorf("Content-Type %q, want application/x-ndjson", ct)
	}
	if resp.Header.Get("ETag") != "" || resp.Header.Get("Cache-Control") != "no-cache" {
		tb.Errorf("ETag %q, Cache-Control %q: an export is never cached", resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"))
	}
	var out exportLines
	if len(resp.Body) == 0 || resp.Body[len(resp.Body)-1] != '\n' {
		tb.Fatalf("the answer does not end with a newline: %q", resp.Body)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(resp.Body), "\n"), "\n") {
		if !strings.HasPrefix(line, `{"cursor":`) {
			out.rows = append(out.rows, line)
			continue
		}
		var cp struct{ Cursor *string }
		if err := json.Unmarshal([]byte(line), &cp); err != nil {
			tb.Fatalf("checkpoint %q: %v", line, err)
		}
		if out.complete {
			tb.Fatalf("a line after {\"cursor\":null}: %s", line)
		}
		out.complete = cp.Cursor == nil
		if cp.Cursor != nil {
			out.cursors = append(out.cursors, *cp.Cursor)
			out.before = append(out.before, len(out.rows))
		}
	}
	if len(out.rows) > 0 && !strings.HasPrefix(string(resp.Body), `{"block_number":`) {
		tb.Errorf("the answer starts %.40q, not with a row", resp.Body)
	}
	return out
}

// filterPages reads every page of a filter endpoint, 50 rows at a time, and
// returns its rows as the endpoint wrote them.
func filterPages(tb testing.TB, s *Server, path, body string) []string {
	tb.Helper()
	var out []string
	for offset := 0; offset < 10_000; offset += 50 {
		var page struct {
			Result []json.RawMessage
			Count  int
		}
		if err := json.Unmarshal(MustOK(tb, s.Post(tb, fmt.Sprintf("%s?limit=50&offset=%d", path, offset), body)), &page); err != nil {
			tb.Fatal(err)
		}
		for _, r := range page.Result {
			out = append(out, string(r))
		}
		if offset+50 >= page.Count {
			return out
		}
	}
	tb.Fatal("more than 10,000 rows: not the fixture")
	return nil
}

// withCursor adds the cursor to a JSON object body.
func withCursor(body, cursor string) string {
	return strings.TrimSuffix(strings.TrimSpace(body), "}") + fmt.Sprintf(`, "cursor": %q}`, cursor)
}

// TestExports holds each export to its filter endpoint's pages: the same
// rows, byte for byte, with a checkpoint after each chunk and the null one
// last, over a range longer than the filters take; and resumed from every
// checkpoint, the rows after it.
func TestExports(t *testing.T) {
	const chunk = 3
	s := openExportServer(t, chunk, 0, nil)
	long := `{"from_block": 0, "to_block": 9000000000}`
	cases := []struct {
		name, export, filter, filterBody, body string
	}{
		{"Traces", "/api/v1/customer/polygon/traces/export", "/api/v1/customer/polygon/traces/filter",
			`{"from_block": 68000000, "to_block": 68000099}`, long},
		{"TracesFrom", "/api/v1/customer/polygon/traces/export", "/api/v1/customer/polygon/traces/filter",
			`{"from_block": 68000000, "to_block": 68000099, "from_address": "` + storetest.Addr(0x10).Hex() + `"}`,
			`{"from_datetime": "2025-01-01T00:00:00Z", "to_datetime": "2026-01-01T00:00:00Z", "from_address": "` + storetest.Addr(0x10).Hex() + `"}`},
		{"Logs", "/api/v1/customer/polygon/logs/export", "/api/v1/customer/polygon/logs/filter",
			`{"from_block": 68000000, "to_block": 68000099}`, long},
		{"LogsAddress", "/api/v1/customer/polygon/logs/export", "/api/v1/customer/polygon/logs/filter",
			`{"from_block": 0, "to_block": 9000000000, "address": "` + storetest.Addr(0x13).Hex() + `"}`,
			`{"from_block": 0, "to_block": 9000000000, "address": "` + storetest.Addr(0x13).Hex() + `"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := filterPages(t, s, c.filter, c.filterBody)
			if len(want) <= chunk {
				t.Fatalf("%d rows: too few for a checkpoint", len(want))
			}
			got := mustExport(t, s, c.export, s.Key, c.body)
			if !got.complete {
				t.Fatal("the export did not end with {\"cursor\":null}", s.Logs.String())
			}
			if strings.Join(got.rows, "\n") != strings.Join(want, "\n") {
				t.Fatalf("the export's %d rows are not the filter's %d:\n%s\nwant\n%s", len(got.rows), len(want), strings.Join(got.rows, "\n"), strings.Join(want, "\n"))
			}
			for i, n := range got.before {
				if n != (i+1)*chunk {
					t.Errorf("checkpoint %d after %d rows, want %d: one after each chunk", i, n, (i+1)*chunk)
				}
			}
			for i, cursor := range got.cursors {
				rest := mustExport(t, s, c.export, s.Key, withCursor(c.body, cursor))
				if !rest.complete || strings.Join(rest.rows, "\n") != strings.Join(want[got.before[i]:], "\n") {
					t.Errorf("resumed from checkpoint %d: %d rows (complete %v), want the %d after it", i, len(rest.rows), rest.complete, len(want)-got.before[i])
				}
			}
		})
	}
}

// TestExports_Budget: a response ends at the server's budget after its last
// checkpoint, without the null line, and the export resumes from it.
func TestExports_Budget(t *testing.T) {
	s := openExportServer(t, 3, 4, nil)
	body := `{"from_block": 68000000, "to_block": 68000002}`
	want := filterPages(t, s, "/api/v1/customer/polygon/traces/filter", body)
	first := mustExport(t, s, "/api/v1/customer/polygon/traces/export", s.Key, body)
	if first.complete || len(first.rows) != 6 || len(first.cursors) != 2 {
		t.Fatalf("%d rows, %d checkpoints, complete %v: want two chunks of 3 and no null line", len(first.rows), len(first.cursors), first.complete)
	}
	got := first.rows
	cursor := first.cursors[len(first.cursors)-1]
	for range len(want) {
		next := mustExport(t, s, "/api/v1/customer/polygon/traces/export", s.Key, withCursor(body, cursor))
		got = append(got, next.rows...)
		if next.complete {
			break
		}
		cursor = next.cursors[len(next.cursors)-1]
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("resumed across responses: %d rows, want the %d of the filter", len(got), len(want))
	}
}

// TestExports_FairShare: each chunk is admitted on its own. A key whose
// budget is spent while another key uses the store is refused its next
// chunk: mid-stream the answer ends without the null line, and before the
// first line it is a 429 with Retry-After.
func TestExports_FairShare(t *testing.T) {
	var other string
	s := openExportServer(t, 3, 0, func(s *Server) {
		// Another key uses the store, after this one spent its budget.
		MustOK(t, s.Do(t, http.MethodGet, "/api/v1/customer/polygon/blocks/latest", other, nil))
	}, func(c *cqhttp.Config) {
		c.KeyDefaults = chainquery.KeyLimits{CostRate: 0.001, CostBurst: 0.001} // a microsecond of store time
		c.QueueWait = time.Millisecond
	})
	other = MustCreateKey(t, s.DB, "other", chainquery.Endpoints...)
	body := `{"from_block": 68000000, "to_block": 68000002}`
	cut := mustExport(t, s, "/api/v1/customer/polygon/traces/export", s.Key, body)
	// The budget refills while a refused chunk waits (QueueWait), so a
	// chunk may still be admitted after the first; the one after it is not.
	if cut.complete || len(cut.cursors) == 0 || len(cut.rows) != 3*len(cut.cursors) || len(cut.rows) >= storetest.PolygonBlockTraces {
		t.Fatalf("%d rows, %d checkpoints, complete %v: want the stream cut after a checkpoint", len(cut.rows), len(cut.cursors), cut.complete)
	}
	resp := s.Do(t, http.MethodPost, "/api/v1/customer/polygon/traces/export", s.Key, strings.NewReader(withCursor(body, cut.cursors[len(cut.cursors)-1])))
	detail := MustErrorDetail(t, resp, http.StatusTooManyRequests)
	if !strings.Contains(detail, "cost budget is spent") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("detail %q, Retry-After %q: want the cost budget's refusal", detail, resp.Header.Get("Retry-After"))
	}
}

// TestExports_Keys: each export has its own endpoint name; a key enabled
// for the filter endpoint alone is refused its export.
func TestExports_Keys(t *testing.T) {
	s := openExportServer(t, 0, 0, nil)
	filterOnly := MustCreateKey(t, s.DB, "filter-only", chainquery.EndpointFilterTraces, chainquery.EndpointFilterLogs)
	exportOnly := MustCreateKey(t, s.DB, "export-only", chainquery.EndpointExportTraces, chainquery.EndpointExportLogs)
	body := `{"from_block": 68000000, "to_block": 68000002}`
	for _, p := range []string{"/api/v1/customer/polygon/traces/export", "/api/v1/customer/polygon/logs/export"} {
		MustErrorDetail(t, s.Do(t, http.MethodPost, p, filterOnly, strings.NewReader(body)), http.StatusForbidden)
		MustErrorDetail(t, s.Do(t, http.MethodPost, p, NoKey, strings.NewReader(body)), http.StatusUnauthorized)
		if got := mustExport(t, s, p, exportOnly, body); !got.complete || len(got.rows) == 0 {
			t.Errorf("%s with the export key: %d rows, complete %v", p, len(got.rows), got.complete)
		}
	}
}

func TestExports_Errors(t *testing.T) {
	s := openExportServer(t, 0, 0, nil)
	traces, logs := "/api/v1/customer/polygon/traces/export", "/api/v1/customer/polygon/logs/export"
	body := `{"from_block": 68000000, "to_block": 68000002}`
	one := openExportServer(t, 1, 1, nil) // a checkpoint of this body, from another server: a cursor names rows, not a server
	e := mustExport(t, one, traces, one.Key, body)
	if len(e.cursors) != 1 {
		t.Fatalf("%d checkpoints, want 1", len(e.cursors))
	}
	cursor := e.cursors[0]
	post := http.MethodPost
	RunErrorCases(t, s, []ErrorCase{
		{Name: "ErrLimit", Method: post, Path: traces + "?limit=10", Body: body, Status: 400, Detail: "limit is not a parameter of an export"},
		{Name: "ErrOffset", Method: post, Path: logs + "?offset=0", Body: body, Status: 400, Detail: "offset is not a parameter of an export"},
		{Name: "ErrCount", Method: post, Path: logs + "?count=1", Body: body, Status: 400, Detail: "count is not a parameter of an export"},
		{Name: "ErrUnknownField", Method: post, Path: traces, Body: `{"from_block": 1, "to_block": 2, "limit": 5}`, Status: 400,
			Detail: `unknown field "limit" in request body; allowed fields: from_block, to_block, from_datetime, to_datetime, from_address, to_address, cursor`},
		{Name: "ErrRange", Method: post, Path: logs, Body: `{"from_block": 5, "to_block": 4}`, Status: 400, Detail: "to_block must be at least from_block"},
		{Name: "ErrOneRange", Method: post, Path: traces, Body: `{"from_block": 5}`, Status: 400, Detail: "to_block is required with from_block"},
		{Name: "ErrChainUntraced", Method: post, Path: "/api/v1/customer/base/traces/export", Body: body, Status: 400, Detail: "the chains whose traces this server indexes"},
		{Name: "ErrChain", Method: post, Path: "/api/v1/customer/solana/logs/export", Body: body, Status: 400, Detail: "chain must be one of: ethereum"},
		{Name: "ErrCursorType", Method: post, Path: traces, Body: `{"from_block": 1, "to_block": 2, "cursor": 5}`, Status: 400, Detail: "cursor must be a string"},
		{Name: "ErrCursorEmpty", Method: post, Path: traces, Body: `{"from_block": 1, "to_block": 2, "cursor": ""}`, Status: 400, Detail: "cursor must not be empty"},
		{Name: "ErrCursorMalformed", Method: post, Path: traces, Body: withCursor(body, "AAAA"), Status: 400, Detail: "cursor is malformed"},
		{Name: "ErrCursorOtherFilter", Method: post, Path: traces, Body: withCursor(`{"from_block": 68000000, "to_block": 68000001}`, cursor), Status: 400,
			Detail: "cursor does not belong to this filter"},
		{Name: "ErrCursorOtherEndpoint", Method: post, Path: logs, Body: withCursor(body, cursor), Status: 400, Detail: "cursor does not belong to this filter"},
		{Name: "ErrMethod", Method: http.MethodGet, Path: traces, Status: 405, Detail: "use POST"},
	})
	// The same cursor resumes the body it was given for.
	if got := mustExport(t, s, traces, s.Key, withCursor(body, cursor)); !got.complete || len(got.rows) == 0 {
		t.Errorf("resumed: %d rows, complete %v", len(got.rows), got.complete)
	}
}
