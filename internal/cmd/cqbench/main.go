// Command cqbench is the Polygon-shaped benchmark harness (package
// internal/bench): a synthetic Polygon node, ingestion by the real
// `chainquery ingest evm` against the raw fetch rate, and a load run of the
// API workloads against the real `chainquery serve` next to a ceiling, and
// a growth run that builds the dataset in steps and reads it at checkpoints,
// to see how the store behaves as it grows. It is a binary of its own so
// that its load generator (vegeta) never enters the service's.
// scripts/bench runs it; docs/benchmarks.md has the figures.
//
//	cqbench node   [chain flags] [--cache DIR] [--listen 127.0.0.1:0] [--prerender FIRST-LAST] [--delay D]
//	cqbench shape  [chain flags] [--sample N]
//	cqbench ingest [chain flags] --chainquery BIN [--dir DIR] [--db DSN] [--pg DSN] [--traces M] [--node-cpus LIST] [--node-delay D]
//	cqbench load   [chain flags] --chainquery BIN [--dir DIR] [--db DSN] [--duration 8s] [--connections 32] [--only REGEXP]
//	cqbench flood  [chain flags] --chainquery BIN [--dir DIR] [--db DSN] [--duration 5s] [--fair-share both] [--flood-connections 16,64]
//	cqbench encode [chain flags] [--spans 1,100,1000]
//	cqbench grow   [chain flags] --chainquery BIN [--dir DIR] [--db DSN | --pg DSN] [--blocks 50000] [--step 5000] [--reads-at 5000,50000]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/bench"
	"github.com/chainquery/chainquery/internal/polychain"
)

