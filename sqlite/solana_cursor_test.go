package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestSolanaCursorUpgrade opens a database made before the cursor recorded a
// blockhash (only 0001_init.sql applied) that holds a cursor
// (storetest.CheckCursorUpgrade).
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
	for _, q := range []string{
		string(init),
		`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`,
		`INSERT INTO schema_migrations VALUES ('migration/0001_init.sql', 0)`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	c := storetest.OldCursor
	if _, err := old.Exec(`INSERT INTO solana_cursor (id, slot, block_time) VALUES (1, ?, ?)`, int64(c.Slot), c.BlockTime.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckCursorUpgrade(t, db)
}
