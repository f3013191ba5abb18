// Package sqltest reads whole tables in tests that compare databases row for
// row, whatever their columns.
package sqltest

import (
	"database/sql"
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