const usage = `Usage:
  cqbench node   [chain flags] [--cache DIR] [--listen 127.0.0.1:0] [--prerender FIRST-LAST] [--delay D]
  cqbench shape  [chain flags] [--sample N]
  cqbench ingest [chain flags] --chainquery BIN [--dir DIR] [--db DSN] [--pg DSN]
                 [--traces trace_block|debug_trace|both] [--batch N] [--concurrency N] [--node-cpus LIST] [--node-delay D]
  cqbench load   [chain flags] --chainquery BIN [--dir DIR] [--db DSN] [--duration 8s]
                 [--connections 32] [--max-requests N] [--targets 32] [--only REGEXP] [--server-cpus LIST] [--server-cpuprofile FILE]
                 [--answer-cache-mb N] [--rounds N] [--baseline BIN --baseline-db DSN [--baseline-primary DSN]]
  cqbench flood  [chain flags] --chainquery BIN [--dir DIR] [--db DSN] [--duration 5s]
                 [--fair-share on|off|both] [--flood-connections 16,64] [--connections 4]
                 [--serve-flag FLAG]... [--flood-timeout 30s] [--answer-cache-mb 0] [--server-cpus LIST]
  cqbench encode [chain flags] [--spans 1,100,1000]
  cqbench grow   [chain flags] --chainquery BIN [--dir DIR] [--db DSN | --pg DSN] [--blocks 50000]
                 [--step 5000] [--reads-at 5000,50000|none] [--traces trace_block|debug_trace]
                 [--batch N] [--concurrency N] [--node-cpus LIST] [--duration 5s] [--connections 32]
                 [--max-requests N] [--targets 32] [--only REGEXP] [--server-cpus LIST]
  cqbench export [chain flags] --chainquery BIN [--dir DIR] [--db DSN] [--rounds 3] [--server-cpus LIST]
  cqbench history [chain flags] --chainquery BIN [--dir DIR] [--db DSN] [--copies 19] [--page-copies 1]
                 [--duration 3s] [--rounds 3] [--only REGEXP] [--server-cpuprofile FILE]
  cqbench floor  [chain flags] --pg DSN --db sqlite:PATH [--duration 3s] [--rounds 4] [--connections 32]

node serves the chain over JSON-RPC on 127.0.0.1; shape prints what its blocks
hold; ingest builds the dataset with the real ingester, measured against the
raw fetch rate of the same calls; load measures every API workload against the
real server, next to a bare net/http ceiling (with --baseline, against an
older build on its own dataset too, in alternating rounds); flood measures what one key
flooding the heaviest Filter Traces leaves another key's Get Block, with fair
share between keys off and on (ingest the dataset first); encode measures what
the history encoding (package history) makes of the chain's blocks, with posting
lists spanning each of --spans blocks; grow builds a store of --blocks blocks
(50,000 by default) in steps of --step with the real ingester, each step
next to the raw fetch of its range, and prints per step the rate, its share of
the raw rate, the store's size on disk per block, the ingester's CPU a block
and its peak RSS,
and at --reads-at the uncached reads (answer cache off) against the real
server next to the ceiling, then the last step's rate and each read's p50
against the first's; export reads Export Logs and Export Traces over
every block to their end over HTTP, next to the raw read of the same rows by
the same store in-process; history makes the chain's history --copies times
longer in the dataset (headers, counts and epochs copied; no segments) and
measures, one request at a time, Filter Traces by the hot recipient over all
of it and over its first sixteenth; floor measures what one store call a
request costs each store (SELECT 1, the latest block, a block's header) in
bare net/http servers, next to a ceiling that makes none. Pin with taskset: run
'taskset -c 1 cqbench ingest --node-cpus 0 ...' to give the node CPU 0 and the
ingester (and the raw fetch) CPU 1.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "cqbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "node":
		return runNode(ctx, args[1:])
	case "shape":
		return runShape(args[1:])
	case "ingest":
		return runIngest(ctx, args[1:])
	case "load":
		return runLoad(ctx, args[1:])
	case "flood":
		return runFlood(ctx, args[1:])
	case "encode":
		return runEncode(args[1:])
	case "grow":
		return runGrow(ctx, args[1:])
	case "floor":
		return runFloor(ctx, args[1:])
	case "history":
		return runHistory(ctx, args[1:])
	case "export":
		return runExport(ctx, args[1:])
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// chainFlags are the generator's settings, shared by every command.
type chainFlags struct{ cfg polychain.Config }

func (c *chainFlags) register(fs *flag.FlagSet) {
	fs.Uint64Var(&c.cfg.Seed, "seed", 1, "generator `SEED`")
	fs.Uint64Var(&c.cfg.Start, "start", polychain.DefaultStart, "number of the first block")
	fs.IntVar(&c.cfg.Blocks, "blocks", 5000, "number of blocks")
	fs.IntVar(&c.cfg.TxPerBlock, "txs", polychain.DefaultTxPerBlock, "mean transactions per block")
	fs.IntVar(&c.cfg.Accounts, "accounts", polychain.DefaultAccounts, "accounts the addresses are drawn from (Zipf)")
	fs.Float64Var(&c.cfg.HotShare, "hot-share", polychain.DefaultHotShare, "probability that a Zipf draw is the hottest account")
}

// args renders the flags back, for a child process.
func (c *chainFlags) args() []string {
	return []string{"--seed", strconv.FormatUint(c.cfg.Seed, 10), "--start", strconv.FormatUint(c.cfg.Start, 10),
		"--blocks", strconv.Itoa(c.cfg.Blocks), "--txs", strconv.Itoa(c.cfg.TxPerBlock),
		"--accounts", strconv.Itoa(c.cfg.Accounts), "--hot-share", strconv.FormatFloat(c.cfg.HotShare, 'g', -1, 64)}
}

func (c *chainFlags) chain() (*polychain.Chain, error) { return polychain.New(c.cfg) }

func parse(fs *flag.FlagSet, args []string) error {
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage, "\nFlags:\n"); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

func say(s string) { fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), s) }

func runNode(ctx context.Context, args []string) error {
	var cf chainFlags
	fs := flag.NewFlagSet("cqbench node", flag.ContinueOnError)
	cf.register(fs)
	cache := fs.String("cache", "", "cache `DIR` for the rendered answers (empty: memory)")
	listen := fs.String("listen", "127.0.0.1:0", "`ADDR` to listen on (loopback only)")
	render := fs.String("prerender", "", "render only blocks `FIRST-LAST` before listening, the others when first asked for (default: every block)")
	delay := fs.Duration("delay", 0, "how long the node takes over each call before answering, a batch's calls one after another (`D`, such as 100ms)")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := cf.chain()
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("--listen must be a loopback host:port")
	}
	node := &polychain.Node{Chain: c, Delay: *delay}
	if *cache != "" {
		node.Dir = polychain.CacheDir(*cache, c.Config())
	}
	start := time.Now()
	first, last := c.First(), c.Last()
	if *render == "" {
		err = node.Prerender(ctx, 0)
	} else if first, last, err = parseBlockRange(*render); err == nil {
		if !c.Has(first) || !c.Has(last) {
			return fmt.Errorf("--prerender %s: the chain holds blocks %d-%d", *render, c.First(), c.Last())
		}
		err = prerender(ctx, node, first, last)
	}
	if err != nil {
		return err
	}
	say(fmt.Sprintf("rendered %d blocks in %s", last-first+1, time.Since(start).Round(time.Millisecond)))
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: node}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Printf("polychain node listening on http://%s (blocks %d-%d)\n", ln.Addr(), c.First(), c.Last())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func runShape(args []string) error {
	var cf chainFlags
	fs := flag.NewFlagSet("cqbench shape", flag.ContinueOnError)
	cf.register(fs)
	sample := fs.Int("sample", 50, "blocks to measure, spread over the chain")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := cf.chain()
	if err != nil {
		return err
	}
	n := uint64(min(*sample, c.Config().Blocks))
	fmt.Println(polychain.Measure(c, c.First(), c.First()+n-1))
	fmt.Printf("Zipf exponent %.4f over %d accounts\n", c.ZipfExponent(), c.Config().Accounts)
	return nil
}

// workFlags are the flags of ingest and load.
type workFlags struct {
	chainFlags
	chainquery, dir, db string
}

func (w *workFlags) register(fs *flag.FlagSet) {
	w.chainFlags.register(fs)
	fs.StringVar(&w.chainquery, "chainquery", "", "the chainquery `BIN`ary to measure (go build -o BIN ./cmd/chainquery)")
	fs.StringVar(&w.dir, "dir", filepath.Join(os.TempDir(), "chainquery-bench"), "work `DIR`: the node's cache and the SQLite datasets")
	fs.StringVar(&w.db, "db", "", "dataset `DSN` (default sqlite:DIR/polygon-SEED-BLOCKS-TXS.db)")
}

func (w *workFlags) check() error {
	if w.chainquery == "" {
		return errors.New("--chainquery is required")
	}
	if w.db == "" {
		w.db = w.defaultDB("")
	}
	return os.MkdirAll(w.dir, 0o755)
}

func (w *workFlags) defaultDB(suffix string) string {
	c := w.cfg
	return "sqlite:" + filepath.Join(w.dir, fmt.Sprintf("polygon-%d-%d-%d%s.db", c.Seed, c.Blocks, c.TxPerBlock, suffix))
}

// startNode runs `cqbench node` as a child with its answers in cache,
// pinned to cpus if given, with extra flags of node.
func (w *workFlags) startNode(ctx context.Context, cpus, cache string, extra ...string) (*bench.Proc, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	args := append(append([]string{"node", "--cache", cache}, w.args()...), extra...)
	p, err := bench.Start(bench.Command(cpus, self, args...))
	if err != nil {
		return nil, "", err
	}
	url, err := p.WaitFor(ctx, regexp.MustCompile(`listening on (http://\S+)`), 2*time.Hour)
	if err != nil {
		p.Stop()
		return nil, "", err
	}
	return p, url, nil
}

