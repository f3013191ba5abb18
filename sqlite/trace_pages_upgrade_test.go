package sqlite_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestTracePagesUpgrade opens a database made before trace_pages (every
// migration before 0017 applied), whose trace_counts hold the posting
// lists of history, and checks that the migration moved them into pages
// and kept the counts of the rows' traces
// (storetest.CheckTracePagesUpgrade).
func TestTracePagesUpgrade(t *testing.T) {
	var path string
	openOld(t, "migration/0017", func(old *sql.DB) error {
		for _, r := range storetest.OldTracePagesHistory {
			if _, err := old.Exec(`INSERT INTO history (chain, below, logs_from, hashes_merged) VALUES (?, ?, ?, ?)`, r...); err != nil {
				return err
			}
		}
		for _, r := range storetest.OldTracePageRows() {
			if _, err := old.Exec(`INSERT INTO trace_counts (chain, dir, address, bucket, n, list) VALUES (?, ?, ?, ?, ?, ?)`, r...); err != nil {
				return err
			}
		}
		return old.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path)
	})
	storetest.CheckTracePagesUpgrade(t, func(ctx context.Context) (pages, counts [][]any, err error) {
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			return nil, nil, err
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, `SELECT chain, dir, part, bucket, keys, lists FROM trace_pages`)
		if err != nil {
			return nil, nil, err
		}
		defer rows.Close()
		if pages, err = storetest.ScanTracePages(rows); err != nil {
			return nil, nil, err
		}
		rows, err = db.QueryContext(ctx, `SELECT chain, dir, address, bucket, n, list FROM trace_counts`)
		if err != nil {
			return nil, nil, err
		}
		defer rows.Close()
		counts, err = storetest.ScanTraceCounts(rows)
		return pages, counts, err
	})
}
