package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestSolanaCursorUpgrade opens a database made before the cursor recorded a
// blockhash (only 0001_init.sql applied) that holds a cursor
// (storetest.CheckCursorUpgrade).
func TestSolanaCursorUpgrade(t *testing.T) {
	db := openOld(t, "migration/0002", func(ctx context.Context, conn *pgx.Conn) error {
		c := storetest.OldCursor
		_, err := conn.Exec(ctx, `INSERT INTO solana_cursor (id, slot, block_time) VALUES (1, $1, $2)`, int64(c.Slot), c.BlockTime.UnixMilli())
		return err
	})
	storetest.CheckCursorUpgrade(t, db)
}
