package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainquery/chainquery/internal/faultproxy"
	"github.com/chainquery/chainquery/internal/sqltest"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// TestServe_ConfigNodeFaults runs serve --config with its follower reading a
// real anvil node through a proxy that answers with every fault of
// faultproxy (empty and short batches, ids missing, duplicated and
// mistyped, errors inside a batch, HTML with 200 and 502, truncated, gzip,
// 100 MB, dripping and reset bodies). The API must answer throughout, and
// the database must end with exactly what a clean ingestion of the same
// node stores, row for row. With trace_block the follower asks for a
// block, its receipts and its traces in three requests of one call each
// (evm.Fetcher.fetchAtOnce), so it meets the faults a single call can be
// given; with debug_trace it asks for the receipts and the traces in one
// batch, and meets every fault.
func TestServe_ConfigNodeFaults(t *testing.T) {
	for _, c := range []struct {
		traces string
		faults []faultproxy.Fault
	}{
		{"trace_block", faultproxy.Single},
		{"debug_trace", faultproxy.All},
	} {
		t.Run(c.traces, func(t *testing.T) { configNodeFaults(t, c.traces, c.faults) })
	}
}

func configNodeFaults(t *testing.T, traces string, faults []faultproxy.Fault) {
	c := startChain(t)
	head := c.rounds(t, 6)
	proxy := faultproxy.Start(c.node.URL, faultproxy.Options{Faults: faults, Every: 2, Drip: 3 * time.Second})
	t.Cleanup(proxy.Close)

	dir := t.TempDir()
	db := filepath.Join(dir, "faults.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", "sqlite:"+db, "--name", "k", "--endpoints", "all"))
	config := filepath.Join(dir, "c.json")
	// Small batches make many requests, so that every fault is met; the
	// timeout is under the proxy's drip, and the answer limit so far under
	// its 100 MB that the limit, not the timeout, ends that answer even on a
	// busy machine (with 16 MB, a run once read only 12 MB within the
	// second, and "answer too large" was never logged). anvil's answers
	// here are a few KB.
	writeFile(t, config, `{"db": "sqlite:`+db+`", "listen": "127.0.0.1:0", "chains": [
  {"chain": "polygon", "rpc": "`+proxy.URL+`", "from": 0, "confirmations": 0, "traces": "`+traces+`", "batch": 2, "concurrency": 2,
   "rpc_timeout": "1s", "rpc_max_response_mb": 1}]}`)
	api := start(t, nil, "serve", "--config", config)

	// The API answers every request while the follower meets the faults.
	var asked, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		client := &http.Client{Timeout: 5 * time.Second}
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			req, _ := http.NewRequest("GET", api.base()+"/api/v1/customer/polygon/blocks/latest", nil)
			req.Header.Set("apikey", key)
			resp, err := client.Do(req)
			asked.Add(1)
			if err != nil {
				failed.Add(1)
				firstFailure.CompareAndSwap(nil, err.Error())
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
				failed.Add(1)
				firstFailure.CompareAndSwap(nil, resp.Status)
			}
		}
	})
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) && !(proxy.Done() && latest(t, api.base(), "polygon", key) == int64(head)) {
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if !proxy.Done() {
		t.Fatalf("faults not met: %v (given %v)\n%s", proxy.Missing(), proxy.Given(), api.stderr)
	}
	waitLatest(t, api.base(), "polygon", key, head, api.stderr)
	if failed.Load() > 0 || asked.Load() < 10 {
		t.Fatalf("the API failed %d of %d requests during the faults (first: %v)", failed.Load(), asked.Load(), firstFailure.Load())
	}
	api.stop(t)
	logs := api.stderr.String()
	contains(t, "the log", logs, "malformed answer", "HTML page", "answer too large")
	if slices.Contains(faults, faultproxy.EmptyBatch) {
		contains(t, "the log", logs, "empty batch answer")
	}
	if strings.Contains(logs, "panic") {
		t.Errorf("a panic was logged:\n%s", logs)
	}

	// A clean ingestion of the same node, without the proxy.
	clean := filepath.Join(dir, "clean.db")
	mustExecute(t, nil, "ingest", "evm", "--db", "sqlite:"+clean, "--chain", "polygon", "--rpc", c.node.URL,
		"--from", "0", "--to", fmt.Sprint(head), "--confirmations", "0", "--traces", traces)
	sameRows(t, db, clean, "blocks", "transactions", "logs", "traces", "orphaned_blocks")
}

// sameRows fails unless the tables hold the same rows in both SQLite files.
func sameRows(t *testing.T, a, b string, tables ...string) {
	t.Helper()
	read := func(path, table string) [][]any {
		d, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		return sqltest.Rows(t, d, "SELECT * FROM "+table+" ORDER BY 1, 2, 3")
	}
	for _, table := range tables {
		ra, rb := read(a, table), read(b, table)
		if len(ra) != len(rb) {
			t.Errorf("%s: %d rows, clean ingestion %d", table, len(ra), len(rb))
			continue
		}
		if table != "orphaned_blocks" && len(ra) == 0 {
			t.Errorf("%s: no rows", table)
		}
		for i := range ra {
			if !reflect.DeepEqual(ra[i], rb[i]) {
				t.Errorf("%s row %d: %v, clean ingestion %v", table, i, ra[i], rb[i])
				break
			}
		}
	}
}

// TestIngestSolana_NodeFaults ingests the two complete mainnet blocks (7 MB
// of JSON each) and sixty empty ones from the Solana replay server through
// the fault proxy: the database must end with exactly what a clean
// ingestion of the same node stores. The answer limit (10 MB) is under a
// batch of the two mainnet blocks, so the client must also split batches.
func TestIngestSolana_NodeFaults(t *testing.T) {
	node := solanatest.NewServer(t)
	var last uint64
	for _, b := range solanatest.FullBlocks {
		node.AddBlock(b.Slot, solanatest.ReadBlock(t, b.File))
		last = b.Slot
	}
	for i := uint64(1); i <= 60; i++ {
		node.AddBlock(last+i, json.RawMessage(fmt.Sprintf(`{"blockTime":%d,"transactions":[]}`, 1_600_000_000+i)))
	}
	last += 60
	proxy := faultproxy.Start(node.URL, faultproxy.Options{Every: 2, Drip: 8 * time.Second})
	t.Cleanup(proxy.Close)

	dir := t.TempDir()
	ingest := func(db, rpc string) result {
		return execute(t, nil, "ingest", "solana", "--db", "sqlite:"+db, "--rpc", rpc,
			"--from-slot", fmt.Sprint(solanatest.FullBlocks[0].Slot), "--to-slot", fmt.Sprint(last),
			"--metadata=false", "--batch", "2", "--concurrency", "2", "--rpc-timeout", "4s", "--rpc-max-response-mb", "10")
	}
	faulty, clean := filepath.Join(dir, "faults.db"), filepath.Join(dir, "clean.db")
	r := ingest(faulty, proxy.URL)
	if r.code != 0 {
		t.Fatalf("ingest through the faults: exit %d\n%s", r.code, r.stderr)
	}
	if !proxy.Done() {
		t.Fatalf("faults not met: %v (given %v)\n%s", proxy.Missing(), proxy.Given(), r.stderr)
	}
	contains(t, "the log", r.stderr, "malformed answer", "answer too large", "sending smaller batches", "msg=done")
	if r := ingest(clean, node.URL); r.code != 0 {
		t.Fatalf("clean ingest: exit %d\n%s", r.code, r.stderr)
	}
	sameRows(t, faulty, clean, "token_balances", "solana_cursor")
}
