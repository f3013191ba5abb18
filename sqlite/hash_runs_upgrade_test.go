package sqlite_test

import (
	"database/sql"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestHashIndexUpgrade opens a database made before migration 0019, whose
// history_tx_hashes and recent_tx_hashes hold the hash index, and checks
// that the migration made each chain's rows of each one run
// (storetest.CheckHashIndexUpgrade).
func TestHashIndexUpgrade(t *testing.T) {
	db := openOld(t, "migration/0019", func(old *sql.DB) error {
		tx, err := old.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for _, r := range storetest.OldHashRows() {
			if _, err := tx.Exec(`INSERT INTO history_tx_hashes (chain, prefix, block_number) VALUES (?, ?, ?)`, r...); err != nil {
				return err
			}
		}
		for _, r := range storetest.OldRecentHashRows() {
			if _, err := tx.Exec(`INSERT INTO recent_tx_hashes (chain, prefix, block_number) VALUES (?, ?, ?)`, r...); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	storetest.CheckHashIndexUpgrade(t, db.(*sqlite.DB).Write)
}
