package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainquery/chainquery/internal/faultproxy"
)

// TestServe_ConfigNodeFaults runs serve --config with its follower reading a
// real anvil node through a proxy that answers with every fault of
// faultproxy (empty and short batches, ids missing, duplicated and
// mistyped, errors inside a batch, HTML with 200 and 502, truncated, gzip,
// 100 MB, dripping and reset bodies). The API must answer throughout, and
// the database must end with exactly what a clean ingestion of the same
// node stores, row for row.
func TestServe_ConfigNodeFaults(t *testing.T) {
	c := startChain(t)
	head := c.rounds(t, 6)
	proxy := faultproxy.Start(c.node.URL, faultproxy.Options{Every: 2, Drip: 3 * time.Second})
	t.Cleanup(proxy.Close)

	dir := t.TempDir()
	db := filepath.Join(dir, "faults.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", "sqlite:"+db, "--name", "k", "--endpoints", "all"))
	config := filepath.Join(dir, "c.json")
	// Small batches make many requests, so that every fault is met; the
	// timeout is under the proxy's drip and the answer limit under its
	// 100 MB.
	writeFile(t, config, `{"db": "sqlite:`+db+`", "listen": "127.0.0.1:0", "chains": [
  {"chain": "polygon", "rpc": "`+proxy.URL+`", "from": 0, "confirmations": 0, "batch": 2, "concurrency": 2,
   "rpc_timeout": "1s", "rpc_max_response_mb": 16}]}`)
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
	contains(t, "the log", logs, "malformed answer", "empty batch answer", "HTML page", "answer too large")
	if strings.Contains(logs, "panic") {
		t.Errorf("a panic was logged:\n%s", logs)
	}

	// A clean ingestion of the same node, without the proxy.
	clean := filepath.Join(dir, "clean.db")
	mustExecute(t, nil, "ingest", "evm", "--db", "sqlite:"+clean, "--chain", "polygon", "--rpc", c.node.URL,
		"--from", "0", "--to", fmt.Sprint(head), "--confirmations", "0")
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
		rows, err := d.QueryContext(context.Background(), "SELECT * FROM "+table+" ORDER BY 1, 2, 3")
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out [][]any
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
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
