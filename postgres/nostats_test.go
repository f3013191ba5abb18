package postgres_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/polyrows"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/sqlstore"
	"github.com/jackc/pgx/v5"
)

// TestReadsWithoutStatistics writes a Polygon-shaped batch into a fresh
// database, never analyzed (the first run of a user who ingests, then
// queries before autovacuum has come by), and checks every read the API
// makes there: through the store with the read pool's settings, and by the
// rows its generic plan reads, from EXPLAIN ANALYZE. A plan's rows read
// must stay within twice what the statement has to read (a page's keys and
// three rows per key, a count's index entries, a lookup's rows), whatever
// the planner guessed: Filter Traces without an address once read the
// block range's traces once per key of the page here (160 million rows,
// 9 million buffers, 20 s: a 503 past the 5 s statement timeout).
func TestReadsWithoutStatistics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dsn := postgres.NewTestDatabase(t, postgres.RequireEnv(t, postgres.EnvAdminDSN))
	db := postgres.MustOpen(t, dsn, postgres.Options{StatementTimeout: 5 * time.Second}) // serve's default
	conn := mustConnect(t, dsn)

	// The benchmark's shape: 30 blocks of about 20 transactions, 5,180
	// traces, written as one batch.
	c, err := polychain.New(polychain.Config{Seed: 1, Blocks: 30, TxPerBlock: 20})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := c.First(), c.Last()
	// Autovacuum must not analyze the tables, or vacuum them, while the
	// test runs.
	postgres.DisableAutovacuum(t, dsn, lo, hi)
	var batch []*chainquery.BlockData
	traces := 0
	for n := lo; n <= hi; n++ {
		d := decodePolygonBlock(t, c, n)
		traces += len(d.Traces)
		batch = append(batch, d)
	}
	if err := db.WriteBlocks(ctx, chainquery.Polygon, batch); err != nil {
		t.Fatal(err)
	}
	var changes []*chainquery.TokenBalanceChange
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range 2000 {
		changes = append(changes, &chainquery.TokenBalanceChange{Account: storetest.Key(0x44, byte(i%200)),
			Mint: storetest.Key(0x45, byte(i%50)), Amount: uint64(i), Decimals: 6, Slot: uint64(350_000_000 + i),
			BlockTime: at.Add(time.Duration(i) * time.Second)})
	}
	cursor := chainquery.SolanaCursor{Slot: 350_002_000, BlockTime: at.Add(2 * time.Hour)}
	if err := db.WriteSolana(ctx, &chainquery.SolanaWrite{Tokens: changes, Cursor: cursor}); err != nil {
		t.Fatal(err)
	}
	var tokens []*chainquery.Token
	for i := range 50 {
		tokens = append(tokens, &chainquery.Token{Mint: storetest.Key(0x45, byte(i)), Name: fmt.Sprint("token ", i),
			Symbol: "T", Decimals: 6})
	}
	if err := db.WriteTokens(ctx, tokens); err != nil {
		t.Fatal(err)
	}
	key := &chainquery.APIKey{Name: "k", Hash: chainquery.HashAPIKey("cq_nostats"), Endpoints: chainquery.Endpoints}
	if err := db.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	postgres.CheckAutovacuumOff(t, dsn)
	var analyzed []string
	if err := conn.QueryRow(ctx, `SELECT coalesce(array_agg(DISTINCT tablename::text), '{}') FROM pg_stats
		WHERE schemaname = current_schema()`).Scan(&analyzed); err != nil {
		t.Fatal(err)
	} else if len(analyzed) > 0 {
		t.Fatalf("tables %v have statistics: the test needs a database never analyzed", analyzed)
	}

	hot, warm := mustAddress(t, c.Callee(1)), mustAddress(t, c.Callee(2))
	tx := c.TxHash(lo+5, 3)
	account, mint := storetest.Key(0x44, 7), storetest.Key(0x45, 7)
	// How many traces name the addresses: what their index walks read.
	var fromHot, fromBoth, toBoth, toWarm int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE from_addr = $1), count(*) FILTER (WHERE from_addr IN ($1, $2)),
		count(*) FILTER (WHERE to_addr IN ($1, $2)), count(*) FILTER (WHERE to_addr = $2) FROM traces`, hot[:], warm[:]).Scan(&fromHot, &fromBoth, &toBoth, &toWarm); err != nil {
		t.Fatal(err)
	}

	// The plans. A page reads its keys (one walk of offset + limit per
	// address; a from+to walk reads the sender's entries until it has
	// them) and three rows per key; a count without addresses reads the
	// range's blocks, one with addresses the index entries of the
	// addresses walked; every other read, a few rows per row it returns.
	page50 := chainquery.Page{Limit: 50}
	page := func(walk int) int { return walk + 3*page50.Limit }
	type check struct {
		name string
		sql  string
		args []any
		want int // rows the statement must read; -1: the rows it returns
	}
	var checks []check
	for _, tc := range []struct {
		name     string
		f        chainquery.TraceFilter
		count    int
		pageRead int
	}{
		{"no address", chainquery.TraceFilter{Page: page50}, int(hi - lo + 1), page(50)},
		{"no address, offset 2000", chainquery.TraceFilter{Page: chainquery.Page{Offset: 2000, Limit: 50}}, int(hi - lo + 1), page(2050)},
		{"from_address (2)", chainquery.TraceFilter{FromAddresses: []chainquery.Address{hot, warm}, Page: page50}, fromBoth, page(2 * 50)},
		{"to_address (2)", chainquery.TraceFilter{ToAddresses: []chainquery.Address{hot, warm}, Page: page50}, toBoth, page(2 * 50)},
		{"from_address and to_address", chainquery.TraceFilter{FromAddresses: []chainquery.Address{hot},
			ToAddresses: []chainquery.Address{warm}, Page: page50}, fromHot, page(fromHot)},
		{"from_address and to_address, walking the recipients", chainquery.TraceFilter{FromAddresses: []chainquery.Address{hot},
			ToAddresses: []chainquery.Address{warm}, Page: page50}, toWarm, page(toWarm)},
	} {
		p := sqlstore.NewTracePlan(chainquery.Polygon.ID(), lo, hi, tc.f)
		if strings.HasSuffix(tc.name, "walking the recipients") {
			p.WalkRecipients()
		}
		q, args := db.Dialect.CountTraces(p)
		checks = append(checks, check{"Filter Traces count, " + tc.name, q, args, tc.count})
		q, args = db.Dialect.TracePage(p)
		checks = append(checks, check{"Filter Traces page, " + tc.name, q, args, tc.pageRead})
	}
	planArgs := sqlstore.PlanArgs{
		Chain: chainquery.Polygon.ID(), Time: c.Time(lo + 7), TxHash: tx[:], Block: int64(lo + 5), TxIndex: 3,
		Account: account[:], At: at.Add(time.Hour).UnixMilli(), Mint: mint[:], APIKeyHash: key.Hash[:]}
	for _, q := range sqlstore.PlanQueries(&db.Dialect, lo, hi, chainquery.Page{Limit: 10}, hot, warm, planArgs) {
		switch {
		case strings.HasPrefix(q.Name, "Filter Traces"): // above, with their bounds
		case strings.HasSuffix(q.Name, "count"):
			// A count of one block's logs or one transaction's traces reads
			// the index entries it counts.
			rows, err := conn.Query(ctx, q.SQL, q.Args...)
			if err != nil {
				t.Fatalf("%s: %v", q.Name, err)
			}
			var n int64
			for rows.Next() {
				vals, err := rows.Values()
				if err != nil {
					t.Fatalf("%s: %v", q.Name, err)
				}
				n = vals[len(vals)-1].(int64) // the count is the last column
			}
			rows.Close()
			checks = append(checks, check{q.Name, q.SQL, q.Args, int(n) + 1})
		case strings.HasPrefix(q.Name, "Filter Logs"):
			// The range's logs, tested one by one against the conditions,
			// then the page's transactions and blocks.
			var rangeLogs int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM logs WHERE chain = $1 AND block_number BETWEEN $2 AND $3`,
				q.Args[0], q.Args[1], q.Args[2]).Scan(&rangeLogs); err != nil {
				t.Fatal(err)
			}
			checks = append(checks, check{q.Name, q.SQL, q.Args, rangeLogs + 3*10})
		default:
			checks = append(checks, check{q.Name, q.SQL, q.Args, -1})
		}
	}
	// The statements on trace_counts and on blocks' trace counts, over a
	// range holding the data's whole bucket (the range starts one): each
	// reads a row per address, or per block, that it adds up or returns.
	for _, q := range sqlstore.PlanQueries(&db.Dialect, lo, lo+sqlstore.TraceCountBlocks-1, chainquery.Page{Limit: 10}, hot, warm, planArgs) {
		switch {
		case strings.Contains(q.Name, "count of whole buckets"):
			checks = append(checks, check{q.Name, q.SQL, q.Args, max(1, len(q.Args)-4)})
		case strings.Contains(q.Name, "by buckets"), strings.Contains(q.Name, "by blocks"):
			checks = append(checks, check{q.Name, q.SQL, q.Args, -1})
		}
	}
	for _, ch := range checks {
		plan := explainAnalyze(ctx, t, conn, ch.sql, ch.args)
		read, want := plan.rowsRead(), ch.want
		if want < 0 {
			want = int(plan.Rows * plan.Loops)
		}
		// A factor of 2 and a few rows: an index scan reads one row past
		// its range to find its end.
		if bound := 2*want + 4; read > float64(bound) {
			t.Errorf("%s: the generic plan read %.0f rows, more than %d:\n%s", ch.name, read, bound, plan.text(""))
		}
	}

	// The store answers them within the read pool's statement timeout.
	blocks := func(f chainquery.TraceFilter) chainquery.TraceFilter {
		f.Chain, f.FromBlock, f.ToBlock = chainquery.Polygon, &lo, &hi
		return f
	}
	times := func(f chainquery.TraceFilter) chainquery.TraceFilter {
		f.Chain, f.FromTime, f.ToTime = chainquery.Polygon, new(time.Unix(c.Time(lo+3), 0)), new(time.Unix(c.Time(lo+12), 0))
		return f
	}
	for name, f := range map[string]chainquery.TraceFilter{
		"no address":              blocks(chainquery.TraceFilter{Page: page50}),
		"no address, offset 2000": blocks(chainquery.TraceFilter{Page: chainquery.Page{Offset: 2000, Limit: 50}}),
		"from_address (2)":        blocks(chainquery.TraceFilter{FromAddresses: []chainquery.Address{hot, warm}, Page: page50}),
		"to_address (2)":          blocks(chainquery.TraceFilter{ToAddresses: []chainquery.Address{hot, warm}, Page: page50}),
		"from_address and to_address": blocks(chainquery.TraceFilter{FromAddresses: []chainquery.Address{hot},
			ToAddresses: []chainquery.Address{warm}, Page: page50}),
		"datetime range, no address": times(chainquery.TraceFilter{Page: page50}),
		"datetime range, to_address": times(chainquery.TraceFilter{ToAddresses: []chainquery.Address{hot}, Page: page50}),
	} {
		page, count, err := db.FindTraces(ctx, f)
		if err != nil {
			t.Errorf("FindTraces, %s: %v", name, err)
		} else if len(page) != min(f.Limit, max(count-f.Offset, 0)) ||
			(f.FromBlock != nil && f.FromAddresses == nil && f.ToAddresses == nil && count != traces) {
			t.Errorf("FindTraces, %s: %d traces, count %d (%d traces written)", name, len(page), count, traces)
		}
	}
	logs := chainquery.LogFilter{Chain: chainquery.Polygon, TransactionHash: tx, Page: chainquery.Page{Limit: 10}}
	if _, _, err := db.FindTransactionLogs(ctx, logs); err != nil {
		t.Errorf("FindTransactionLogs: %v", err)
	}
	receipts := chainquery.ReceiptFilter{Chain: chainquery.Polygon, BlockNumber: lo + 5, Page: chainquery.Page{Limit: 10}}
	if _, _, err := db.FindBlockReceipts(ctx, receipts); err != nil {
		t.Errorf("FindBlockReceipts: %v", err)
	}
	if _, err := db.FindBlock(ctx, chainquery.Polygon, lo+5, true); err != nil {
		t.Errorf("FindBlock: %v", err)
	}
	if n, err := db.LatestBlock(ctx, chainquery.Polygon); err != nil || n != hi {
		t.Errorf("LatestBlock = %d, %v; want %d", n, err, hi)
	}
	balance := chainquery.TokenBalanceFilter{Account: account, At: at.Add(time.Hour), IncludeMetadata: true}
	if b, err := db.FindTokenBalance(ctx, balance); err != nil {
		t.Errorf("FindTokenBalance: %v", err)
	} else if b.TokenName == nil {
		t.Errorf("FindTokenBalance: no token name")
	}
}

