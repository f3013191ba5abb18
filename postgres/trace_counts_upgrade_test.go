package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestTraceCountsUpgrade opens a database made before trace_counts was keyed
// by bucket first (every migration before 0010 applied) and checks that the
// migration kept its rows (storetest.CheckTraceCountsUpgrade).
func TestTraceCountsUpgrade(t *testing.T) {
	var dsn string
	openOld(t, "migration/0010", func(ctx context.Context, conn *pgx.Conn) error {
		dsn = conn.Config().ConnString()
		for _, r := range storetest.OldTraceCounts {
			if _, err := conn.Exec(ctx, `INSERT INTO trace_counts (chain, dir, address, bucket, n, list) VALUES ($1, $2, $3, $4, $5, $6)`, r...); err != nil {
				return err
			}
		}
		return nil
	})
	storetest.CheckTraceCountsUpgrade(t, func(ctx context.Context) ([][]any, error) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return nil, err
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT chain::bigint, dir::bigint, address, bucket, n, list FROM trace_counts
			ORDER BY chain, bucket, dir, address`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return storetest.ScanTraceCounts(rows)
	})
}
