package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestAPIKeyLimitsUpgrade opens a database made before keys had limits
// (every migration before 0008_api_key_limits.sql applied) that holds a key
// (storetest.CheckAPIKeyUpgrade).
func TestAPIKeyLimitsUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Exec(`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob("migration/*.sql") // in name order
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name >= "migration/0008" {
			break
		}
		body, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := old.Exec(`INSERT INTO schema_migrations VALUES (?, 0)`, name); err != nil {
			t.Fatal(err)
		}
	}
	k := storetest.OldAPIKey
	if _, err := old.Exec(`INSERT INTO api_keys (name, hash, endpoints, created_at) VALUES (?, ?, ?, ?)`,
		k.Name, k.Hash[:], storetest.OldAPIKeyEndpoints, k.CreatedAt.UnixMilli()); err != nil {
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
	storetest.CheckAPIKeyUpgrade(t, db)
}
