// Package sqltest reads whole tables in tests that compare databases row for
// row, whatever their columns, and builds the databases of upgrade tests.
package sqltest

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// Rows runs query on db and returns every row, each column as the driver
// gives it. It fails tb on any error.
func Rows(tb testing.TB, db *sql.DB, query string, args ...any) [][]any {
	tb.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// ApplyBefore runs apply on each migration of the calling package's
// migration/*.sql whose name sorts before before, in name order, with its
// name and text: how the stores' upgrade tests build a database as an
// earlier release left it. It fails tb on any error.
func ApplyBefore(tb testing.TB, before string, apply func(name, body string) error) {
	tb.Helper()
	names, err := filepath.Glob("migration/*.sql") // in name order
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range names {
		if name >= before {
			break
		}
		body, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		if err := apply(name, string(body)); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
}
