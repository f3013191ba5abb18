package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestHashIndexUpgrade opens a database made before migration 0019, whose
// history_tx_hashes and recent_tx_hashes hold the hash index, and checks
// that the migration made each chain's rows of each one run
// (storetest.CheckHashIndexUpgrade).
func TestHashIndexUpgrade(t *testing.T) {
	db := openOld(t, "migration/0019", func(ctx context.Context, conn *pgx.Conn) error {
		cols := []string{"chain", "prefix", "block_number"}
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"history_tx_hashes"}, cols, pgx.CopyFromRows(storetest.OldHashRows())); err != nil {
			return err
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"recent_tx_hashes"}, cols, pgx.CopyFromRows(storetest.OldRecentHashRows()))
		return err
	})
	storetest.CheckHashIndexUpgrade(t, db.Write)
}
