package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestLogCountUpgrade opens a database made before migration 0024 and
// checks the blocks' log counts it made (storetest.CheckLogCountUpgrade).
func TestLogCountUpgrade(t *testing.T) {
	db := openOld(t, "migration/0024", func(ctx context.Context, conn *pgx.Conn) error {
		// The logs' partition of the first million blocks, as a write makes it (partition.go).
		if _, err := conn.Exec(ctx, `CREATE TABLE logs_p0 PARTITION OF logs FOR VALUES FROM (0) TO (1000000)`); err != nil {
			return err
		}
		for n, k := range storetest.OldLogCounts {
			if _, err := conn.Exec(ctx, `INSERT INTO blocks (chain, number, hash, parent_hash, timestamp, version, transactions_root, state_root,
				receipts_root, miner, size, gas_limit, gas_used, transaction_count, trace_count) VALUES (137, $1, '\x01', '\x00', 0, 0, '\x', '\x', '\x', '\x', 0, 0, 0, 1, 0)`, n); err != nil {
				return err
			}
			for i := range k {
				if _, err := conn.Exec(ctx, `INSERT INTO logs (chain, block_number, tx_index, log_index, address, data) VALUES (137, $1, 0, $2, '\x02', '\x')`, n, i); err != nil {
					return err
				}
			}
		}
		_, err := conn.Exec(ctx, `INSERT INTO history (chain, below) VALUES (137, $1)`, storetest.OldLogCountsBelow)
		return err
	})
	storetest.CheckLogCountUpgrade(t, db.Write)
}
