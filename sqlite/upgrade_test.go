package sqlite_test

import (
	"database/sql"
	"path/filepath"
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
