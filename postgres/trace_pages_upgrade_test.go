package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestTracePagesUpgrade opens a database made before trace_pages (every
// migration before 0017 applied), whose trace_counts hold the posting
// lists of history, and checks that the migration moved them into pages
// and kept the counts of the rows' traces
// (storetest.CheckTracePagesUpgrade).
func TestTracePagesUpgrade(t *testing.T) {
	var dsn string
	openOld(t, "migration/0017", func(ctx context.Context, conn *pgx.Conn) error {
		dsn = conn.Config().ConnString()
		for _, r := range storetest.OldTracePagesHistory {
			if _, err := conn.Exec(ctx, `INSERT INTO history (chain, below, logs_from, hashes_merged) VALUES ($1, $2, $3, $4)`, r...); err != nil {
				return err
			}
		}
		for _, r := range storetest.OldTracePageRows() {
			if _, err := conn.Exec(ctx, `INSERT INTO trace_counts (chain, dir, address, bucket, n, list) VALUES ($1, $2, $3, $4, $5, $6)`, r...); err != nil {
				return err
			}
		}
		return nil
	})
	storetest.CheckTracePagesUpgrade(t, func(ctx context.Context) (pages, counts [][]any, err error) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return nil, nil, err
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT chain::bigint, dir::bigint, part::bigint, bucket, keys, lists FROM trace_pages`)
		if err != nil {
			return nil, nil, err
		}
		pages, err = storetest.ScanTracePages(rows)
		rows.Close()
		if err != nil {
			return nil, nil, err
		}
		rows, err = conn.Query(ctx, `SELECT chain::bigint, dir::bigint, address, bucket, n, list FROM trace_counts`)
		if err != nil {
			return nil, nil, err
		}
		defer rows.Close()
		counts, err = storetest.ScanTraceCounts(rows)
		return pages, counts, err
	})
}
