package sqlite_test

import (
	"database/sql"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestLogCountUpgrade opens a database made before migration 0024 and
// checks the blocks' log counts it made (storetest.CheckLogCountUpgrade).
func TestLogCountUpgrade(t *testing.T) {
	db := openOld(t, "migration/0024", func(old *sql.DB) error {
		for n, k := range storetest.OldLogCounts {
			if _, err := old.Exec(`INSERT INTO blocks (chain, number, hash, parent_hash, timestamp, version, transactions_root, state_root,
				receipts_root, miner, size, gas_limit, gas_used, transaction_count, trace_count) VALUES (137, ?, x'01', x'00', 0, 0, x'', x'', x'', x'', 0, 0, 0, 1, 0)`, n); err != nil {
				return err
			}
			for i := range k {
				if _, err := old.Exec(`INSERT INTO logs (chain, block_number, tx_index, log_index, address, data) VALUES (137, ?, 0, ?, x'02', x'')`, n, i); err != nil {
					return err
				}
			}
		}
		_, err := old.Exec(`INSERT INTO history (chain, below) VALUES (137, ?)`, storetest.OldLogCountsBelow)
		return err
	})
	storetest.CheckLogCountUpgrade(t, db.(*sqlite.DB).Write)
}
