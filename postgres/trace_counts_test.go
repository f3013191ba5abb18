package postgres_test

import (
	"os"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
)

// TestTraceCountsBackfill: the trace_counts rows the writes keep are the
// ones migration 0003 computes for a database written before it.
func TestTraceCountsBackfill(t *testing.T) {
	body, err := os.ReadFile("migration/0003_trace_counts.sql")
	if err != nil {
		t.Fatal(err)
	}
	db := postgres.MustOpenDB(t)
	db.RowBlocks = -1 // the migration computes the counts from rows
	storetest.CheckTraceCountsBackfill(t, db, db.Write, string(body))
}