func runIngest(ctx context.Context, args []string) error {
	var w workFlags
	fs := flag.NewFlagSet("cqbench ingest", flag.ContinueOnError)
	w.register(fs)
	pg := fs.String("pg", "", "PostgreSQL `DSN` to ingest into as well (its database must hold no polygon blocks)")
	traces := fs.String("traces", evm.TracesParity, "trace `METHOD`: trace_block, debug_trace, or both (each into its own SQLite file)")
	batch := fs.Int("batch", 10, "blocks per fetch, for the ingester and the raw fetch alike")
	concurrency := fs.Int("concurrency", 4, "fetches in flight, for both")
	nodeCPUs := fs.String("node-cpus", "", "taskset CPU `LIST` for the node (run cqbench itself under taskset for the ingester's)")
	nodeDelay := fs.Duration("node-delay", 0, "the node's --delay: how long it takes over each call (`D`)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := w.check(); err != nil {
		return err
	}
	c, err := w.chain()
	if err != nil {
		return err
	}
	say(polychain.Measure(c, c.First(), c.First()+uint64(min(20, c.Config().Blocks))-1).String())
	say("starting the node (rendering every block once, into " + filepath.Join(w.dir, "cache") + ")")
	node, url, err := w.startNode(ctx, *nodeCPUs, filepath.Join(w.dir, "cache"), "--delay", nodeDelay.String())
	if err != nil {
		return err
	}
	defer node.Stop()
	say("node at " + url)

	type run struct{ dsn, traces string }
	var runs []run
	switch *traces {
	case evm.TracesParity, evm.TracesCallTracer:
		runs = append(runs, run{w.db, *traces})
	case "both":
		runs = append(runs, run{w.db, evm.TracesParity}, run{w.defaultDB("-calltracer"), evm.TracesCallTracer})
	default:
		return fmt.Errorf("--traces: want trace_block, debug_trace or both")
	}
	if *pg != "" {
		runs = append(runs, run{*pg, runs[0].traces})
	}
	var results []*bench.IngestResult
	for _, r := range runs {
		if err := freshSQLite(r.dsn, w.dir); err != nil {
			return err
		}
		res, err := bench.Ingest(ctx, bench.IngestOptions{Chainquery: w.chainquery, DSN: r.dsn, RPC: url,
			From: c.First(), To: c.Last(), Traces: r.traces, Batch: *batch, Concurrency: *concurrency, Progress: say})
		if err != nil {
			return err
		}
		results = append(results, res)
		if fi, err := os.Stat(strings.TrimPrefix(r.dsn, "sqlite:")); err == nil {
			say(fmt.Sprintf("%s: %s", r.dsn, bench.MB(fi.Size())))
		}
	}
	fmt.Print(bench.IngestTable(results))
	return nil
}