// planNode is a node of EXPLAIN (ANALYZE, FORMAT JSON).
type planNode struct {
	Type           string     `json:"Node Type"`
	Relation       string     `json:"Relation Name"`
	Index          string     `json:"Index Name"`
	Rows           float64    `json:"Actual Rows"`
	Loops          float64    `json:"Actual Loops"`
	RemovedFilter  float64    `json:"Rows Removed by Filter"`
	RemovedRecheck float64    `json:"Rows Removed by Index Recheck"`
	RemovedJoin    float64    `json:"Rows Removed by Join Filter"`
	Plans          []planNode `json:"Plans"`
}

// rowsRead is the number of rows the plan's scans read: those they
// returned and those their filters removed, over all their loops (EXPLAIN
// gives both per loop).
func (n *planNode) rowsRead() float64 {
	read := 0.0
	if n.Relation != "" {
		read = (n.Rows + n.RemovedFilter + n.RemovedRecheck) * n.Loops
	}
	for i := range n.Plans {
		read += n.Plans[i].rowsRead()
	}
	return read
}

// text is the plan as an indented tree, for failure messages.
func (n *planNode) text(indent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s", indent, n.Type)
	if n.Index != "" {
		fmt.Fprintf(&b, " using %s", n.Index)
	}
	if n.Relation != "" {
		fmt.Fprintf(&b, " on %s", n.Relation)
	}
	fmt.Fprintf(&b, " (rows=%.0f loops=%.0f", n.Rows, n.Loops)
	if n.RemovedFilter+n.RemovedRecheck+n.RemovedJoin > 0 {
		fmt.Fprintf(&b, " removed=%.0f", n.RemovedFilter+n.RemovedRecheck+n.RemovedJoin)
	}
	b.WriteString(")\n")
	for i := range n.Plans {
		b.WriteString(n.Plans[i].text(indent + "  "))
	}
	return b.String()
}

