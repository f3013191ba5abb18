package sqlite_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestTraceCountsUpgrade opens a database made before trace_counts was keyed
// by bucket first (every migration before 0010 applied) and checks that the
// migration kept its rows (storetest.CheckTraceCountsUpgrade).
func TestTraceCountsUpgrade(t *testing.T) {
	var path string
	openOld(t, "migration/0010", func(old *sql.DB) error {
		for _, r := range storetest.OldTraceCounts {
			if _, err := old.Exec(`INSERT INTO trace_counts (chain, dir, address, bucket, n, list) VALUES (?, ?, ?, ?, ?, ?)`, r...); err != nil {
				return err
			}
		}
		return old.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path)
	})
	storetest.CheckTraceCountsUpgrade(t, func(ctx context.Context) ([][]any, error) {
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			return nil, err
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, `SELECT chain, dir, address, bucket, n, list FROM trace_counts`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return storetest.ScanTraceCounts(rows)
	})
}
