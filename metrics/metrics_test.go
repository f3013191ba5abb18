package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/metrics"
)

// MustNewIngest returns ingestion metrics on a registry of their own.
func MustNewIngest(tb testing.TB) (*metrics.Ingest, *prometheus.Registry) {
	tb.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.NewIngest(reg)
	if err != nil {
		tb.Fatal(err)
	}
	return m, reg
}

// samples gathers reg: each sample's value by series, written
// name{label="value",...} with labels in name order; a histogram gives its
// _count and _sum.
func samples(tb testing.TB, reg prometheus.Gatherer) map[string]float64 {
	tb.Helper()
	families, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			series := f.GetName()
			if len(labels) > 0 {
				series += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Gauge != nil:
				out[series] = m.Gauge.GetValue()
			case m.Counter != nil:
				out[series] = m.Counter.GetValue()
			case m.Histogram != nil:
				name, rest, _ := strings.Cut(series, "{")
				if rest != "" {
					rest = "{" + rest
				}
				out[name+"_count"+rest] = float64(m.Histogram.GetSampleCount())
				out[name+"_sum"+rest] = m.Histogram.GetSampleSum()
			}
		}
	}
	return out
}

// want fails unless every series has its value in got.
func want(t *testing.T, got map[string]float64, w map[string]float64) {
	t.Helper()
	for series, v := range w {
		if g, ok := got[series]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", series, g, ok, v)
		}
	}
}

// TestRPC counts a real client's calls to a node on 127.0.0.1: calls by
// method, a method outside the fixed set as "other" (the label set stays
// bounded), errors by class and retries.
func TestRPC(t *testing.T) {
	var failed atomic.Bool
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     uint64 `json:"id"`
			Method string `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case req.Method == "eth_getBlockByNumber" && !failed.Swap(true):
			http.Error(w, "overloaded", http.StatusServiceUnavailable) // once, then it answers
		case req.Method == "eth_madeUpMethod":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"the method eth_madeUpMethod does not exist"}}`, req.ID)
		case req.Method == "eth_chainId":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"not":"a string"}}`, req.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":"0x10"}`, req.ID)
		}
	}))
	defer node.Close()
	m, reg := MustNewIngest(t)
	c := jsonrpc.NewClient(node.URL)
	c.MinBackoff, c.MaxBackoff, c.Attempts = time.Millisecond, time.Millisecond, 2
	c.Observer = m.RPC(chainquery.Polygon)
	ctx := context.Background()
	var s string
	if err := c.Call(ctx, &s, "eth_blockNumber"); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, &s, "eth_getBlockByNumber", "0x1", false); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, &s, "eth_madeUpMethod"); !jsonrpc.IsMethodNotFound(err) {
		t.Fatalf("eth_madeUpMethod: %v", err)
	}
	if err := c.Call(ctx, &s, "eth_chainId"); err == nil {
		t.Fatal("eth_chainId: an object decoded into a string")
	}
	got := samples(t, reg)
	want(t, got, map[string]float64{
		`chainquery_rpc_requests_total{chain="polygon",method="eth_blockNumber"}`:                 1,
		`chainquery_rpc_requests_total{chain="polygon",method="eth_getBlockByNumber"}`:            2,
		`chainquery_rpc_errors_total{chain="polygon",class="http",method="eth_getBlockByNumber"}`: 1,
		`chainquery_rpc_retries_total{chain="polygon",method="eth_getBlockByNumber"}`:             1,
		`chainquery_rpc_requests_total{chain="polygon",method="other"}`:                           1,
		`chainquery_rpc_errors_total{chain="polygon",class="rpc",method="other"}`:                 1,
		`chainquery_rpc_requests_total{chain="polygon",method="eth_chainId"}`:                     2, // Attempts
		`chainquery_rpc_errors_total{chain="polygon",class="decode",method="eth_chainId"}`:        2,
		`chainquery_rpc_retries_total{chain="polygon",method="eth_chainId"}`:                      1,
	})
	for series := range got {
		if strings.Contains(series, "madeUp") {
			t.Errorf("a method outside the fixed set is a label: %s", series)
		}
	}
	if metrics.MethodLabel("eth_madeUpMethod") != "other" || metrics.MethodLabel("getBlock") != "getBlock" {
		t.Error("MethodLabel does not bound the methods")
	}
}

