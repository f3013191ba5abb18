package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
)

// TestSolanaCursorUpgrade opens a database made before the cursor recorded a
// blockhash (only 0001_init.sql applied) that holds a cursor
// (storetest.CheckCursorUpgrade).
func TestSolanaCursorUpgrade(t *testing.T) {
	dsn := postgres.NewTestDatabase(t, postgres.RequireEnv(t, postgres.EnvAdminDSN))
	ctx := context.Background()
	init, err := os.ReadFile("migration/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Without arguments, Exec sends the statements as one simple query.
	if _, err := conn.Exec(ctx, string(init)+`;
		CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO schema_migrations (name) VALUES ('migration/0001_init.sql')`); err != nil {
		t.Fatal(err)
	}
	c := storetest.OldCursor
	if _, err := conn.Exec(ctx, `INSERT INTO solana_cursor (id, slot, block_time) VALUES (1, $1, $2)`, int64(c.Slot), c.BlockTime.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	storetest.CheckCursorUpgrade(t, postgres.MustOpen(t, dsn, postgres.Options{}))
}
