package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestCheckpointAfterCommits: after block commits, the WAL is copied into
// the database file by the checkpointer, while the handle is open and
// although the writer's own checkpoints wait for a WAL far larger than
// what was written.
func TestCheckpointAfterCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chainquery.db")
	db := mustOpenPath(t, path)
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	storetest.Load(t, db)
	for deadline := time.Now().Add(10 * time.Second); size() == before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is still %d bytes 10 s after the commits: nothing checkpointed the WAL", before)
		}
	}
	// Closing twice (a test's cleanup after the code's own Close) is no fault.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