// TestChain follows one chain's observer through a run: heads, writes,
// the lag in blocks and in seconds of the block time, rows per table,
// batches, a reorg, and an unknown chain's label.
func TestChain(t *testing.T) {
	m, reg := MustNewIngest(t)
	o := m.Chain(chainquery.Polygon)
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	o.NodeHead(200)
	o.StoredHead(100)
	got := samples(t, reg)
	want(t, got, map[string]float64{
		`chainquery_ingest_node_head{chain="polygon"}`:   200,
		`chainquery_ingest_stored_head{chain="polygon"}`: 100,
		`chainquery_ingest_lag_blocks{chain="polygon"}`:  100,
	})
	if _, ok := got[`chainquery_ingest_lag_seconds{chain="polygon"}`]; ok {
		t.Error("a lag in seconds before any block time is known")
	}
	o.Written(ingest.Write{Blocks: 10, Last: 110, LastTime: t0, Transactions: 50, Logs: 70, Traces: 400, Duration: 20 * time.Millisecond})
	o.Written(ingest.Write{Blocks: 10, Last: 120, LastTime: t0.Add(20 * time.Second), Transactions: 5, Duration: 3 * time.Second})
	o.Reorg(3)
	got = samples(t, reg)
	want(t, got, map[string]float64{
		`chainquery_ingest_stored_head{chain="polygon"}`:                     120,
		`chainquery_ingest_lag_blocks{chain="polygon"}`:                      80,
		`chainquery_ingest_lag_seconds{chain="polygon"}`:                     160, // 2 s blocks
		`chainquery_ingest_rows_total{chain="polygon",table="blocks"}`:       20,
		`chainquery_ingest_rows_total{chain="polygon",table="transactions"}`: 55,
		`chainquery_ingest_rows_total{chain="polygon",table="logs"}`:         70,
		`chainquery_ingest_rows_total{chain="polygon",table="traces"}`:       400,
		`chainquery_ingest_batch_blocks_count{chain="polygon"}`:              2,
		`chainquery_ingest_batch_blocks_sum{chain="polygon"}`:                20,
		`chainquery_ingest_batch_write_seconds_sum{chain="polygon"}`:         3.02,
		`chainquery_ingest_reorg_depth_blocks_count{chain="polygon"}`:        1,
		`chainquery_ingest_reorg_depth_blocks_sum{chain="polygon"}`:          3,
	})
	if ts := got[`chainquery_ingest_last_write_timestamp_seconds{chain="polygon"}`]; time.Since(time.Unix(int64(ts), 0)) > time.Minute {
		t.Errorf("last write at %v", ts)
	}

	// The node catches up with the store: no lag.
	o.NodeHead(115)
	want(t, samples(t, reg), map[string]float64{`chainquery_ingest_lag_blocks{chain="polygon"}`: 0, `chainquery_ingest_lag_seconds{chain="polygon"}`: 0})

	// A rewind below the last write forgets the block time.
	o.NodeHead(130)
	o.Written(ingest.Write{Blocks: 2, Last: 118, LastTime: t0.Add(16 * time.Second)})
	got = samples(t, reg)
	want(t, got, map[string]float64{`chainquery_ingest_lag_blocks{chain="polygon"}`: 12})
	if _, ok := got[`chainquery_ingest_lag_seconds{chain="polygon"}`]; ok {
		t.Error("a lag in seconds from the blocks a rewind removed")
	}

	// Solana: token balance rows; any other chain name is "other".
	m.Chain(chainquery.Solana).Written(ingest.Write{Blocks: 4, Last: 250_000_400, LastTime: t0, TokenBalances: 9})
	m.Chain("mars").NodeHead(1)
	got = samples(t, reg)
	want(t, got, map[string]float64{
		`chainquery_ingest_rows_total{chain="solana",table="token_balances"}`: 9,
		`chainquery_ingest_node_head{chain="other"}`:                          1,
	})
}

// TestStoreUp checks chainquery_store_up: 1 when the ping answers, 0 when
// it fails or takes more than a second, and the scrape does not wait on a
// ping that never returns.
func TestStoreUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		ping func(context.Context) error
		want float64
	}{
		{"OK", func(context.Context) error { return nil }, 1},
		{"ErrDown", func(context.Context) error { return errors.New("connection refused") }, 0},
		{"ErrSlow", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, 0},
		{"ErrStuck", func(context.Context) error { select {} }, 0}, // ignores ctx
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			if err := metrics.RegisterStoreUp(reg, tc.ping); err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			want(t, samples(t, reg), map[string]float64{"chainquery_store_up": tc.want})
			if d := time.Since(began); d > 3*time.Second {
				t.Errorf("the scrape took %s", d)
			}
		})
	}
}

// TestHandler serves a registry on 127.0.0.1: /metrics answers the
// Prometheus text, any other path 404.
func TestHandler(t *testing.T) {
	reg := metrics.NewRegistry()
	m, err := metrics.NewIngest(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Chain(chainquery.Ethereum).NodeHead(42)
	srv := httptest.NewServer(metrics.Handler(reg))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `chainquery_ingest_node_head{chain="ethereum"} 42`) || !strings.Contains(string(b), "go_goroutines") {
		t.Errorf("/metrics: %d\n%.500s", resp.StatusCode, b)
	}
	resp, err = http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/: %d, want 404", resp.StatusCode)
	}
	if _, err := metrics.NewIngest(reg); err == nil {
		t.Error("the metrics registered twice on one registry")
	}
}