// explainAnalyze runs sql with args under its generic plan, the one the
// read pool runs (plan_cache_mode = force_generic_plan), and returns the
// plan with what it did.
func explainAnalyze(ctx context.Context, t *testing.T, conn *pgx.Conn, sql string, args []any) *planNode {
	t.Helper()
	if _, err := conn.Exec(ctx, "PREPARE nostats_q AS "+sql); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	defer conn.Exec(context.Background(), "DEALLOCATE nostats_q")
	lits := make([]string, len(args))
	for i, a := range args {
		lits[i] = sqlLiteral(a)
	}
	var out []byte
	q := "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE nostats_q(" + strings.Join(lits, ", ") + ")"
	if err := conn.QueryRow(ctx, q).Scan(&out); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN output %s: %v", out, err)
	}
	return &plans[0].Plan
}

// sqlLiteral writes an argument of the store's statements as SQL text.
func sqlLiteral(a any) string {
	switch v := a.(type) {
	case []byte:
		return `'\x` + hex.EncodeToString(v) + `'::bytea`
	case [][]byte:
		s := make([]string, len(v))
		for i, b := range v {
			s[i] = sqlLiteral(b)
		}
		return "ARRAY[" + strings.Join(s, ", ") + "]"
	case []int64:
		s := make([]string, len(v))
		for i, n := range v {
			s[i] = fmt.Sprint(n)
		}
		return "ARRAY[" + strings.Join(s, ", ") + "]::bigint[]"
	}
	return fmt.Sprint(a)
}

// mustConnect connects to dsn with the planner settings of the store's read
// pool.
func mustConnect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// decodePolygonBlock makes block n of c into rows with the project's
// decoders, from the answers its node would give (trace_block).
func decodePolygonBlock(t *testing.T, c *polychain.Chain, n uint64) *chainquery.BlockData {
	t.Helper()
	d, err := polyrows.Decode(c, n, polychain.KindParity)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustAddress(t *testing.T, s string) chainquery.Address {
	t.Helper()
	a, err := chainquery.ParseAddress("address", s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
