package driverbench

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlite"
	"github.com/chainquery/chainquery/sqlstore"
)

// BenchmarkDriverReads runs the API's heaviest SQLite reads through each
// driver on one database: the store's own statements (sqlite.Statements),
// on nBlocks Polygon-shaped blocks written by the store itself, read by a
// pool of four connections from parallel goroutines (b.RunParallel), as
// serve reads. Rows are scanned into any, the same for both drivers, so the
// figures compare the drivers and the engine, not the store's scanning.
func BenchmarkDriverReads(b *testing.B) {
	path := filepath.Join(b.TempDir(), "reads.db")
	db, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	data := blocks(b)
	for j := 0; j < len(data); j += perWrite {
		if err := db.WriteBlocks(context.Background(), chainquery.Polygon, data[j:j+perWrite]); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	// The hottest recipient of the second bucket, the benchmark's "hot"
	// to_address.
	first := data[0].Block.Number
	lo, hi := first+100, first+199
	hot := hottestRecipient(data, lo, hi)

	q := sqlite.Dialect()
	named := map[string]string{} // the shared statements, bound for SQLite
	for _, p := range sqlstore.PlanQueries(&q, lo, hi, chainquery.Page{Limit: 50}, chainquery.Address{}, chainquery.Address{}, sqlstore.PlanArgs{}) {
		named[p.Name] = p.SQL
	}
	page := func(to []chainquery.Address) func() (string, []any) {
		return func() (string, []any) {
			f := chainquery.TraceFilter{Chain: chainquery.Polygon, ToAddresses: to, Page: chainquery.Page{Limit: 50}}
			return q.TracePage(sqlstore.NewTracePlan(137, lo, hi, f))
		}
	}
	reads := []struct {
		name string
		stmt func() (string, []any)
	}{
		{"GetBlock", func() (string, []any) { return named["Get Block"], []any{int64(137), int64(lo)} }},
		{"BlockTransactions", func() (string, []any) { return named["Get Block: transactions"], []any{int64(137), int64(lo)} }},
		{"LatestBlock", func() (string, []any) { return named["Get Latest Block"], []any{int64(137)} }},
		{"FilterTraces100", page(nil)},
		{"FilterTraces100Hot", page([]chainquery.Address{hot})},
	}
	drivers := map[string]string{
		"modernc":   "file:" + path + "?_pragma=cache_size(-16384)&_pragma=query_only(1)&_txlock=deferred",
		"mattn-cgo": "file:" + path + "?_cache_size=-16384&_query_only=1&_txlock=deferred",
	}
	for _, r := range reads {
		for _, driver := range []string{"modernc", "mattn-cgo"} {
			b.Run(r.name+"/"+driver, func(b *testing.B) {
				name := map[string]string{"modernc": "sqlite", "mattn-cgo": "sqlite3"}[driver]
				pool, err := sql.Open(name, drivers[driver])
				if err != nil {
					b.Fatal(err)
				}
				defer pool.Close()
				pool.SetMaxOpenConns(4)
				pool.SetMaxIdleConns(4)
				text, args := r.stmt()
				stmt, err := pool.Prepare(text)
				if err != nil {
					b.Fatal(err)
				}
				defer stmt.Close()
				want := -1
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						n, err := readAll(stmt, args)
						if err != nil {
							b.Error(err)
							return
						}
						if want < 0 {
							want = n
						}
						if n == 0 || n != want {
							b.Errorf("%d rows, want %d and not 0", n, want)
							return
						}
					}
				})
			})
		}
	}
}

// readAll runs stmt and scans every column of every row; it returns the
// number of rows.
func readAll(stmt *sql.Stmt, args []any) (int, error) {
	rows, err := stmt.Query(args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		n++
	}
	return n, rows.Err()
}

// hottestRecipient is the to_addr of the most traces of data's blocks lo
// to hi.
func hottestRecipient(data []*chainquery.BlockData, lo, hi uint64) chainquery.Address {
	counts := map[chainquery.Address]int{}
	var best chainquery.Address
	for _, d := range data {
		if d.Block.Number < lo || d.Block.Number > hi {
			continue
		}
		for _, t := range d.Traces {
			if t.To != nil {
				if counts[*t.To]++; counts[*t.To] > counts[best] {
					best = *t.To
				}
			}
		}
	}
	if counts[best] == 0 {
		panic(fmt.Sprintf("no trace with a recipient in blocks %d-%d", lo, hi))
	}
	return best
}
