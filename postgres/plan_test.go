package postgres

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlstore"
	"github.com/jackc/pgx/v5"
)

var updatePlans = flag.Bool("update", false, "rewrite docs/storage-plans-postgres.md from the plans measured")

// TestQueryPlans checks that every read the API makes is an index search
// bounded by what it returns: no sequential scan of a table, no sort of more
// than a page's candidates, and no join but nested loops of index lookups
// (a join filter or a hash or merge join reads rows it then discards). It
// also writes the plans to docs/storage-plans-postgres.md with -update, so
// that the documentation shows what the test checked.
//
// The planner sees a loaded, ANALYZEd database (plansData) with its default
// settings, sequential scans allowed: on a nearly empty database it rightly
// prefers sequential scans of one-page tables, which would say nothing about
// production. Each statement is checked twice: with its generic plan, the
// one the read pool runs (plan_cache_mode = force_generic_plan, see Open),
// and with the custom plan PostgreSQL would choose for these values, which
// is what runs if an operator overrides that setting. TestReadsWithoutStatistics
// checks the same reads on tables that autovacuum has not analyzed yet.
func TestQueryPlans(t *testing.T) {
	dsn := NewTestDatabase(t, RequireEnv(t, EnvAdminDSN))
	db := MustOpen(t, dsn, Options{})
	ctx := context.Background()
	plansData(t, db, dsn)

	key := chainquery.HashAPIKey("cq_plan")
	owner := planOwner(0)                                  // of accounts 0 to 9
	lo, hi := uint64(planFrom+1950), uint64(planFrom+2149) // across the partition boundary at 69,000,000, with a whole bucket of trace_counts
	plans := sqlstore.PlanQueries(&dialect, lo, hi, chainquery.Page{Offset: 20, Limit: 10}, planAddr(1), planAddr(2),
		sqlstore.PlanArgs{Chain: 137, Time: planTime + 500, TxHash: planTxHash(7), Block: planFrom + 7, TxIndex: 0,
			Account: planKey(7), Owner: owner[:], At: planTime*1000 + 3_600_000, Mint: planKey(7), APIKeyHash: key[:]})

	conn, err := db.write.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var doc strings.Builder
	doc.WriteString("# Query plans (PostgreSQL)\n\nWritten by `scripts/pg run go test ./postgres -run TestQueryPlans -update` " +
		"on a database loaded with " + planDataSummary + " and ANALYZEd, with the planner's default settings " +
		"(sequential scans allowed, not `enable_seqscan = off`). The test fails if a plan scans a table " +
		"sequentially, sorts more than the candidates of one page (an address walk's entries, then their merge), or joins other than by nested loops of " +
		"lookups by key (a join filter, a hash or merge join). Each statement is shown with its generic " +
		"plan, the one the read pool runs (`plan_cache_mode = force_generic_plan`), and with the custom plan " +
		"PostgreSQL would choose for the values shown, which runs if that setting is overridden. " +
		"The joins are written so that their order does not depend on statistics, and " +
		"`TestReadsWithoutStatistics` checks the rows each read's generic plan reads on tables never analyzed " +
		"(docs/storage.md, \"Plans without statistics\").\n")
	for _, q := range plans {
		fmt.Fprintf(&doc, "\n## %s\n", q.Name)
		// Only a page's address walks may sort: each walk its entries, which
		// PostgreSQL does not know its nested loop over the buckets keeps
		// in order (at most offset+limit per bucket, over the buckets the
		// store narrows the range to: Dialect.NarrowWalks), and the merge
		// of several walks, at most 10 × (offset + limit) keys.
		sorts := q.Walks + min(q.Walks, 1)
		if strings.Contains(q.Name, "count") {
			sorts = 0
		}
		for _, mode := range []string{"generic", "custom"} {
			plan, err := explain(ctx, conn.Conn(), mode, q.SQL, q.Args)
			if err != nil {
				t.Fatalf("%s (%s plan): %v", q.Name, mode, err)
			}
			text := strings.Join(plan, "\n")
			if m := seqScan.FindString(text); m != "" {
				t.Errorf("%s (%s plan): %s\n%s", q.Name, mode, m, text)
			}
			if n := len(sortNode.FindAllString(text, -1)) - len(bucketSort.FindAllString(text, -1)); n > sorts {
				t.Errorf("%s (%s plan): %d sorts, want at most %d:\n%s", q.Name, mode, n, sorts, text)
			}
			// The generic plan is the one that runs; the custom plan of
			// these tables, never vacuumed (plansData), rightly prefers
			// the rows to an index whose every entry is checked in them.
			if q.IndexOnly && mode == "generic" && !strings.Contains(text, "Index Only Scan using blocks_counts") {
				t.Errorf("%s (%s plan): reads the blocks' rows, not blocks_counts alone:\n%s", q.Name, mode, text)
			}
			if m := filteredJoin.FindString(text); m != "" {
				t.Errorf("%s (%s plan): %s, want nested loops of index lookups:\n%s", q.Name, mode, m, text)
			}
			fmt.Fprintf(&doc, "\n%s plan:\n\n```\n%s\n```\n", mode, text)
		}
	}
	if *updatePlans {
		if err := os.WriteFile("../docs/storage-plans-postgres.md", []byte(doc.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// seqScan matches a sequential scan of a table of the schema or of one of
// its partitions.
var seqScan = regexp.MustCompile(`Seq Scan on (blocks|transactions|logs|traces|orphaned_blocks|token_balances|tokens|api_keys)\w*`)

// filteredJoin matches a join that reads rows it then discards, or reads
// one side whole: a join filter, a hash join, a merge join.
var filteredJoin = regexp.MustCompile(`Join Filter|Hash Join|Merge Join`)

// sortNode matches a sort step of a plan (Sort, Incremental Sort).
var sortNode = regexp.MustCompile(`(?m)^\s*(->\s+)?(Incremental )?Sort$`)

// bucketSort matches a sort of the buckets of a search of trace_counts one
// bucket at a time (postgres/trace.go, bucketRow): one row per bucket of
// the range, however many matches, and not counted as a sort.
var bucketSort = regexp.MustCompile(`(?m)^\s*(->\s+)?Sort\n\s*Sort Key: k\.b$`)

// explain returns the plan of q with args: the custom plan, planned for
// these values, or the generic one, planned for any values.
func explain(ctx context.Context, conn *pgx.Conn, mode, q string, args []any) ([]string, error) {
	var rows pgx.Rows
	var err error
	if mode == "custom" {
		rows, err = conn.Query(ctx, "EXPLAIN (COSTS OFF) "+q, args...)
	} else {
		// A prepared statement planned generically; EXPLAIN EXECUTE shows
		// that plan for arguments given as literals.
		if _, err := conn.Exec(ctx, "PREPARE plan_q AS "+q); err != nil {
			return nil, err
		}
		defer conn.Exec(context.Background(), "DEALLOCATE plan_q")
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
			return nil, err
		}
		defer conn.Exec(context.Background(), "RESET plan_cache_mode")
		lits := make([]string, len(args))
		for i, a := range args {
			lits[i] = literal(a)
		}
		rows, err = conn.Query(ctx, "EXPLAIN (COSTS OFF) EXECUTE plan_q("+strings.Join(lits, ", ")+")")
	}
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// literal writes an argument as SQL text.
func literal(a any) string {
	switch v := a.(type) {
	case nil:
		return "NULL"
	case []byte:
		return `'\x` + hex.EncodeToString(v) + `'::bytea`
	case [][]byte:
		s := make([]string, len(v))
		for i, b := range v {
			s[i] = literal(b)
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

// The plans' data set: planBlocks polygon blocks from planFrom, across a
// partition boundary, each a copy of the fixture's busiest block with its
// own transaction hashes and addresses spread over many values, plus token
// balances, tokens and API keys.
const (
	planFrom        = 68_998_000
	planBlocks      = 4000
	planTime        = int64(1_740_787_200) // 2025-03-01T00:00:00Z
	planDataSummary = "4,000 polygon blocks across two partitions (80,000 traces, 20,000 transactions and logs), " +
		"20,000 token balances of 2,000 accounts, 2,000 tokens and 2,000 API keys"
)

func planAddr(n int) chainquery.Address {
	var a chainquery.Address
	a[0], a[1], a[2] = 0xaa, byte(n), byte(n>>8)
	return a
}

func planKey(n int) []byte {
	k := storetest.Key(0x44, byte(n))
	k[2] = byte(n >> 8)
	return k[:]
}

func planOwner(n int) chainquery.PublicKey {
	k := storetest.Key(0x45, byte(n))
	k[2] = byte(n >> 8)
	return k
}

func planTxHash(n int) []byte {
	h := storetest.H(storetest.TagTx, byte(n))
	h[2], h[3] = byte(n>>8), byte(n>>16)
	return h[:]
}

// plansData writes the plans' data set into db, the store on dsn, and
// ANALYZEs it. Its statistics and sizes are the same on every run, so that
// the plans are: autovacuum is off (DisableAutovacuum), which would else
// vacuum or analyze the tables at a moment of its own, and ANALYZE reads
// every row.
//
// Most of the rows written are deleted again: the write turns blocks more
// than TipBlocks below the highest into history, so that the range the
// plans read lies in history and its partitions hold dead rows only. The
// plans are those of tables that have not been vacuumed since.
func plansData(t *testing.T, db *DB, dsn string) {
	t.Helper()
	ctx := context.Background()
	DisableAutovacuum(t, dsn, planFrom, planFrom+planBlocks-1)
	for start := 0; start < planBlocks; start += 500 {
		var batch []*chainquery.BlockData
		for i := start; i < start+500; i++ {
			d := storetest.Blocks()[chainquery.Polygon][0]
			n := uint64(planFrom + i)
			d.Block.Number, d.Block.Timestamp = n, planTime+2*int64(i)
			for j, tx := range d.Transactions {
				copy(tx.Hash[:], planTxHash(i*8+j))
				tx.BlockNumber = n
			}
			for j, tr := range d.Traces {
				tr.BlockNumber = n
				tr.From = planAddr((i*31 + j) % 500)
				to := planAddr((i*17 + j) % 700)
				tr.To = &to
			}
			batch = append(batch, d)
		}
		if err := db.WriteBlocks(ctx, chainquery.Polygon, batch); err != nil {
			t.Fatal(err)
		}
	}
	var changes []*chainquery.TokenBalanceChange
	sol := &chainquery.SOLChanges{First: chainquery.SolanaCursor{Slot: 250_000_000, BlockTime: time.UnixMilli(planTime * 1000)}}
	for i := 0; i < 20_000; i++ {
		var acct, mint chainquery.PublicKey
		copy(acct[:], planKey(i%2000))
		copy(mint[:], planKey(i%50))
		owner := planOwner(i % 2000 / 10) // 200 owners of 10 accounts each
		changes = append(changes, &chainquery.TokenBalanceChange{Account: acct, Owner: &owner, Mint: mint, Amount: uint64(i),
			Slot: uint64(250_000_000 + i), TxIndex: i % 7, BlockTime: time.UnixMilli(planTime*1000 + int64(i)*400)})
		sol.Changes = append(sol.Changes, &chainquery.SOLBalanceChange{Account: acct, Slot: uint64(250_000_000 + i),
			BlockTime: time.UnixMilli(planTime*1000 + int64(i)*400), Lamports: uint64(i)})
	}
	if err := db.WriteSolana(ctx, &chainquery.SolanaWrite{Tokens: changes, SOL: sol, Cursor: chainquery.SolanaCursor{Slot: 250_020_000, BlockTime: time.UnixMilli(planTime*1000 + 8_000_000)}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO tokens SELECT sha256(int4send(i)), 'token ' || i, 'T' || i, 6 FROM generate_series(1, 2000) i`,
		`INSERT INTO api_keys SELECT 'key ' || i, sha256(int4send(i)), 'get_block', 0 FROM generate_series(1, 2000) i`,
		// Four runs of the hash index, 4,000 pages each, of a store about
		// 80,000 blocks long.
		`INSERT INTO tx_hash_runs SELECT 137, 1000 + r, 1, 60000000 + r * 20000, 60019999 + r * 20000, 256000 FROM generate_series(1, 4) r`,
		`INSERT INTO tx_hash_pages SELECT 137, 1000 + r, -9223372036854775807 + p * 2305843009213693, decode(repeat('00', 768), 'hex')
			FROM generate_series(1, 4) r, generate_series(0, 3999) p`,
	} {
		if _, err := db.write.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	CheckAutovacuumOff(t, dsn)
	// ANALYZE reads a sample of 300 × the statistics target rows of a
	// table, drawn at random when it holds more, and then the plans would
	// depend on the sample. Here trace_counts holds 48,040 rows, and
	// traces 20,000 in a partition that half its pages hold (the sample of
	// a partitioned table is shared among the partitions by their pages).
	// A target of 1000 on their chain column makes the sample read every
	// row, and leaves the statistics of every column as detailed as the
	// default target makes them: chain holds one value, whatever its
	// target, and each other column keeps its own.
	for _, q := range []string{
		`ALTER TABLE trace_counts ALTER COLUMN chain SET STATISTICS 1000`,
		`ALTER TABLE ONLY traces ALTER COLUMN chain SET STATISTICS 1000`,
		`ANALYZE`,
	} {
		if _, err := db.write.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var sampled []string
	if err := db.QueryForTest(ctx, sampledSQL, func(rows pgx.Rows) error {
		var name string
		err := rows.Scan(&name)
		sampled = append(sampled, name)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(sampled) > 0 {
		t.Fatalf("ANALYZE read a random sample of %v: raise the statistics target of their chain column", sampled)
	}
}

// sampledSQL names the tables of the schema whose last ANALYZE read a
// sample of their rows: a table whose rows outnumber 300 × the highest
// statistics target of its columns, or a partitioned table whose sample,
// shared among its partitions by their pages, gives a partition a share
// smaller than its rows.
const sampledSQL = `WITH rel AS (
		SELECT c.oid, c.reltuples, c.relpages, i.inhparent, sum(c.relpages) OVER (PARTITION BY i.inhparent) AS pages
		FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'),
	need AS ( -- the sample that reads every row
		SELECT oid, reltuples AS n FROM rel
		UNION ALL
		SELECT inhparent, reltuples * pages / relpages FROM rel WHERE inhparent IS NOT NULL AND relpages > 0)
	SELECT oid::regclass::text FROM need
	GROUP BY oid
	HAVING max(n) > 300 * (SELECT max(coalesce(nullif(a.attstattarget, -1), current_setting('default_statistics_target')::int))
		FROM pg_attribute a WHERE a.attrelid = need.oid AND a.attnum > 0 AND NOT a.attisdropped)
	ORDER BY 1`
