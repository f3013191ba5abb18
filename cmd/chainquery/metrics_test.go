package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// scrape reads the Prometheus text at url and returns each sample's value
// by its series, as written ("name{label=\"v\",...}").
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", url, line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// waitMetric scrapes url until series reaches want, or fails after 30 s.
func waitMetric(t *testing.T, url, series string, want float64, logs fmt.Stringer) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := scrape(t, url)
		if m[series] >= want {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v after 30 s, want %v\n%s", series, m[series], want, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIngestMetrics runs ingest evm --follow --metrics-listen against anvil
// and reads its /metrics after a real ingestion into a real store: the
// heads, the lag, rows by table, batches, node calls by method and the
// store's ping. The listener serves /metrics only.
func TestIngestMetrics(t *testing.T) {
	c := startChain(t)
	head := c.rounds(t, 3)
	db := "sqlite:" + filepath.Join(t.TempDir(), "m.db")
	r := start(t, nil, "ingest", "evm", "--db", db, "--chain", "polygon", "--rpc", c.node.URL, "--from", "0",
		"--follow", "--confirmations", "0", "--batch", "2", "--metrics-listen", "127.0.0.1:0")
	url := r.base() + "/metrics"
	m := waitMetric(t, url, `chainquery_ingest_stored_head{chain="polygon"}`, float64(head), r.stderr)

	for series, want := range map[string]float64{
		`chainquery_ingest_rows_total{chain="polygon",table="blocks"}`: float64(head + 1), // blocks 0..head
		`chainquery_ingest_lag_blocks{chain="polygon"}`:                0,
		`chainquery_store_up`: 1,
	} {
		if m[series] != want {
			t.Errorf("%s = %v, want %v", series, m[series], want)
		}
	}
	for _, series := range []string{
		`chainquery_ingest_node_head{chain="polygon"}`,
		`chainquery_ingest_rows_total{chain="polygon",table="transactions"}`,
		`chainquery_ingest_rows_total{chain="polygon",table="logs"}`,
		`chainquery_ingest_rows_total{chain="polygon",table="traces"}`,
		`chainquery_ingest_batch_blocks_count{chain="polygon"}`,
		`chainquery_ingest_batch_write_seconds_count{chain="polygon"}`,
		`chainquery_ingest_last_write_timestamp_seconds{chain="polygon"}`,
		`chainquery_rpc_requests_total{chain="polygon",method="eth_chainId"}`,
		`chainquery_rpc_requests_total{chain="polygon",method="eth_blockNumber"}`,
		`chainquery_rpc_requests_total{chain="polygon",method="eth_getBlockByNumber"}`,
		`chainquery_rpc_requests_total{chain="polygon",method="eth_getBlockReceipts"}`,
		`chainquery_rpc_requests_total{chain="polygon",method="trace_block"}`,
	} {
		if m[series] <= 0 {
			t.Errorf("%s = %v, want more than 0", series, m[series])
		}
	}
	if now := float64(time.Now().Unix()); m[`chainquery_ingest_last_write_timestamp_seconds{chain="polygon"}`] < now-60 {
		t.Errorf("last write at %v, now is %v", m[`chainquery_ingest_last_write_timestamp_seconds{chain="polygon"}`], now)
	}
	if _, ok := m["go_goroutines"]; !ok {
		t.Errorf("no Go runtime metrics")
	}

	// The follower goes on: the next blocks move the stored head, and a
	// second write (the first may have held every block, batches that
	// arrived together being written at once) shows the block time.
	head = c.rounds(t, 1)
	m = waitMetric(t, url, `chainquery_ingest_stored_head{chain="polygon"}`, float64(head), r.stderr)
	if v, ok := m[`chainquery_ingest_lag_seconds{chain="polygon"}`]; !ok || v != 0 {
		t.Errorf("lag in seconds %v (present %v) after two writes at the head, want 0", v, ok)
	}

	resp, err := http.Get(r.base() + "/api/v1/customer/polygon/blocks/latest")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the metrics listener answers the API's path with %d, want 404", resp.StatusCode)
	}
	r.stop(t)
	contains(t, "the log", r.stderr.String(), "serving metrics")
}

