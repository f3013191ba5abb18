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

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

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
	// gets; the plans must be right without statistics, whatever the
	// values bound.
	a1, a2 := make([]byte, 20), make([]byte, 20)
	a2[0] = 1
	plans := sqlstore.PlanQueries(&dialect, 100, 199, chainquery.Page{Offset: 20, Limit: 10},
		chainquery.Address{1}, chainquery.Address{2}, sqlstore.PlanArgs{Chain: 137, TxHash: make([]byte, 32), Block: 5,
			TxIndex: 1, Account: a2, Owner: a2, At: 1_748_782_800_000, Mint: a2, APIKeyHash: a1})

	var doc strings.Builder
	doc.WriteString("# Query plans\n\nWritten by `go test ./sqlite -run TestQueryPlans -update`; the test fails if a plan scans a whole table or all of a chain's rows, or sorts more than the candidates of one page (offset + limit rows per address walked).\n")
	for _, q := range plans {
		plan, err := explain(ctx, db, q.SQL, q.Args)
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
		// A plan on the chain key alone is a min/max seek only here (the
		// status's ends of a chain are ORDER BY number LIMIT 1, each way).
		seek := q.Name == "Get Latest Block" || q.Name == "Indexing status: the chain's first and last block" ||
			q.Name == "Indexing status: the first block holding a trace"
		if seek {
			q.Name += " (a min/max seek)"
		}
		for _, line := range plan {
			// A chain's runs of the hash index are a handful by design
			// (sqlstore/hash_runs.go): walking them is the lookup.
			runs := strings.Contains(line, "SEARCH r USING PRIMARY KEY (chain=?)") && strings.Contains(q.SQL, "tx_hash_runs r")
			if fullScan.MatchString(line) || !seek && !runs && chainScan.MatchString(line) {
				t.Errorf("%s: full scan: %s\n%s", q.Name, line, strings.Join(plan, "\n"))
			}
			if !seek && bucketScan.MatchString(line) {
				t.Errorf("%s: reads every address's rows of its buckets: %s\n%s", q.Name, line, strings.Join(plan, "\n"))
			}
		}
		if q.IndexOnly && !strings.Contains(strings.Join(plan, "\n"), "COVERING INDEX blocks_counts") {
			t.Errorf("%s: reads the blocks' rows, not blocks_counts alone:\n%s", q.Name, strings.Join(plan, "\n"))
		}
		// Only the merge of per-address walks may sort, each walk's at
		// most offset+limit rows.
		if n := strings.Count(strings.Join(plan, "\n"), "USE TEMP B-TREE"); n > q.Walks {
			t.Errorf("%s: %d sorts, want at most %d:\n%s", q.Name, n, q.Walks, strings.Join(plan, "\n"))
		}
		fmt.Fprintf(&doc, "\n## %s\n\n```\n%s\n```\n", q.Name, strings.Join(plan, "\n"))
	}
	if *updatePlans {
		if err := os.WriteFile("../docs/storage-plans.md", []byte(doc.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// updatePlans: go test ./sqlite -run TestQueryPlans -update
var updatePlans = flag.Bool("update", false, "rewrite docs/storage-plans.md from the plans measured")

// fullScan matches a plan step that reads a whole table or index. Scanning
// the materialized page (at most 50 rows) is fine.
var fullScan = regexp.MustCompile(`\bSCAN (blocks|transactions|logs|traces|token_balances|api_keys|tokens)\b`)

// chainScan matches a search on the chain key alone: a walk over all of a
// chain's rows.
var chainScan = regexp.MustCompile(`\(chain=\?\)$`)

// bucketScan matches a search of trace_counts (keyed by bucket first) on a
// range of buckets: it reads every address's rows of the range, where a
// search per bucket (sqlite/trace.go, bucketSeries) reads the one row of
// each bucket that it needs.
var bucketScan = regexp.MustCompile(`USING PRIMARY KEY \(chain=\? AND bucket[<>]`)

func explain(ctx context.Context, db *DB, q string, args []any) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
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
