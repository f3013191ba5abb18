package postgres

import (
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestLogEpochs: Filter Logs over history that spans epochs of
// epoch_counts (migration 0025) answers as rows do, before and after a
// thaw (storetest.CheckLogEpochs).
func TestLogEpochs(t *testing.T) {
	want := MustOpenDB(t)
	want.RowBlocks = -1 // rows only
	got := MustOpenDB(t)
	storetest.CheckLogEpochs(t, want, got, got.Write)
}
