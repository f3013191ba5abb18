package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// MustOpenDB opens a fresh database in a temporary directory, closed when
// the test ends.
func MustOpenDB(tb testing.TB) *sqlite.DB {
	tb.Helper()
	return mustOpenPath(tb, filepath.Join(tb.TempDir(), "chainquery.db"))
}

// mustOpenPath opens the database at path, closed when the test ends.
func mustOpenPath(tb testing.TB, path string) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) chainquery.Store { return MustOpenDB(tb) })
}

// TestConnBytes: the reads' []byte destinations are copies a caller
// keeps (storetest.CheckConnBytes).
func TestConnBytes(t *testing.T) {
	db := MustOpenDB(t)
	storetest.CheckConnBytes(t, db, db.Read)
}

// TestExports holds the exports to the filter endpoints' pages
// (storetest.CheckExports).
func TestExports(t *testing.T) {
	storetest.CheckExports(t, func(tb testing.TB) chainquery.Store { return MustOpenDB(tb) })
}

// TestWritesInProcess: SQLite's commits run on the ingester's CPU, which
// the ingester's pipeline leaves them a core of (ingest, writeFetches).
func TestWritesInProcess(t *testing.T) {
	var s chainquery.Store = MustOpenDB(t)
	if w, ok := s.(chainquery.InProcessWriter); !ok || !w.WritesInProcess() {
		t.Fatal("SQLite does not say it writes in process")
	}
}
