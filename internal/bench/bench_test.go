package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/bench"
	"github.com/chainquery/chainquery/internal/polychain"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// buildChainquery builds the service binary, as the harness runs it.
func buildChainquery(t *testing.T) string { return buildCommand(t, "chainquery", "./cmd/chainquery") }

// buildCommand builds the command of package pkg into a file named name.
func buildCommand(t *testing.T, name, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// TestSmoke runs the whole harness on a tiny chain: the real ingester
// through both trace dialects, spot checks of the API against the
// generator, and a one-second load run of two workloads. It asserts what
// was produced, never how fast.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	ctx := context.Background()
	bin := buildChainquery(t)
	chain, err := polychain.New(polychain.Config{Seed: 3, Blocks: 20, TxPerBlock: 10, Accounts: 500})
	if err != nil {
		t.Fatal(err)
	}
	node := &polychain.Node{Chain: chain}
	if err := node.Prerender(ctx, 0); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: node}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	rpc := "http://" + ln.Addr().String()

	dir := t.TempDir()
	var servers []*bench.Server
	var results []*bench.IngestResult
	for _, traces := range []string{evm.TracesParity, evm.TracesCallTracer} {
		dsn := "sqlite:" + filepath.Join(dir, traces+".db")
		res, err := bench.Ingest(ctx, bench.IngestOptions{Chainquery: bin, DSN: dsn, RPC: rpc,
			From: chain.First(), To: chain.Last(), Traces: traces, Batch: 5, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.Blocks != 20 || res.BlocksPS <= 0 || res.RawBlocksPS <= 0 || res.PeakRSS <= 0 || res.CPUSecs <= 0 {
			t.Errorf("ingestion result %+v", res)
		}
		results = append(results, res)
		s, err := bench.StartServer(ctx, bin, dsn, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		servers = append(servers, s)
	}
	table := bench.IngestTable(results)
	t.Logf("\n%s", table)
	if strings.Count(table, "\n") != 4 {
		t.Errorf("ingestion table:\n%s", table)
	}

	n := chain.First() + 7
	b := chain.Block(n)
	frames := 0
	for _, tx := range b.Txs {
		tx.Root.Walk(func(*polychain.Frame, int) { frames++ })
	}
	var tracePages []string
	for i, s := range servers {
		var block struct {
			Hash  string `json:"block_hash"`
			Count int    `json:"transaction_count"`
		}
		getJSON(t, s, "GET", fmt.Sprintf("/api/v1/customer/polygon/block?block_number=%d", n), "", &block)
		if want := "0x" + fmt.Sprintf("%x", b.Hash); block.Hash != want || block.Count != len(b.Txs) {
			t.Errorf("server %d: block %d: %+v, want hash %s and %d transactions", i, n, block, want, len(b.Txs))
		}
		var receipts struct{ Count int }
		getJSON(t, s, "GET", fmt.Sprintf("/api/v1/customer/polygon/blocks/receipts?block_number=%d", n), "", &receipts)
		if receipts.Count != len(b.Txs) {
			t.Errorf("server %d: %d receipts, want %d", i, receipts.Count, len(b.Txs))
		}
		var logs struct{ Count int }
		getJSON(t, s, "GET", fmt.Sprintf("/api/v1/customer/polygon/transactions/0x%x/logs", b.Txs[2].Hash), "", &logs)
		if logs.Count != len(b.Txs[2].Logs) {
			t.Errorf("server %d: %d logs, want %d", i, logs.Count, len(b.Txs[2].Logs))
		}
		var traces struct{ Count int }
		body := fmt.Sprintf(`{"from_block":%d,"to_block":%d}`, n, n)
		page := getJSON(t, s, "POST", "/api/v1/customer/polygon/traces/filter?limit=50", body, &traces)
		if traces.Count != frames {
			t.Errorf("server %d: %d traces in block %d, want %d", i, traces.Count, n, frames)
		}
		tracePages = append(tracePages, page)
	}
	if tracePages[0] != tracePages[1] {
		t.Errorf("trace_block and the callTracer gave different Filter Traces answers:\n%s\n%s", tracePages[0], tracePages[1])
	}

	tokens := bench.Tokens{Seed: 3, Changes: 2000}
	if n, err := tokens.Write(ctx, "sqlite:"+filepath.Join(dir, evm.TracesParity+".db")); err != nil || n != 2000 {
		t.Fatalf("seeded %d token balance changes: %v", n, err)
	}
	smoked := []string{"Get Latest Block", "Filter Traces, 100 blocks, limit 50", "Token Balance by Account",
		"Get Transaction", "Get Transaction Receipt", "Get Transaction Traces, limit 50", "Get Block Logs, limit 50",
		"Token Balances by Owner, limit 50", "Filter Logs, 100 blocks, limit 50", "Filter Logs, 100 blocks, hot address"}
	ws, err := bench.Workloads(ctx, servers[0], chain, tokens, 4, func(name string) bool { return slices.Contains(smoked, name) })
	if err != nil {
		t.Fatal(err)
	}
	rows, err := bench.Load(ctx, servers[0], ws, bench.LoadOptions{Duration: 500 * time.Millisecond, Connections: 4, MaxRequests: 20_000})
	if err != nil {
		t.Fatal(err)
	}
	out := bench.LoadTable(rows)
	t.Logf("\n%s", out)
	if len(rows) != len(smoked) || strings.Count(out, "\n") != len(smoked)+2 {
		t.Fatalf("load table:\n%s", out)
	}
	for _, r := range rows {
		if r.Server.Requests == 0 || r.Ceiling.Requests == 0 || r.Server.Errors+r.Ceiling.Errors != 0 || r.PeakRSS <= 0 {
			t.Errorf("%s: %+v", r.Workload, r)
		}
	}

	// The A/B mode on the two datasets, which hold the same chain (the token
	// balances are in the first one only).
	abWorkloads := slices.DeleteFunc(slices.Clone(ws), func(w bench.Workload) bool { return strings.HasPrefix(w.Name, "Token") })
	ab, err := bench.LoadAB(ctx, servers[0], servers[1], abWorkloads, bench.LoadOptions{Duration: 200 * time.Millisecond, Connections: 2, MaxRequests: 5_000}, 2)
	if err != nil {
		t.Fatal(err)
	}
	abOut := bench.ABTable(ab)
	t.Logf("\n%s", abOut)
	if len(ab) != len(abWorkloads) || strings.Count(abOut, "\n") != len(abWorkloads)+2 {
		t.Fatalf("A/B table:\n%s", abOut)
	}
	for _, r := range ab {
		if !r.Same || len(r.Base) != 2 || len(r.New) != 2 || r.Ratio() <= 0 || r.Ceiling.Requests == 0 {
			t.Errorf("A/B %s: %+v", r.Workload, r)
		}
	}

	// The exports, over HTTP and in-process: the same rows both ways.
	exports, err := bench.Exports(ctx, servers[0], "sqlite:"+filepath.Join(dir, evm.TracesParity+".db"), chain, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", bench.ExportTable(exports))
	for _, r := range exports {
		if r.Rows == 0 || r.HTTP <= 0 || r.Raw <= 0 || r.Bytes == 0 {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}

	smokeFlood(t, bin, dir, "sqlite:"+filepath.Join(dir, evm.TracesParity+".db"))
}

// smokeFlood runs `cqbench flood` on the smoke test's dataset for a few
// hundred milliseconds a measurement, fair share off then on: the command
// must run and print a row for each, with every refusal of the flooder
// carrying Retry-After and a detail. It asserts no speed.
func smokeFlood(t *testing.T, chainquery, dir, dsn string) {
	cqbench := buildCommand(t, "cqbench", "./internal/cmd/cqbench")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cqbench, "flood", "--chainquery", chainquery, "--dir", dir, "--db", dsn,
		"--seed", "3", "--blocks", "20", "--txs", "10", "--accounts", "500",
		"--duration", "300ms", "--flood-connections", "4", "--fair-share", "both", "--flood-timeout", "20s")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cqbench flood: %v\n%s\n%s", err, out, stderr.String())
	}
	t.Logf("\n%s", out)
	var rows [][]string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "| sqlite |") {
			rows = append(rows, strings.Split(strings.Trim(l, "| "), " | "))
		}
	}
	if len(rows) != 2 {
		t.Fatalf("flood table: %d rows, want 2 (fair share off, on):\n%s", len(rows), out)
	}
	for i, preset := range []string{"off", "on"} {
		r := rows[i]
		if len(r) != 20 || r[1] != preset || r[2] != "4" {
			t.Errorf("flood row %d: %q", i, r)
			continue
		}
		if refusals := r[18]; refusals != "none" && !strings.HasPrefix(refusals, "all ") {
			t.Errorf("fair share %s: 429/503 with Retry-After and detail: %s\n%s", preset, refusals, out)
		}
	}
}

