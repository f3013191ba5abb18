package postgres_test

import (
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/sqlstore"
)

// TestLogIndexBackfill: history written before migration 0012 gets its
// logs' posting lists from IndexLogHistory and from writes, and answers
// Filter Logs as rows do.
func TestLogIndexBackfill(t *testing.T) {
	storetest.CheckLogIndexBackfill(t, func(tb testing.TB) (chainquery.Store, sqlstore.Conn) {
		db := postgres.MustOpenDB(tb)
		return db, db.Write
	})
}

// TestLogBuckets: Filter Logs over buckets of log_postings written piece
// by piece, and thawed, answers as rows do.
func TestLogBuckets(t *testing.T) {
	want := postgres.MustOpenDB(t)
	want.RowBlocks = -1 // rows only
	storetest.CheckLogBuckets(t, want, postgres.MustOpenDB(t))
}

// TestLogListStarts: Filter Logs by a hot address reads the starts of its
// lists for a page, and answers as rows do, also when a start is too short
// (storetest.CheckLogListStarts; SQLite reads lists whole).
func TestLogListStarts(t *testing.T) {
	want := postgres.MustOpenDB(t)
	want.RowBlocks = -1 // rows only
	storetest.CheckLogListStarts(t, want, postgres.MustOpenDB(t))
}

// TestLogSplits: Filter Logs by an address and a topic0 over a busy
// address's split pieces, and over buckets that hold them beside pieces
// filtered by their tags, answers as rows do (storetest.CheckLogSplits).
func TestLogSplits(t *testing.T) {
	want := postgres.MustOpenDB(t)
	want.RowBlocks = -1 // rows only
	got := postgres.MustOpenDB(t)
	storetest.CheckLogSplits(t, want, got, got.Write)
}

// TestLogFormsUpgrade: a database whose busy address's rows hold pieces
// with tags beside split ones, as writes made them before migration 0023,
// is migrated to rows of one form each, and answers as rows do
// (storetest.CheckLogFormsUpgrade).
func TestLogFormsUpgrade(t *testing.T) {
	want := postgres.MustOpenDB(t)
	want.RowBlocks = -1 // rows only
	dsn := postgres.NewTestDatabase(t, postgres.RequireEnv(t, postgres.EnvAdminDSN))
	got := postgres.MustOpen(t, dsn, postgres.Options{})
	storetest.CheckLogFormsUpgrade(t, want, got, got.Write, func() chainquery.Store { return postgres.MustOpen(t, dsn, postgres.Options{}) })
}

// TestHashRuns: transactions found by hash through runs of the hash index
// merged over three levels, in parts, and cut by a thaw, answer as rows do.
func TestHashRuns(t *testing.T) {
	want := postgres.MustOpenDB(t)
	want.RowBlocks = -1 // rows only
	got := postgres.MustOpenDB(t)
	got.HashChunkEntries = 16
	storetest.CheckHashRuns(t, want, got, got.Write)
}

// TestHashRunIDs: a run of the hash index a thaw deleted, which a reader
// kept in memory, is not taken for the run written after it.
func TestHashRunIDs(t *testing.T) {
	want := postgres.MustOpenDB(t)
	want.RowBlocks = -1 // rows only
	storetest.CheckHashRunIDs(t, want, postgres.MustOpenDB(t))
}
