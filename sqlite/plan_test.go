package sqlite

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

var updatePlans = flag.Bool("update", false, "rewrite docs/storage-plans.md from the plans measured")

// TestQueryPlans checks that every read the API makes is an index search
// bounded by what it returns: no full scan of a table, no sort of more than a
// page's candidates. It also writes the plans to docs/storage-plans.md with
// -update, so that the documentation shows what the test checked.
func TestQueryPlans(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "plans.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	// ANALYZE-free planning on an empty database is what a fresh install
	// gets; the plans must be right without statistics.
	a1, a2 := make([]byte, 20), make([]byte, 20)
	a2[0] = 1
	lo, hi := uint64(100), uint64(199)
	page := chainquery.Page{Offset: 20, Limit: 10}
	traceQ := func(from, to []chainquery.Address) *traceQuery {
		return newTraceQuery(137, lo, hi, chainquery.TraceFilter{FromAddresses: from, ToAddresses: to, Page: page})
	}
	x, y := chainquery.Address{1}, chainquery.Address{2}
	type query struct {
		name string
		sql  string
		args []any
		// sorts is how many temporary sorts the plan may use: only the merge
		// of per-address walks may sort, each of at most offset+limit rows.
		sorts int
		// seek is set where a plan on the chain key alone is a min/max seek.
		seek bool
	}
	var queries []query
	for _, c := range []struct {
		name     string
		from, to []chainquery.Address
		sorts    int
	}{
		{"no address", nil, nil, 0},
		{"from_address (2)", []chainquery.Address{x, y}, nil, 2},
		{"to_address (2)", nil, []chainquery.Address{x, y}, 2},
		{"from_address and to_address", []chainquery.Address{x}, []chainquery.Address{y}, 1},
	} {
		q := traceQ(c.from, c.to)
		queries = append(queries, query{"Filter Traces count, " + c.name, q.countSQL(), q.countArgs(), 0, false})
		s, args := q.pageSQL()
		queries = append(queries, query{"Filter Traces page, " + c.name, s, args, c.sorts, false})
	}
	queries = append(queries,
		query{"datetime range start", qFirstBlockAtOrAfter, []any{137, 0}, 0, false},
		query{"datetime range end", qLastBlockAtOrBefore, []any{137, 0}, 0, false},
		query{"Get Transaction Logs: the transaction", qLogTransaction, []any{1, a1, nil}, 0, false},
		query{"Get Transaction Logs: the transaction in a given block", qLogTransaction, []any{1, a1, 5}, 0, false},
		query{"Get Transaction Logs: the page", qLogPage, []any{1, 1, 1, 10, 0}, 0, false},
		query{"Get Block Receipts: the block", qReceiptBlock, []any{1, 1}, 0, false},
		query{"Get Block Receipts: the page", qReceiptPage, []any{1, 1, 10, 0}, 0, false},
		query{"Get Block", qBlock, []any{137, 1}, 0, false},
		query{"Get Block: transactions", qBlockTransactions, []any{137, 1}, 0, false},
		query{"Get Latest Block (a min/max seek)", qLatestBlock, []any{1}, 0, true},
		query{"Token Balance by Account", qTokenBalance, []any{a2, time.Now().UnixMilli()}, 0, false},
		query{"API key lookup", qAPIKeyByHash, []any{a1}, 0, false},
	)

	var doc strings.Builder
	doc.WriteString("# Query plans\n\nWritten by `go test ./sqlite -run TestQueryPlans -update`; the test fails if a plan scans a whole table or all of a chain's rows, or sorts more than the candidates of one page (offset + limit rows per address walked).\n")
	for _, q := range queries {
		plan, err := explain(ctx, db, q.sql, q.args)
		if err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
		for _, line := range plan {
			if fullScan.MatchString(line) || !q.seek && chainScan.MatchString(line) {
				t.Errorf("%s: full scan: %s\n%s", q.name, line, strings.Join(plan, "\n"))
			}
		}
		if n := strings.Count(strings.Join(plan, "\n"), "USE TEMP B-TREE"); n > q.sorts {
			t.Errorf("%s: %d sorts, want at most %d:\n%s", q.name, n, q.sorts, strings.Join(plan, "\n"))
		}
		fmt.Fprintf(&doc, "\n## %s\n\n```\n%s\n```\n", q.name, strings.Join(plan, "\n"))
	}
	if *updatePlans {
		if err := os.WriteFile("../docs/storage-plans.md", []byte(doc.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fullScan matches a plan step that reads a whole table or index. Scanning
// the materialized page (at most 50 rows) is fine.
var fullScan = regexp.MustCompile(`\bSCAN (blocks|transactions|logs|traces|token_balances|api_keys|tokens)\b`)

// chainScan matches a search on the chain key alone: a walk over all of a
// chain's rows.
var chainScan = regexp.MustCompile(`\(chain=\?\)$`)

func explain(ctx context.Context, db *DB, q string, args []any) ([]string, error) {
	rows, err := db.rdb.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	depth := map[int]int{}
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		depth[id] = depth[parent] + 1
		out = append(out, strings.Repeat("  ", depth[id]-1)+detail)
	}
	return out, rows.Err()
}
