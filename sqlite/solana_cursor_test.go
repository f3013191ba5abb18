package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlite"
)

// TestSolanaCursorUpgrade opens a database made before the cursor recorded a
// blockhash (only 0001_init.sql applied) that holds a cursor: the migration
// keeps the cursor, with an empty blockhash, and the next write records one.
func TestSolanaCursorUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	init, err := os.ReadFile("migration/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 6, 1, 13, 0, 0, 0, time.UTC)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{string(init), nil},
		{`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`, nil},
		{`INSERT INTO schema_migrations VALUES ('migration/0001_init.sql', 0)`, nil},
		{`INSERT INTO solana_cursor (id, slot, block_time) VALUES (1, 250000400, ?)`, []any{at.UnixMilli()}},
	} {
		if _, err := old.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
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
