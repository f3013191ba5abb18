package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestHashIndexUpgrade opens a database made before migration 0019, whose
// history_tx_hashes holds the hash index, and checks that the migration
// made each chain's rows one run (storetest.CheckHashIndexUpgrade).
func TestHashIndexUpgrade(t *testing.T) {
	db := openOld(t, "migration/0019", func(ctx context.Context, conn *pgx.Conn) error {
		rows := storetest.OldHashRows()
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"history_tx_hashes"}, []string{"chain", "prefix", "block_number"}, pgx.CopyFromRows(rows))
		return err
	})
	storetest.CheckHashIndexUpgrade(t, db.Write)
}
