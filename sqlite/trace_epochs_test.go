package sqlite_test

import (
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestTraceEpochs: Filter Traces' counts and offsets over history that
// spans epochs of epoch_counts (migration 0025) are those of the traces
// written, before and after a thaw (storetest.CheckTraceEpochs).
func TestTraceEpochs(t *testing.T) {
	db := MustOpenDB(t)
	storetest.CheckTraceEpochs(t, db, db.Write)
}
