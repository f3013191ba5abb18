package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/sqlite"
)

// now pins the servers' clock an hour and more after the Solana cursor, as
// the http tests do, so that every snapshot of the fixture may be asked.
var now = time.Date(2025, 6, 1, 15, 0, 0, 0, time.UTC)

// testKey is the API key both stores hold, enabled for every endpoint.
const testKey = "cq_crossstore-test-key"

// storePair is the same world in both stores, each behind the real HTTP
// handler.
type storePair struct {
	sqlite, postgres       chainquery.Store
	sqliteAPI, postgresAPI http.Handler
}

func newStorePair(t *testing.T) *storePair {
	lite, err := sqlite.Open(filepath.Join(t.TempDir(), "chainquery.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	p := &storePair{sqlite: lite, postgres: postgres.MustOpenDB(t)}
	for _, s := range []chainquery.Store{p.sqlite, p.postgres} {
		storetest.Load(t, s)
		mustCreateTestKey(t, s)
	}
	p.sqliteAPI, p.postgresAPI = serve(p.sqlite), serve(p.postgres)
	return p
}

// request is one API call.
type request struct{ method, path, body string }

func (r request) String() string { return r.method + " " + r.path + " " + r.body }

func do(h http.Handler, r request) *httptest.ResponseRecorder {
	var body *strings.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, r.path, nil)
	if body != nil {
		req = httptest.NewRequest(r.method, r.path, body)
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("apikey", testKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// compare sends every request to both servers and fails on any difference
// in status, Content-Type or body bytes. It returns how many answers each
// status had.
func (p *storePair) compare(t *testing.T, reqs []request) map[int]int {
	t.Helper()
	return compareAPIs(t, "sqlite", p.sqliteAPI, "postgres", p.postgresAPI, reqs)
}

// compareAPIs sends every request to two handlers and fails on any
// difference in status, Content-Type or body bytes. It returns how many
// answers each status had.
func compareAPIs(t *testing.T, nameA string, a http.Handler, nameB string, b http.Handler, reqs []request) map[int]int {
	t.Helper()
	statuses := map[int]int{}
	for _, r := range reqs {
		ra, rb := do(a, r), do(b, r)
		if ra.Code != rb.Code || !bytes.Equal(ra.Body.Bytes(), rb.Body.Bytes()) ||
			ra.Header().Get("Content-Type") != rb.Header().Get("Content-Type") {
			t.Errorf("%s:\n%-8s %d %s\n%-8s %d %s", r, nameA, ra.Code, ra.Body, nameB, rb.Code, rb.Body)
		}
		statuses[ra.Code]++
	}
	return statuses
}

// serve returns the real API handler over s, with the pinned clock.
func serve(s chainquery.Store) http.Handler {
	return cqhttp.NewServer(cqhttp.Config{Store: s, Now: func() time.Time { return now }}).Handler()
}

// mustCreateTestKey stores testKey in s.
func mustCreateTestKey(t *testing.T, s chainquery.APIKeyService) {
	t.Helper()
	k := &chainquery.APIKey{Name: "all", Hash: chainquery.HashAPIKey(testKey), Endpoints: chainquery.Endpoints, CreatedAt: now}
	if err := s.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
}

// TestSameAnswers renders every kind of request through the real handler
// over a SQLite store and a PostgreSQL store holding the same fixture, and
// requires identical bytes; then does the same after a reorg.
func TestSameAnswers(t *testing.T) {
	p := newStorePair(t)
	reqs := apiRequests()
	statuses := p.compare(t, reqs)
	t.Logf("%d requests, statuses %v", len(reqs), statuses)
	// Not-found and invalid answers are compared too, but most requests
	// must reach data for the comparison to mean something.
	if statuses[http.StatusOK] < len(reqs)/3 {
		t.Fatalf("only %d of %d requests were answered 200: the comparison tests too little", statuses[http.StatusOK], len(reqs))
	}

	// Versions and orphans after the same reorg in both stores.
	ctx := context.Background()
	for _, s := range []chainquery.Store{p.sqlite, p.postgres} {
		fork := storetest.Blocks()[chainquery.Polygon][2]
		fork.Block.Number, fork.Block.Hash = storetest.PolygonEmptyBlock, storetest.H(storetest.TagBlock, 0x77)
		fork.Transactions[0].BlockNumber = storetest.PolygonEmptyBlock
		fork.Traces[0].BlockNumber = storetest.PolygonEmptyBlock
		if err := s.ReplaceBlocks(ctx, chainquery.Polygon, storetest.PolygonEmptyBlock, []*chainquery.BlockData{fork}); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteBlocks(ctx, chainquery.Polygon, storetest.Blocks()[chainquery.Polygon]); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("after a reorg: statuses %v", p.compare(t, reqs))
}

// apiRequests lists requests over every endpoint: each fixture record,
// paging before, inside and past the end, every filter shape, and the
// not-found answers.
func apiRequests() []request {
	const base = "/api/v1/customer/"
	var reqs []request
	get := func(format string, args ...any) {
		reqs = append(reqs, request{http.MethodGet, base + fmt.Sprintf(format, args...), ""})
	}
	heights := []uint64{storetest.PolygonBlock - 1, storetest.PolygonBlock, storetest.PolygonEmptyBlock,
		storetest.PolygonLaterBlock, storetest.PolygonLaterBlock + 1, storetest.EthereumBlock}
	for _, c := range chainquery.EVMChains {
		get("%s/blocks/latest", c)
	}
	// The indexed chains, and one with nothing indexed (404s).
	for _, c := range []chainquery.Chain{chainquery.Polygon, chainquery.Ethereum, chainquery.Base} {
		for _, n := range heights {
			get("%s/block?block_number=%d", c, n)
			get("%s/block?block_number=%d&full_transactions=true", c, n)
			get("%s/blocks/receipts?block_number=%d", c, n)
			for _, page := range []string{"limit=1", "limit=2&offset=3", "offset=4", "offset=5", "limit=50&offset=100"} {
				get("%s/blocks/receipts?block_number=%d&%s", c, n, page)
			}
		}
		for _, h := range []chainquery.Hash{storetest.TxNested, storetest.TxReverted, storetest.TxCreate, storetest.TxSuicide,
			storetest.TxTransfer, storetest.TxLater, storetest.TxEthereum, storetest.H(storetest.TagTx, 200)} {
			get("%s/transactions/%s/logs", c, h)
			for _, q := range []string{"limit=2&offset=1", "offset=5", "block_number=%d", "block_number=%d&limit=1&offset=4"} {
				for _, n := range []uint64{storetest.PolygonBlock, storetest.EthereumBlock} {
					query := q
					if strings.Contains(q, "%d") {
						query = fmt.Sprintf(q, n)
					}
					get("%s/transactions/%s/logs?%s", c, h, query)
				}
			}
		}
	}

	// Filter Traces: block and datetime ranges, every address shape, pages.
	addr := func(a chainquery.Address) string { return `"` + a.Hex() + `"` }
	list := func(as ...chainquery.Address) string {
		s := make([]string, len(as))
		for i, a := range as {
			s[i] = addr(a)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	ranges := []string{
		fmt.Sprintf(`"from_block":%d,"to_block":%d`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
		fmt.Sprintf(`"from_block":%d,"to_block":%d`, storetest.PolygonEmptyBlock, storetest.PolygonEmptyBlock+99),
		`"from_block":1,"to_block":100`,
		`"from_datetime":"2025-03-01T00:00:00Z","to_datetime":"2025-03-01T00:00:04Z"`,
		`"from_datetime":"2025-03-01T00:00:00.5Z","to_datetime":"2025-03-01T01:00:00+01:00"`,
		`"from_datetime":"2024-12-01T00:00:00Z","to_datetime":"2025-12-01T00:00:00Z"`,
	}
	filters := []string{"",
		`,"from_address":` + addr(storetest.Router),
		`,"from_address":` + list(storetest.EOA2, storetest.Router),
		`,"to_address":` + list(storetest.Token, storetest.EOA2),
		`,"to_address":` + addr(storetest.Router),
		`,"from_address":` + list(storetest.EOA1, storetest.EOA2) + `,"to_address":` + list(storetest.Router, storetest.Failing),
		`,"from_address":` + addr(storetest.Oracle) + `,"to_address":` + addr(storetest.Router),
		`,"from_address":` + addr(storetest.Addr(0x99)),
	}
	for _, rg := range ranges {
		for _, f := range filters {
			for _, page := range []string{"", "?limit=50", "?limit=3&offset=11", "?limit=5&offset=20", "?offset=23"} {
				reqs = append(reqs, request{http.MethodPost, base + "polygon/traces/filter" + page, "{" + rg + f + "}"})
			}
		}
	}

	// Token balances at every grid point of the fixture's hour, with and
	// without metadata, for every account.
	for _, acct := range []chainquery.PublicKey{storetest.WalletAcct, storetest.OrphanAcct, storetest.ClosedAcct, storetest.UnknownAcct} {
		for ts := storetest.SolanaT0.Truncate(time.Hour); !ts.After(now); ts = ts.Add(10 * time.Minute) {
			for _, meta := range []string{"", "&include_metadata=true"} {
				get("solana/token-balances/token-account/%s?datetime_filter=%s%s", acct, ts.Format(time.RFC3339), meta)
			}
		}
	}
	return reqs
}

// TestSameDomainValues compares what the two stores return as Go values,
// before any rendering: the JSON encoding of the domain types tells nil from
// empty and shows every field.
func TestSameDomainValues(t *testing.T) {
	p := newStorePair(t)
	ctx := context.Background()
	same := func(what string, call func(s chainquery.Store) (any, error)) {
		t.Helper()
		a, errA := call(p.sqlite)
		b, errB := call(p.postgres)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if chainquery.ErrorCode(errA) != chainquery.ErrorCode(errB) || chainquery.ErrorMessage(errA) != chainquery.ErrorMessage(errB) || !bytes.Equal(ja, jb) {
			t.Errorf("%s:\nsqlite   %s %v\npostgres %s %v", what, ja, errA, jb, errB)
		}
	}
	for _, n := range []uint64{storetest.PolygonBlock, storetest.PolygonEmptyBlock, storetest.PolygonLaterBlock, 1} {
		same(fmt.Sprint("block ", n), func(s chainquery.Store) (any, error) { return s.FindBlock(ctx, chainquery.Polygon, n, true) })
		same(fmt.Sprint("hash ", n), func(s chainquery.Store) (any, error) { return s.BlockHash(ctx, chainquery.Polygon, n) })
	}
	from, to := storetest.PolygonBlock, storetest.PolygonLaterBlock
	same("traces", func(s chainquery.Store) (any, error) {
		tr, n, err := s.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &from, ToBlock: &to, Page: chainquery.Page{Limit: 50}})
		return []any{tr, n}, err
	})
	same("logs", func(s chainquery.Store) (any, error) {
		l, n, err := s.FindTransactionLogs(ctx, chainquery.LogFilter{Chain: chainquery.Polygon, TransactionHash: storetest.TxNested, Page: chainquery.Page{Limit: 50}})
		return []any{l, n}, err
	})
	same("receipts", func(s chainquery.Store) (any, error) {
		r, n, err := s.FindBlockReceipts(ctx, chainquery.ReceiptFilter{Chain: chainquery.Polygon, BlockNumber: from, Page: chainquery.Page{Limit: 50}})
		return []any{r, n}, err
	})
	same("balance", func(s chainquery.Store) (any, error) {
		return s.FindTokenBalance(ctx, chainquery.TokenBalanceFilter{Account: storetest.WalletAcct, At: storetest.SolanaCursorTime, IncludeMetadata: true})
	})
	same("keys", func(s chainquery.Store) (any, error) { return s.ListAPIKeys(ctx) })
	same("latest", func(s chainquery.Store) (any, error) { return s.LatestBlock(ctx, chainquery.Base) })
}