// TestServeFollowerStatus runs serve --config with a follower of anvil: the
// status endpoint shows the node's head and the lag, and serve's /metrics
// holds the follower's ingestion metrics next to the HTTP ones.
func TestServeFollowerStatus(t *testing.T) {
	c := startChain(t)
	head := c.rounds(t, 2)
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "f.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "get_block"))
	config := filepath.Join(dir, "c.json")
	writeFile(t, config, `{"chains": [{"chain": "polygon", "rpc": "`+c.node.URL+`", "from": 0, "confirmations": 3, "batch": 2}]}`)
	api := start(t, nil, "serve", "--config", config, "--db", db, "--listen", "127.0.0.1:0")
	url := api.base() + "/metrics"
	m := waitMetric(t, url, `chainquery_ingest_stored_head{chain="polygon"}`, float64(head-3), api.stderr)
	if got := m[`chainquery_ingest_lag_blocks{chain="polygon"}`]; got != 3 {
		t.Errorf("lag_blocks %v, want the 3 confirmations", got)
	}
	if m[`chainquery_rpc_requests_total{chain="polygon",method="eth_getBlockByNumber"}`] <= 0 || m["chainquery_store_up"] != 1 {
		t.Errorf("serve's /metrics lacks the follower's node calls or the store's ping")
	}

	// The status, with a key for one endpoint: the node's head, 3 blocks
	// behind it, in seconds of anvil's block time.
	status, body := call(t, "GET", api.base()+"/api/v1/customer/status", key, nil)
	if status != 200 {
		t.Fatalf("status: %d %v", status, body)
	}
	chains := body["chains"].([]any)
	if len(chains) != 1 {
		t.Fatalf("chains %v, want polygon", chains)
	}
	p := chains[0].(map[string]any)
	for field, want := range map[string]any{"chain": "polygon", "followed": true, "first_block": 0,
		"last_block": head - 3, "node_head": head, "lag_blocks": 3, "traces_indexed": true} {
		if fmt.Sprint(p[field]) != fmt.Sprint(want) { // numbers come as json.Number
			t.Errorf("polygon's %s is %v, want %v: %v", field, p[field], want, p)
		}
	}
	if n, ok := p["lag_seconds"].(json.Number); !ok || n.String()[0] == '-' {
		t.Errorf("lag_seconds %v, want a number", p["lag_seconds"])
	}
	api.stop(t)
}

// TestIngestSolanaMetrics runs ingest solana --follow --metrics-listen
// against a recorded node: the slots, rows of token balances and node calls
// on its /metrics, and the slot the status endpoint then reports.
func TestIngestSolanaMetrics(t *testing.T) {
	node := solanatest.NewServer(t)
	var lastSlot uint64
	var lastTime time.Time
	for _, b := range solanatest.FullBlocks {
		raw := solanatest.ReadBlock(t, b.File)
		node.AddBlock(b.Slot, raw)
		blk, err := solana.DecodeBlock(raw)
		if err != nil {
			t.Fatal(err)
		}
		lastSlot, lastTime = b.Slot, blk.Time()
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "solana.db")
	r := start(t, nil, "ingest", "solana", "--db", db, "--rpc", node.URL, "--from-slot", fmt.Sprint(solanatest.FullBlocks[0].Slot),
		"--follow", "--metadata=false", "--metrics-listen", "127.0.0.1:0")
	m := waitMetric(t, r.base()+"/metrics", `chainquery_ingest_stored_head{chain="solana"}`, float64(lastSlot), r.stderr)
	for series, want := range map[string]float64{
		`chainquery_ingest_node_head{chain="solana"}`:  float64(lastSlot),
		`chainquery_ingest_lag_blocks{chain="solana"}`: 0,
		`chainquery_store_up`:                          1,
	} {
		if m[series] != want {
			t.Errorf("%s = %v, want %v", series, m[series], want)
		}
	}
	for _, series := range []string{
		`chainquery_ingest_rows_total{chain="solana",table="token_balances"}`,
		`chainquery_ingest_batch_blocks_count{chain="solana"}`,
		`chainquery_rpc_requests_total{chain="solana",method="getSlot"}`,
		`chainquery_rpc_requests_total{chain="solana",method="getBlocks"}`,
		`chainquery_rpc_requests_total{chain="solana",method="getBlock"}`,
	} {
		if m[series] <= 0 {
			t.Errorf("%s = %v, want more than 0", series, m[series])
		}
	}
	r.stop(t)

	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "token_balance_by_account"))
	api := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0")
	defer api.stop(t)
	status, body := call(t, "GET", api.base()+"/api/v1/customer/status", key, nil)
	s, _ := body["solana"].(map[string]any)
	if status != 200 || s == nil || fmt.Sprint(s["last_slot"]) != fmt.Sprint(lastSlot) ||
		s["last_block_time"] != lastTime.UTC().Format("2006-01-02T15:04:05") {
		t.Errorf("status: %d %v, want solana at slot %d, %s", status, body, lastSlot, lastTime.UTC())
	}
}

// TestMetricsListen_Usage: --metrics-listen takes host:port, on both ingest
// commands.
func TestMetricsListen_Usage(t *testing.T) {
	for _, args := range [][]string{
		{"ingest", "evm", "--chain", "polygon", "--rpc", "http://127.0.0.1:1", "--metrics-listen", "9101"},
		{"ingest", "solana", "--rpc", "http://127.0.0.1:1", "--metrics-listen", "localhost"},
	} {
		execute(t, nil, args...).wantFailure(t, 2, "--metrics-listen must be host:port")
	}
}