// freshSQLite removes a SQLite dataset of an earlier run, but only inside
// the work directory; a PostgreSQL database is left as it is.
func freshSQLite(dsn, dir string) error {
	path, ok := strings.CutPrefix(dsn, "sqlite:")
	if !ok {
		return nil
	}
	abs, _ := filepath.Abs(path)
	absDir, _ := filepath.Abs(dir)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	if filepath.Dir(abs) != absDir || !strings.HasSuffix(abs, ".db") {
		return fmt.Errorf("%s exists and is not a dataset of --dir: remove it or choose another --db", path)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

func runLoad(ctx context.Context, args []string) error {
	var w workFlags
	fs := flag.NewFlagSet("cqbench load", flag.ContinueOnError)
	w.register(fs)
	duration := fs.Duration("duration", 8*time.Second, "length of each measurement (ceiling, then server)")
	connections := fs.Int("connections", 32, "concurrent connections")
	maxRequests := fs.Uint64("max-requests", 5_000_000, "most requests per measurement")
	targets := fs.Int("targets", 32, "distinct requests per workload (blocks, ranges, transactions)")
	only := fs.String("only", "", "run only the workloads whose name matches `REGEXP`")
	serverCPUs := fs.String("server-cpus", "", "taskset CPU `LIST` for the server")
	cpuProfile := fs.String("server-cpuprofile", "", "write the server's CPU profile over the whole run to `FILE`")
	answerCache := fs.Int("answer-cache-mb", -1, "serve's --answer-cache-mb `MIB` (0: the store answers every request); -1: serve's default")
	baseline := fs.String("baseline", "", "A/B: the baseline chainquery `BIN`ary, served on --baseline-db and measured in rounds against --chainquery")
	baselineDB := fs.String("baseline-db", "", "A/B: the baseline's dataset `DSN`, built by the baseline's own cqbench (and its token balances seeded by its own cqbench load)")
	baselinePrimary := fs.String("baseline-primary", "", "A/B: the `DSN` of the primary whose streaming replica --baseline-db is: the baseline serves with --db this --read-db --baseline-db, its API key created here (PostgreSQL)")
	rounds := fs.Int("rounds", 0, "rounds of every workload: A/B, of the two servers, baseline first in even rounds and last in odd ones (default 2); alone, of the ceiling then the server, each row the round of the median share (default 1)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := w.check(); err != nil {
		return err
	}
	if (*baseline == "") != (*baselineDB == "") {
		return errors.New("--baseline and --baseline-db go together")
	}
	var serveArgs []string
	if *cpuProfile != "" {
		serveArgs = append(serveArgs, "--cpuprofile", *cpuProfile)
	}
	if *answerCache >= 0 {
		serveArgs = append(serveArgs, "--answer-cache-mb", strconv.Itoa(*answerCache))
	}
	c, err := w.chain()
	if err != nil {
		return err
	}
	var match func(string) bool
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return err
		}
		match = re.MatchString
	}
	tokens := bench.Tokens{Seed: c.Config().Seed, Changes: bench.TokenChanges}
	say("seeding Solana token balances (once per dataset)")
	if n, err := tokens.Write(ctx, w.db); err != nil {
		return err
	} else if n > 0 {
		say(fmt.Sprintf("%d token balance changes written", n))
	}
	say("starting chainquery serve on " + bench.RedactDSN(w.db))
	s, err := bench.StartServer(ctx, w.chainquery, w.db, *serverCPUs, serveArgs...)
	if err != nil {
		return err
	}
	defer s.Stop()
	ws, err := bench.Workloads(ctx, s, c, tokens, *targets, match)
	if err != nil {
		return err
	}
	a := bench.FindAddresses(c)
	say(fmt.Sprintf("hot %s (rank %d), warm %s (rank %d), cold %s (rank %d)", a.Hot, a.HotRank, a.Warm, a.WarmRank, a.Cold, a.ColdRank))
	o := bench.LoadOptions{Duration: *duration, Connections: *connections, MaxRequests: *maxRequests, Progress: say}
	if *baseline != "" {
		if *rounds <= 0 {
			*rounds = 2
		}
		// The baseline's store is opened by the baseline alone: this build's
		// store code would migrate it.
		say("starting the baseline's chainquery serve on " + bench.RedactDSN(*baselineDB))
		primary := *baselineDB
		if *baselinePrimary != "" {
			primary = *baselinePrimary
		}
		b, err := bench.StartReplicaServer(ctx, *baseline, *baselineDB, primary, *serverCPUs, serveArgs...)
		if err != nil {
			return err
		}
		defer b.Stop()
		rows, err := bench.LoadAB(ctx, b, s, ws, o, *rounds)
		fmt.Printf("%d blocks (%d-%d), %s per measurement, %d connections, %d rounds; baseline %s, new %s\n\n",
			c.Config().Blocks, c.First(), c.Last(), *duration, *connections, *rounds, *baseline, w.chainquery)
		fmt.Print(bench.ABTable(rows))
		return err
	}
	o.Rounds = *rounds
	rows, err := bench.Load(ctx, s, ws, o)
	fmt.Printf("%d blocks (%d-%d), %s per measurement, %d connections, %d rounds; server peak RSS (VmHWM) after each workload\n\n",
		c.Config().Blocks, c.First(), c.Last(), *duration, *connections, max(1, *rounds))
	fmt.Print(bench.LoadTable(rows))
	return err
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runFlood(ctx context.Context, args []string) error {
	var w workFlags
	fs := flag.NewFlagSet("cqbench flood", flag.ContinueOnError)
	w.register(fs)
	duration := fs.Duration("duration", 5*time.Second, "length of each of B's measurements (alone, then under the flood)")
	bConns := fs.Int("connections", 4, "B's connections (Get Block)")
	floods := fs.String("flood-connections", "16,64", "A's connections, `LIST`: one row each")
	fairShare := fs.String("fair-share", "both", "`PRESET`: on (serve's defaults), off (--fair-share=false --request-timeout=0), or both, off first")
	var serveFlags stringList
	fs.Var(&serveFlags, "serve-flag", "a `FLAG` of serve for every server, after the preset's (so it wins); repeatable")
	timeout := fs.Duration("flood-timeout", 30*time.Second, "A's client timeout per request: past it the request counts as hung")
	maxRequests := fs.Uint64("max-requests", 5_000_000, "most requests of A's flood and of each of B's measurements")
	serverCPUs := fs.String("server-cpus", "", "taskset CPU `LIST` for the server")
	answerCache := fs.Int("answer-cache-mb", 0, "serve's --answer-cache-mb `MIB` (0: the store answers every request); -1: serve's default")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := w.check(); err != nil {
		return err
	}
	var presets []bench.FloodPreset
	switch *fairShare {
	case "on":
		presets = []bench.FloodPreset{bench.FairShareOn}
	case "off":
		presets = []bench.FloodPreset{bench.FairShareOff}
	case "both":
		presets = []bench.FloodPreset{bench.FairShareOff, bench.FairShareOn}
	default:
		return fmt.Errorf("--fair-share: want on, off or both")
	}
	var conns []int
	for _, f := range strings.Split(*floods, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return fmt.Errorf("--flood-connections: want a list of numbers from 1 to 1024, such as 16,64")
		}
		conns = append(conns, n)
	}
	if *duration <= 0 || *bConns < 1 || *timeout <= 0 {
		return fmt.Errorf("--duration, --connections and --flood-timeout must be positive")
	}
	var serveArgs []string
	if *answerCache >= 0 {
		serveArgs = append(serveArgs, "--answer-cache-mb", strconv.Itoa(*answerCache))
	}
	serveArgs = append(serveArgs, serveFlags...)
	c, err := w.chain()
	if err != nil {
		return err
	}
	rep, err := bench.Flood(ctx, c, bench.FloodOptions{Chainquery: w.chainquery, DSN: w.db, CPUs: *serverCPUs,
		ServeArgs: serveArgs, Presets: presets, Floods: conns, Duration: *duration, BConns: *bConns,
		Timeout: *timeout, MaxRequest: *maxRequests, Progress: say})
	if rep != nil && len(rep.Rows) > 0 {
		fmt.Print(rep.Header(), "\n", rep.Table())
	}
	return err
}

