package bench_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery/internal/bench"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/testenv"
)

func TestPlanGrowth(t *testing.T) {
	const first = 100
	steps, err := bench.PlanGrowth(first, 1000, 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []bench.GrowStep{
		{From: 100, To: 399, Stored: 300, Reads: true},
		{From: 400, To: 699, Stored: 600},
		{From: 700, To: 999, Stored: 900},
		{From: 1000, To: 1099, Stored: 1000, Reads: true}, // the rest
	}
	if !reflect.DeepEqual(steps, want) {
		t.Errorf("steps of 300 over 1000 blocks:\n got %+v\nwant %+v", steps, want)
	}

	steps, err = bench.PlanGrowth(first, 50_000, 5000, []int{10_000, 50_000})
	if err != nil {
		t.Fatal(err)
	}
	var reads []int
	for _, s := range steps {
		if s.Reads {
			reads = append(reads, s.Stored)
		}
	}
	if len(steps) != 10 || steps[9].To != first+49_999 || !slices.Equal(reads, []int{10_000, 50_000}) {
		t.Errorf("10 steps of 5000, reads at 10,000 and 50,000: %+v", steps)
	}

	if steps, err := bench.PlanGrowth(first, 100, 500, []int{}); err != nil || len(steps) != 1 || steps[0].Reads || steps[0].To != first+99 {
		t.Errorf("a step larger than the run, no reads: %+v, %v", steps, err)
	}
	for _, c := range []struct {
		blocks, step int
		at           []int
	}{
		{0, 10, nil}, {10, 0, nil}, {1000, 300, []int{500}}, {10_000, 1, nil},
	} {
		if _, err := bench.PlanGrowth(first, c.blocks, c.step, c.at); err == nil {
			t.Errorf("PlanGrowth(%d, %d, %v): no error", c.blocks, c.step, c.at)
		}
	}
}

func TestParseReadsAt(t *testing.T) {
	for in, want := range map[string][]int{"": nil, "none": {}, "5000,50000": {5000, 50000}, " 20 , 60": {20, 60}} {
		got, err := bench.ParseReadsAt(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseReadsAt(%q) = %#v, %v; want %#v", in, got, err, want)
		}
	}
	for _, in := range []string{"5000,", "x", "0", "-5"} {
		if _, err := bench.ParseReadsAt(in); err == nil {
			t.Errorf("ParseReadsAt(%q): no error", in)
		}
	}
}

// TestGrowReads checks that a growth run's reads are the seven uncached
// workloads it promises, as the load run defines them.
func TestGrowReads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"count":0}`) // the counts Workloads asks of Filter Traces
	}))
	defer srv.Close()
	c, err := polychain.New(polychain.Config{Seed: 3, Blocks: 200, TxPerBlock: 10, Accounts: 500})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := bench.Workloads(context.Background(), &bench.Server{URL: srv.URL, Key: "k"}, c, bench.Tokens{}, 4, bench.GrowReads.MatchString)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
	}
	want := []string{
		"Get Block, full transactions", "Get Block Receipts, limit 50", "Get Transaction Logs",
		"Filter Traces, 100 blocks, limit 50", "Filter Traces, 100 blocks, hot to_address (rank 1)",
		"Filter Traces, 100 blocks, cold to_address (rank 500)", "Filter Traces, 100 blocks, offset 1000",
	}
	if !slices.Equal(names, want) {
		t.Errorf("reads:\n got %q\nwant %q", names, want)
	}
}

// growRows are three steps of 1000 blocks, read after the first and the
// last.
func growRows() []*bench.GrowRow {
	step := func(i int, bps, raw float64, disk int64) *bench.GrowRow {
		from := uint64(65_000_000 + 1000*i)
		return &bench.GrowRow{GrowStep: bench.GrowStep{From: from, To: from + 999, Stored: 1000 * (i + 1)},
			Ingest: &bench.IngestResult{Blocks: 1000, BlocksPS: bps, RawBlocksPS: raw, PeakRSS: 200 << 20, CPUSecs: 5.5}, Disk: disk}
	}
	read := func(name string, rate float64, p50 time.Duration) *bench.LoadRow {
		return &bench.LoadRow{Workload: name, Count: -1, Ceiling: bench.Stats{Rate: 1000, P50: time.Millisecond},
			Server: bench.Stats{Rate: rate, P50: p50, P99: 4 * p50}}
	}
	rows := []*bench.GrowRow{step(0, 30, 200, 450_000_000), step(1, 28, 180, 910_000_000), step(2, 24, 210, 1_380_000_000)}
	rows[0].Reads = []*bench.LoadRow{read("Get Block, full transactions", 400, 2*time.Millisecond),
		read("Get Transaction Logs", 400, 4*time.Millisecond), read("only first", 400, time.Millisecond)}
	rows[0].ServeRSS = 90 << 20
	rows[2].Reads = []*bench.LoadRow{read("Get Block, full transactions", 380, 2200*time.Microsecond),
		read("Get Transaction Logs", 300, 6*time.Millisecond)}
	rows[2].ServeRSS = 120 << 20
	return rows
}

func TestGrowthRatios(t *testing.T) {
	rows := growRows()
	c, ok := bench.IngestGrowth(rows)
	if !ok || c.FirstAt != 1000 || c.LastAt != 3000 || c.Ratio() != 0.8 || c.Met() || c.FirstRaw != 0.15 {
		t.Errorf("ingestion growth %+v (ratio %v, met %v)", c, c.Ratio(), c.Met())
	}
	if c.Last = 26; !c.Met() { // 0.867x: within 15%
		t.Errorf("%v blocks/s after %v: not within 15%%", c.Last, c.First)
	}
	if _, ok := bench.IngestGrowth(rows[:1]); ok {
		t.Error("one step compared with itself")
	}
	ps := bench.P50Growth(rows)
	if len(ps) != 2 || ps[0].Workload != "Get Block, full transactions" || ps[0].FirstAt != 1000 || ps[0].LastAt != 3000 {
		t.Fatalf("p50 growth %+v", ps)
	}
	if r := ps[0].Ratio(); r < 1.0999 || r > 1.1001 || !ps[0].Met() {
		t.Errorf("2.2 ms after 2 ms: %v, met %v", r, ps[0].Met())
	}
	if ps[1].Ratio() != 1.5 || ps[1].Met() {
		t.Errorf("6 ms after 4 ms: %v, met %v", ps[1].Ratio(), ps[1].Met())
	}
	rows[2].Reads = nil
	if ps := bench.P50Growth(rows); ps != nil {
		t.Errorf("one checkpoint compared with itself: %+v", ps)
	}
}

func TestGrowTables(t *testing.T) {
	rows := growRows()
	curve := bench.GrowthTable(rows)
	t.Logf("\n%s", curve)
	lines := strings.Split(strings.TrimSpace(curve), "\n")
	if len(lines) != 5 {
		t.Fatalf("growth table: %d lines, want 5:\n%s", len(lines), curve)
	}
	for i, want := range []string{
		"| 1000 | 65000000-65000999 | 200.0 blocks/s | 30.0 blocks/s | 15% | 429.2 MB | 450.0 | 5.50 ms | 200 MB | 90 MB |",
		"| 2000 | 65001000-65001999 | 180.0 blocks/s | 28.0 blocks/s | 16% | 867.8 MB | 455.0 | 5.50 ms | 200 MB |  |",
		"| 3000 | 65002000-65002999 | 210.0 blocks/s | 24.0 blocks/s | 11% | 1.29 GB | 460.0 | 5.50 ms | 200 MB | 120 MB |",
	} {
		if lines[i+2] != want {
			t.Errorf("growth row %d:\n got %s\nwant %s", i, lines[i+2], want)
		}
	}
	reads := bench.GrowReadsTable(rows)
	if n := strings.Count(reads, "\n"); n != 7 || !strings.Contains(reads, "| 3000 | Get Transaction Logs |  | 300 | 30.0% | 6.00 ms | 24.00 ms | 1.00 ms | 0 |") {
		t.Errorf("reads table (%d lines):\n%s", n, reads)
	}
	sum := bench.GrowSummary(rows)
	t.Logf("\n%s", sum)
	for _, want := range []string{
		"last step (3000 blocks stored) vs first (1000): 24.0 vs 30.0 blocks/s = 0.80x (target within 15%: missed); 11% vs 15% of the raw fetch",
		"| workload | p50 at 1000 blocks | p50 at 3000 blocks | last / first (target ≤ 1.25x) | % of ceiling, first → last |",
		"| Get Block, full transactions | 2.00 ms | 2.20 ms | 1.10x, met | 40.0% → 38.0% |",
		"| Get Transaction Logs | 4.00 ms | 6.00 ms | 1.50x, missed | 40.0% → 30.0% |",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "only first") {
		t.Errorf("a workload read at one checkpoint only was compared:\n%s", sum)
	}
}

func TestDiskSize(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	if _, err := bench.DiskSize(ctx, "sqlite:"+path); err == nil {
		t.Error("no error for a missing file")
	}
	if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := bench.DiskSize(ctx, "sqlite:"+path); n != 4096 || err != nil {
		t.Errorf("without a WAL: %d, %v", n, err)
	}
	if err := os.WriteFile(path+"-wal", make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := bench.DiskSize(ctx, "sqlite:"+path); n != 5096 || err != nil {
		t.Errorf("with a WAL: %d, %v", n, err)
	}
}

func TestDiskSizePostgres(t *testing.T) {
	dsn := testenv.Postgres(t, testenv.PostgresAdmin)
	n, err := bench.DiskSize(context.Background(), dsn)
	if err != nil || n < 1<<20 { // an empty database takes several MB
		t.Errorf("pg_database_size: %d, %v", n, err)
	}
}

// TestGrowSmoke runs `cqbench grow` on three steps of 20 blocks, reads
// after the first and the last for 300 ms a measurement: it must print a
// row per step, the seven reads at each checkpoint without errors, and the
// comparisons. It asserts no speed.
func TestGrowSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	chainquery := buildChainquery(t)
	cqbench := buildCommand(t, "cqbench", "./internal/cmd/cqbench")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, cqbench, "grow", "--chainquery", chainquery, "--dir", dir,
		"--seed", "3", "--blocks", "60", "--step", "20", "--txs", "10", "--accounts", "500",
		"--duration", "300ms", "--connections", "4", "--targets", "4")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cqbench grow: %v\n%s\n%s", err, out, stderr.String())
	}
	t.Logf("\n%s", out)
	var steps, reads []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |"), " | ")
		switch {
		case len(f) == 10 && strings.Contains(l, "blocks/s"):
			steps = append(steps, f[0])
			if ms, err := strconv.ParseFloat(strings.TrimSuffix(f[7], " ms"), 64); err != nil || ms <= 0 {
				t.Errorf("the ingester's CPU a block is %q in %s", f[7], l)
			}
		case len(f) == 9 && (f[0] == "20" || f[0] == "60"):
			reads = append(reads, f[0])
			if f[8] != "0" {
				t.Errorf("errors in %s", l)
			}
		}
	}
	if !slices.Equal(steps, []string{"20", "40", "60"}) || len(reads) != 14 {
		t.Errorf("steps %q (want 20, 40, 60), %d reads (want 7 at 20 and 60 blocks):\n%s", steps, len(reads), out)
	}
	for _, want := range []string{"last step (60 blocks stored) vs first (20)", "| p50 at 20 blocks | p50 at 60 blocks |"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "grow-cache")); !os.IsNotExist(err) {
		t.Errorf("the nodes' cache is left behind: %v", err)
	}
}
