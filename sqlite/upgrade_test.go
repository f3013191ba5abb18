package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/sqltest"
	"github.com/chainquery/chainquery/sqlite"
)

// openOld makes a database at path as a binary of an older version left it:
// every migration whose file name sorts before before applied and recorded,
// then fill run on it. It returns the store that opens it (and so applies
// the rest), for the upgrade checks of storetest.
func openOld(t *testing.T, before string, fill func(old *sql.DB) error) chainquery.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Exec(`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	sqltest.ApplyBefore(t, before, func(name, body string) error {
		if _, err := old.Exec(body); err != nil {
			return err
		}
		_, err := old.Exec(`INSERT INTO schema_migrations VALUES (?, 0)`, name)
		return err
	})
	if err := fill(old); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRefusesNewerSchema: a database a later release migrated (a migration
// this binary does not have is recorded) is not opened, rather than read in
// a layout this binary would read wrong.
func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES ('migration/9999_later.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if db, err := sqlite.Open(path); err == nil {
		db.Close()
		t.Fatal("a database with a migration of a later release opened")
	} else if !strings.Contains(err.Error(), "9999_later.sql") || !strings.Contains(err.Error(), "later release") {
		t.Fatalf("error %q does not name the unknown migration", err)
	}
}
