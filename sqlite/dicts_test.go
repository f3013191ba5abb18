package sqlite_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// dictReaderEnv names, in a child process of TestDictsInAnotherProcess,
// the database to read.
const dictReaderEnv = "CHAINQUERY_TEST_DICT_READER"

// TestDictsInAnotherProcess: a store writes Polygon-shaped blocks straight
// into history, enough of them that its later segments are compressed with
// dictionaries it made (history_dicts); a process that has never met those
// dictionaries (this test binary run again) opens the database and answers
// the same blocks and traces, registering them from the database.
func TestDictsInAnotherProcess(t *testing.T) {
	if path := os.Getenv(dictReaderEnv); path != "" {
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		fmt.Printf("digest %s\n", dictDigest(t, db))
		return
	}
	path := filepath.Join(t.TempDir(), "dicts.db")
	db := mustOpenPath(t, path)
	storetest.LoadHistoryDirect(t, db)
	var dicts int
	if err := sqlite.ReadPool(db).QueryRow(`SELECT count(*) FROM history_dicts`).Scan(&dicts); err != nil || dicts != 3 {
		t.Fatalf("history_dicts holds %d dictionaries (%v), want one for each kind of segment", dicts, err)
	}
	want := dictDigest(t, db)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDictsInAnotherProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), dictReaderEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the reading process: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "digest "+want) {
		t.Fatalf("the reading process answered otherwise: %s, want digest %s", out, want)
	}
}

// dictDigest hashes the answers of db about every block of
// storetest.LoadHistoryDirect's: each block with its transactions, its
// traces' and its logs' first pages, and a page of the logs of its first
// log's address over all of them.
func dictDigest(t *testing.T, db chainquery.Store) string {
	t.Helper()
	ctx := context.Background()
	h := sha256.New()
	first, last := storetest.HistoryDirectRange()
	for n := first; n <= last; n++ {
		b, err := db.FindBlock(ctx, chainquery.Polygon, n, true)
		if err != nil {
			t.Fatalf("block %d: %v", n, err)
		}
		traces, count, err := db.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &n, ToBlock: &n, Page: chainquery.Page{Limit: 50}})
		if err != nil {
			t.Fatalf("traces of block %d: %v", n, err)
		}
		if len(b.Transactions) == 0 || count == 0 {
			t.Fatalf("block %d: %d transactions, %d traces", n, len(b.Transactions), count)
		}
		// Logs by their segments (no key) and by a posting list (an
		// address), which decode segments on paths of their own.
		logs, nLogs, err := db.FindLogs(ctx, chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromBlock: &n, ToBlock: &n, Page: chainquery.Page{Limit: 50}})
		if err != nil || len(logs) == 0 {
			t.Fatalf("logs of block %d: %d (%v)", n, len(logs), err)
		}
		byAddr, nByAddr, err := db.FindLogs(ctx, chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromBlock: &first, ToBlock: &last,
			Addresses: []chainquery.Address{logs[0].Address}, Page: chainquery.Page{Limit: 5}})
		if err != nil {
			t.Fatalf("logs of %s: %v", logs[0].Address.Hex(), err)
		}
		json.NewEncoder(h).Encode([]any{b, traces, count, logs, nLogs, byAddr, nByAddr})
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
