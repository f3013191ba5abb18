package postgres_test

import (
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
)

// TestLogIndexBackfill: history written before migration 0012 gets its
// logs' posting lists from IndexLogHistory, and answers Filter Logs as rows
// do.
func TestLogIndexBackfill(t *testing.T) {
	got := postgres.MustOpenDB(t)
	storetest.CheckLogIndexBackfill(t, postgres.MustOpenDB(t), got, got.Write)
}
