package sqlite_test

import (
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestLogIndexBackfill: history written before migration 0012 gets its
// logs' posting lists from IndexLogHistory, and answers Filter Logs as rows
// do.
func TestLogIndexBackfill(t *testing.T) {
	got := MustOpenDB(t)
	storetest.CheckLogIndexBackfill(t, MustOpenDB(t), got, got.Write)
}
