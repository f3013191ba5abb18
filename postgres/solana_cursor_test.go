package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/postgres"
)

// TestSolanaCursorUpgrade opens a database made before the cursor recorded a
// blockhash (only 0001_init.sql applied) that holds a cursor: the migration
// keeps the cursor, with an empty blockhash, and the next write records one.
func TestSolanaCursorUpgrade(t *testing.T) {
	dsn := postgres.NewTestDatabase(t, postgres.RequireEnv(t, postgres.EnvAdminDSN))
	ctx := context.Background()
	init, err := os.ReadFile("migration/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 6, 1, 13, 0, 0, 0, time.UTC)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{string(init), nil},
		{`CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`, nil},
		{`INSERT INTO schema_migrations (name) VALUES ('migration/0001_init.sql')`, nil},
		{`INSERT INTO solana_cursor (id, slot, block_time) VALUES (1, 250000400, $1)`, []any{at.UnixMilli()}},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)

	db := postgres.MustOpen(t, dsn, postgres.Options{})
	c, ok, err := db.SolanaCursor(ctx)
	if err != nil || !ok || c.Slot != 250_000_400 || c.Blockhash != "" || !c.BlockTime.Equal(at) {
		t.Fatalf("upgraded cursor %+v, %v, %v", c, ok, err)
	}
	next := chainquery.SolanaCursor{Slot: 250_000_401, Blockhash: "7FRPQq2kvN5NWudpiHstcpQnxEDFeDBJN54sU1TeTF9t", BlockTime: at.Add(time.Second)}
	if err := db.WriteTokenBalances(ctx, nil, next); err != nil {
		t.Fatal(err)
	}
	if c, ok, err = db.SolanaCursor(ctx); err != nil || !ok || c.Slot != next.Slot || c.Blockhash != next.Blockhash || !c.BlockTime.Equal(next.BlockTime) {
		t.Fatalf("cursor %+v, %v, %v; want %+v", c, ok, err, next)
	}
}
