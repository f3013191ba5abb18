package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// dictReaderEnv names, in a child process of TestDictsInAnotherProcess,
// the database to read.
const dictReaderEnv = "CHAINQUERY_TEST_DICT_READER"

// TestDictsInAnotherProcess: a store writes Polygon-shaped blocks straight
// into history, enough of them that its later transaction segments are
// compressed with a dictionary it made (history_dicts); its log and trace
// segments, written without, are then compressed again with dictionaries
// of their own, as releases before issue 30's session 28 wrote them. A
// process that has never met those dictionaries (this test binary run
// again) opens the database and answers the same blocks, traces and logs,
// registering them from the database.
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
	var kinds string
	if err := sqlite.ReadPool(db).QueryRow(`SELECT group_concat(kind) FROM history_dicts`).Scan(&kinds); err != nil || kinds != "0" {
		t.Fatalf("history_dicts holds dictionaries of kinds %q (%v), want the transactions' (0) alone", kinds, err)
	}
	want := dictDigest(t, db)
	withDicts(t, path, 1, 2)
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

// withDicts compresses every segment of kinds of the database at path but
// each kind's first four again, with a dictionary of the kind made of
// those four, which it adds to history_dicts.
func withDicts(t *testing.T, path string, kinds ...int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type segment struct {
		chain, number int64
		data          []byte
	}
	for _, kind := range kinds {
		var segs []segment
		rows, err := db.Query(`SELECT chain, number, data FROM history_segments WHERE kind = ? ORDER BY chain, number`, kind)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s segment
			if err := rows.Scan(&s.chain, &s.number, &s.data); err != nil {
				t.Fatal(err)
			}
			segs = append(segs, s)
		}
		if err := rows.Err(); err != nil || len(segs) <= history.DictSamples {
			t.Fatalf("%d segments of kind %d (%v)", len(segs), kind, err)
		}
		var samples [][]byte
		for _, s := range segs[:history.DictSamples] {
			samples = append(samples, s.data)
		}
		content, err := history.DictContent(samples)
		if err != nil {
			t.Fatal(err)
		}
		// Not registered in this process: the reading process is another.
		d, err := history.NewDictUnregistered(content)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO history_dicts (chain, kind, since, id, content) VALUES (?, ?, ?, ?, ?)`,
			segs[0].chain, kind, segs[0].number, int64(d.ID), content); err != nil {
			t.Fatal(err)
		}
		for _, s := range segs[history.DictSamples:] {
			data, err := d.Recompress(s.data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`UPDATE history_segments SET data = ? WHERE chain = ? AND number = ? AND kind = ?`,
				data, s.chain, s.number, kind); err != nil {
				t.Fatal(err)
			}
		}
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