// runEncode measures what the history encoding (package history) makes of
// the chain: segments per block and posting lists sharded by each span.
func runEncode(args []string) error {
	fs := flag.NewFlagSet("cqbench encode", flag.ContinueOnError)
	var chain chainFlags
	chain.register(fs)
	spans := fs.String("spans", "1,100,1000", "blocks a posting list spans, `LIST`: one row each")
	if err := parse(fs, args); err != nil {
		return err
	}
	var buckets []uint64
	for _, s := range strings.Split(*spans, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("--spans: want a list of block counts such as 1,100,1000")
		}
		buckets = append(buckets, n)
	}
	c, err := chain.chain()
	if err != nil {
		return err
	}
	say(fmt.Sprintf("encode: %d blocks", chain.cfg.Blocks))
	rs, err := bench.Encode(c, buckets)
	if err != nil {
		return err
	}
	fmt.Print(bench.EncodeTable(rs))
	return nil
}

func runHistory(ctx context.Context, args []string) error {
	var w workFlags
	fs := flag.NewFlagSet("cqbench history", flag.ContinueOnError)
	w.register(fs)
	copies := fs.Int("copies", 19, "copies of the chain's history to add after it")
	pageCopies := fs.Int("page-copies", 1, "of those, how many get the pages of the posting lists too")
	duration := fs.Duration("duration", 3*time.Second, "length of each measurement")
	rounds := fs.Int("rounds", 3, "rounds of every workload")
	only := fs.String("only", "", "run only the workloads whose name matches `REGEXP`")
	cpuProfile := fs.String("server-cpuprofile", "", "write the server's CPU profile over the whole run to `FILE`")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := w.check(); err != nil {
		return err
	}
	c, err := w.chain()
	if err != nil {
		return err
	}
	say(fmt.Sprintf("seeding %d copies of blocks %d-%d", *copies, c.First(), c.Last()))
	if err := bench.SeedCopies(ctx, w.db, chainquery.Polygon, int64(c.First()), int64(c.Last()), *copies, *pageCopies, say); err != nil {
		return err
	}
	serveArgs := []string{"--answer-cache-mb", "0"}
	if *cpuProfile != "" {
		serveArgs = append(serveArgs, "--cpuprofile", *cpuProfile)
	}
	s, err := bench.StartServer(ctx, w.chainquery, w.db, "", serveArgs...)
	if err != nil {
		return err
	}
	defer s.Stop()
	ws := bench.CopyWorkloads(c, *copies)
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return err
		}
		ws = slices.DeleteFunc(ws, func(w bench.Workload) bool { return !re.MatchString(w.Name) })
	}
	for i := range ws {
		if ws[i].Count, err = bench.CountOf(ctx, s, ws[i].Targets[0]); err != nil {
			return err
		}
	}
	o := bench.LoadOptions{Duration: *duration, Connections: 1, Progress: say}
	p50s := make([][]time.Duration, len(ws))
	for range *rounds {
		rows, err := bench.Load(ctx, s, ws, o)
		if err != nil {
			return err
		}
		for i, r := range rows {
			if r.Server.Errors > 0 {
				return fmt.Errorf("%s: %d errors (%s)", r.Workload, r.Server.Errors, r.Server.Err)
			}
			p50s[i] = append(p50s[i], r.Server.P50)
		}
	}
	fmt.Printf("one connection, %s a measurement, %d rounds\n\n| workload | count | p50 each round | median p50 |\n|---|---|---|---|\n", *duration, *rounds)
	med := make([]time.Duration, len(ws))
	for i, w := range ws {
		var each []string
		for _, d := range p50s[i] {
			each = append(each, fmt.Sprintf("%.2f", d.Seconds()*1000))
		}
		sorted := slices.Clone(p50s[i])
		slices.Sort(sorted)
		med[i] = sorted[len(sorted)/2]
		fmt.Printf("| %s | %d | %s ms | %.2f ms |\n", w.Name, w.Count, strings.Join(each, " / "), med[i].Seconds()*1000)
	}
	for i := range ws {
		for j := range ws {
			if a, b := ws[i].Name, ws[j].Name; i != j && strings.Count(a, " ") == strings.Count(b, " ") && workloadKind(a) == workloadKind(b) && ws[i].Count > ws[j].Count {
				fmt.Printf("\n%s: all of it over its sixteenth: %.2fx", workloadKind(a), float64(med[i])/float64(med[j]))
			}
		}
	}
	fmt.Println()
	return nil
}