// getJSON makes one request and decodes its 200 answer into v; it returns
// the body.
func getJSON(t *testing.T, s *bench.Server, method, path, body string, v any) string {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("apikey", s.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestLoad_NoAcceptEncoding checks that the load asks for answers as they
// are, as the ceiling serves them: Go's transport (and so vegeta's) sends
// Accept-Encoding: gzip unless told not to, and the server would then
// compress what the ceiling sends plain.
func TestLoad_NoAcceptEncoding(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Accept-Encoding")]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"block_number":1}`)
	}))
	defer srv.Close()
	s := &bench.Server{URL: srv.URL, Key: "k"}
	w := bench.Workload{Name: "latest", Targets: []vegeta.Target{{Method: "GET", URL: "/api/v1/customer/polygon/blocks/latest"}}, Count: -1}
	rows, err := bench.Load(context.Background(), s, []bench.Workload{w}, bench.LoadOptions{Duration: 200 * time.Millisecond, Connections: 2, MaxRequests: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Server.Requests == 0 || rows[0].Server.Errors+rows[0].Ceiling.Errors != 0 {
		t.Fatalf("load rows %+v", rows)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[""] == 0 {
		t.Errorf("Accept-Encoding sent (value: requests): %v; want none", seen)
	}
}

// TestLoad_Rounds checks that a load in rounds measures the pair each
// round and reports the round of the median share.
func TestLoad_Rounds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"block_number":1}`)
	}))
	defer srv.Close()
	s := &bench.Server{URL: srv.URL, Key: "k"}
	w := bench.Workload{Name: "latest", Targets: []vegeta.Target{{Method: "GET", URL: "/api/v1/customer/polygon/blocks/latest"}}, Count: -1}
	rows, err := bench.Load(context.Background(), s, []bench.Workload{w}, bench.LoadOptions{Duration: 100 * time.Millisecond, Connections: 2, MaxRequests: 100, Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || len(rows[0].Rounds) != 3 {
		t.Fatalf("load rows %+v", rows)
	}
	r := rows[0]
	var ratios []float64
	for _, rd := range r.Rounds {
		if rd.Server.Requests == 0 || rd.Ceiling.Requests == 0 {
			t.Fatalf("a round not measured: %+v", rd)
		}
		ratios = append(ratios, rd.Ratio())
	}
	slices.Sort(ratios)
	if r.Ratio() != ratios[1] {
		t.Errorf("row's share %v, rounds' %v: want the median", r.Ratio(), ratios)
	}
	if table := bench.LoadTable(rows); !strings.Contains(table, "% each round") || strings.Count(strings.Split(table, "\n")[2], " / ") != 2 {
		t.Errorf("table without every round's share:\n%s", table)
	}
}