func runFloor(ctx context.Context, args []string) error {
	var cf chainFlags
	fs := flag.NewFlagSet("cqbench floor", flag.ContinueOnError)
	cf.register(fs)
	pg := fs.String("pg", "", "the PostgreSQL dataset's `DSN`")
	db := fs.String("db", "", "the SQLite dataset, sqlite:`PATH`")
	duration := fs.Duration("duration", 3*time.Second, "length of each measurement")
	rounds := fs.Int("rounds", 4, "rounds of every server")
	connections := fs.Int("connections", 32, "concurrent connections")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *pg == "" || !strings.HasPrefix(*db, "sqlite:") {
		return errors.New("--pg DSN and --db sqlite:PATH are required")
	}
	c, err := cf.chain()
	if err != nil {
		return err
	}
	mid := c.First() + (c.Last()-c.First())/2
	table, err := bench.Floor(ctx, *pg, strings.TrimPrefix(*db, "sqlite:"), mid, *rounds,
		bench.LoadOptions{Duration: *duration, Connections: *connections})
	fmt.Printf("%s a measurement, %d connections, block %d\n\n%s", *duration, *connections, mid, table)
	return err
}

// workloadKind is a workload's name up to its number of heights.
func workloadKind(name string) string {
	if i := strings.IndexFunc(name, func(r rune) bool { return r >= '0' && r <= '9' }); i > 0 {
		return strings.TrimSuffix(name[:i], ", ")
	}
	return name
}
