package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	nethttp "net/http"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/metrics"
)

const ingestUsage = `Usage:
  chainquery ingest evm --chain NAME --rpc URL [--from N] [--to N | --follow] [flags]

Fills the database from a chain's nodes. Run 'chainquery ingest evm -h' for
the flags.
`

// parseIngest parses the ingest subcommands; only evm exists so far, and
// the subcommand keeps room for Solana's ingester.
func (m *Main) parseIngest(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, ingestUsage)
		return &usageError{msg: "ingest needs a subcommand: evm"}
	}
	switch name, rest := args[0], args[1:]; name {
	case "evm":
		return m.use(m.parseIngestEVM(rest))
	case "help", "-h", "-help", "--help":
		fmt.Fprint(m.Stdout, ingestUsage)
		return flag.ErrHelp
	default:
		return usagef("chainquery ingest -h", "unknown ingest subcommand %q: use evm", name)
	}
}

// ingestEVMCmd ingests one EVM chain: a backfill up to --to or the node's
// safe head, or a follower of the head with --follow.
type ingestEVMCmd struct {
	db     dsn
	chain  chainSettings
	to     *uint64
	follow bool
	log    logOptions
	pg     pgOptions
	prof   profileFlags

	metricsListen string // --metrics-listen: serve /metrics there; "": no listener
}

// profileFlags are the hidden --cpuprofile, --memprofile and --trace of
// ingest evm: the benchmarks (docs/benchmarks.md) profile the real ingester
// with them, and the execution trace shows where its pipeline waits. They
// are left out of -h, being no part of running a chain.
type profileFlags struct{ cpu, mem, trace string }

// take removes --cpuprofile FILE, --memprofile FILE and --trace FILE (and
// their --flag=FILE forms) from args, before the flag set sees them.
func (p *profileFlags) take(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var dst *string
		switch {
		case !strings.HasPrefix(a, "-"):
		case name == "cpuprofile":
			dst = &p.cpu
		case name == "memprofile":
			dst = &p.mem
		case name == "trace":
			dst = &p.trace
		}
		if dst == nil {
			out = append(out, a)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, usagef("chainquery ingest evm -h", "--%s needs a FILE", name)
			}
			i++
			value = args[i]
		}
		*dst = value
	}
	return out, nil
}

// start begins the CPU profile, if asked for; the function it returns ends
// it and writes the allocation profile, logging to logger what failed.
func (p *profileFlags) start(logger *slog.Logger) (stop func(), err error) {
	stop0, err := p.begin()
	if err != nil {
		return nil, err
	}
	return func() {
		if err := stop0(); err != nil {
			logger.Error("profile not written", "error", err)
		}
	}, nil
}

// begin begins the CPU profile and the execution trace, if asked for; the
// function it returns ends them and writes the allocation profile.
func (p *profileFlags) begin() (stop func() error, err error) {
	var ends []func() error // what has begun, to end in reverse
	end := func() error {
		var errs []error
		for i := len(ends) - 1; i >= 0; i-- {
			errs = append(errs, ends[i]())
		}
		return errors.Join(errs...)
	}
	start := func(path string, begin func(io.Writer) error, stop func()) error {
		if path == "" {
			return nil
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := begin(f); err != nil {
			f.Close()
			return err
		}
		ends = append(ends, func() error { stop(); return f.Close() })
		return nil
	}
	if err := start(p.cpu, pprof.StartCPUProfile, pprof.StopCPUProfile); err != nil {
		return nil, errors.Join(err, end())
	}
	if err := start(p.trace, trace.Start, trace.Stop); err != nil {
		return nil, errors.Join(err, end())
	}
	return func() error {
		if err := end(); err != nil {
			return err
		}
		if p.mem == "" {
			return nil
		}
		f, err := os.Create(p.mem)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}, nil
}

// optUint64 is a flag whose absence matters: --from 0 and no --from are
// different requests.
type optUint64 struct{ v **uint64 }

func (o optUint64) String() string {
	if o.v == nil || *o.v == nil {
		return ""
	}
	return strconv.FormatUint(**o.v, 10)
}

func (o optUint64) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return errors.New("want a block number (a non-negative integer)")
	}
	*o.v = &n
	return nil
}

func ingestEVMUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: chainquery ingest evm [--db DSN] --chain NAME --rpc URL [--from N] [--to N | --follow]
                          [--confirmations N] [--traces auto|trace_block|debug_trace|off]
                          [--concurrency N] [--batch N] [--rpc-max-response-mb N] [--rpc-timeout D]
                          [--rewind-to N] [--metrics-listen ADDR]
                          [--pg-max-conns N] [--pg-statement-timeout DURATION]

Ingests blocks, transactions, receipts, logs and (where enabled) traces of one
EVM chain from a JSON-RPC node, in order, in database transactions of a batch
(deep below the head, of a bucket of 100 blocks): a rerun after Ctrl-C, a crash or kill -9 resumes after the last stored block,
with no gap and no duplicate. A database that stops answering (a PostgreSQL
restart or failover) pauses it: it retries, waiting 1 s and doubling up to
30 s, and goes on where it stopped. Run one ingester per chain, against the
primary.

Without --to or --follow it ingests up to the node's safe head (its head
minus --confirmations) and stops. --to N stops after block N, waiting for the
node to confirm it if need be. --follow keeps tracking the head until SIGINT
or SIGTERM. Without --from it starts at block 0, or at the safe head when
following; a database that already holds the chain resumes where it stopped.

At start it checks the node's chain id, probes which methods the node answers
and logs the plan. A database that already holds the chain is checked against
the node: the stored head must be the node's block at that height. A reorg
that happened while the ingester was stopped is rewound; a difference deeper
than a reorg (a database filled from another chain or fork) stops it, naming
both hashes: use a fresh database, or, when the stored blocks up to some
block N are known good, --rewind-to N removes the stored blocks above N and
ingests them again from the node.

Every malformed node answer (not JSON, cut short, a batch with answers
missing or mixed up, an answer larger than --rpc-max-response-mb) is asked
again with backoff, like a timeout; the log names the method and the fault. On a terminal it shows a progress line; otherwise it logs
progress every 10 s.

--metrics-listen ADDR serves Prometheus metrics at GET /metrics on ADDR (and
nothing else): the node's head, the stored head, the lag, rows written,
batches, reorgs and node calls (docs/operations.md lists them). It needs no
key: keep ADDR on loopback or a private network.

Defaults per chain (docs/config.md explains them):
  CHAIN       CONFIRMATIONS  TRACES
`)
	for _, c := range chainquery.EVMChains {
		d := chainDefaults[c]
		fmt.Fprintf(&b, "  %-10s  %13d  %s\n", c, d.confirmations, d.traces)
	}
	return b.String() + dsnUsage
}

func (m *Main) parseIngestEVM(args []string) (*ingestEVMCmd, error) {
	c := &ingestEVMCmd{}
	args, err := c.prof.take(args)
	if err != nil {
		return nil, err
	}
	var from, to, confirmations *uint64
	fs := newFlagSet("chainquery ingest evm")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	chain := fs.String("chain", "", "`NAME` of the chain: "+evmChainNames())
	rpc := fs.String("rpc", "", "`URL` of the chain's JSON-RPC node (http or https)")
	fs.Var(optUint64{&from}, "from", "first block `N` when the database holds none of the chain")
	fs.Var(optUint64{&to}, "to", "last block `N`; stop there")
	fs.BoolVar(&c.follow, "follow", false, "keep following the head until stopped (excludes --to)")
	fs.Var(optUint64{&confirmations}, "confirmations", "stay `N` blocks behind the node's head (default: per chain, see above)")
	traces := fs.String("traces", "", "trace `METHOD`: auto, trace_block, debug_trace or off (default: auto on polygon, off elsewhere)")
	concurrency := fs.Int("concurrency", defaultConcurrency, "batches fetched at once (`N`), up to 4N while the node's latency keeps the writer waiting")
	batch := fs.Int("batch", defaultBatch, "blocks per fetch and per database transaction (`N`)")
	maxResp := fs.Int("rpc-max-response-mb", int(jsonrpc.DefaultMaxResponse>>20), "largest node answer read, in MB (`N`); larger batches are split")
	rpcTimeout := fs.String("rpc-timeout", "60s", "time allowed for one node request, its answer included (`DURATION`)")
	var rewindTo *uint64
	fs.Var(optUint64{&rewindTo}, "rewind-to", "first remove the stored blocks above block `N` (after a fork deeper than a reorg)")
	fs.StringVar(&c.metricsListen, "metrics-listen", "", "serve Prometheus metrics at GET /metrics on `ADDR`, host:port (no key: keep it private)")
	c.log.register(fs, slog.LevelInfo)
	c.pg.register(fs)
	if err := m.parse(fs, args, ingestEVMUsage()); err != nil {
		return nil, err
	}
	help := fs.Name() + " -h"
	if err := required(fs, "chain", "rpc"); err != nil {
		return nil, err
	}
	if c.db, err = parseDBFlag(help, db.s); err != nil {
		return nil, err
	}
	if err := c.pg.check(help, c.db, flagsSet(fs)); err != nil {
		return nil, err
	}
	name, err := parseEVMChain(*chain)
	if err != nil {
		return nil, usagef(help, "--chain %s", err)
	}
	if err := checkRPC(*rpc); err != nil {
		return nil, usagef(help, "--rpc %s", err)
	}
	c.chain = newChainSettings(name, *rpc)
	c.chain.from, c.to = from, to
	if confirmations != nil {
		c.chain.confirmations = *confirmations
	}
	if *traces != "" {
		if err := checkTraces(*traces); err != nil {
			return nil, usagef(help, "--traces %s", err)
		}
		c.chain.traces = *traces
	}
	if err := checkRange(*concurrency, maxConcurrency); err != nil {
		return nil, usagef(help, "--concurrency %s", err)
	}
	if err := checkRange(*batch, maxBatch); err != nil {
		return nil, usagef(help, "--batch %s", err)
	}
	if err := checkRange(*maxResp, maxResponseMB); err != nil {
		return nil, usagef(help, "--rpc-max-response-mb %s", err)
	}
	c.chain.concurrency, c.chain.batch, c.chain.maxResponseMB = *concurrency, *batch, *maxResp
	c.chain.rewindTo = rewindTo
	if c.chain.rpcTimeout, err = parseRPCTimeout(*rpcTimeout); err != nil {
		return nil, usagef(help, "--rpc-timeout %s", err)
	}
	switch {
	case to != nil && c.follow:
		return nil, usagef(help, "--to and --follow exclude each other: --to stops at a block, --follow never stops")
	case to != nil && from != nil && *from > *to:
		return nil, usagef(help, "--from %d is after --to %d", *from, *to)
	}
	if err := checkMetricsListen(c.metricsListen); err != nil {
		return nil, usagef(help, "%s", err)
	}
	return c, c.log.check(help)
}

// ingestMemoryLimit is the soft memory limit of ingest evm when the
// environment sets none (GOMEMLIMIT): the collector works harder near it
// rather than let the heap double past what is live: the Polygon-shaped
// batches in flight and their encoding. Set above that live heap, it cuts
// the peak RSS at the same rate (docs/benchmarks.md, "History in the
// stores", RSS, has the figures). 176 MiB since the segment encoders'
// window shrank (history.encoderWindow): their untouched history buffers
// no longer fill the limit, so the same limit let the heap touch ~25 MB
// more; at 176 MiB the peak RSS is back near 230 MB, for ~0.1 ms a block
// of collection (docs/benchmarks.md, issue 30, session 17). 192 MiB since
// SQLite's writer cache halved (sqlite/db.go), for the same peak RSS:
// the collector ran 187-193 times over 5,000 Polygon-shaped blocks
// against 320-354, 0.43 against 0.71 ms of CPU a block (docs/benchmarks.md,
// issue 30, session 24). 208 MiB since: 148 against 204 cycles, 0.33
// against 0.42 ms a block, for a peak RSS of ~245 MB, under the 256 MB the
// ingester is allowed with room for a longer history (session 25).
const ingestMemoryLimit = 208 << 20

// ingestMemoryLimitPostgres is ingestMemoryLimit into PostgreSQL. Part of
// the same peak RSS is SQLite's writer page cache (sqlite/db.go: 8 MiB,
// twice that in RSS), which a PostgreSQL store does not keep in the
// process: at 176 MiB the ingester peaked at ~190 MB there, and its
// collector ran twice as often as at 224 MiB (225 against 111 cycles over
// 5,000 Polygon-shaped blocks, 0.63 against 0.28 ms of CPU a block), which
// peaks at ~235 MB (docs/benchmarks.md, issue 30, session 24). 236 MiB
// since, for a peak of ~248 MB: 107 against 132 cycles, 0.24 against 0.29
// ms a block (session 25). 228 MiB since: at 236, two of 24 runs of
// 5,000 blocks peaked at 258.8 and 268.4 MiB, past the 256 MB the ingester
// is allowed, where ten runs at 228 peaked at 240.1-241.9 MiB; the
// collector ran ~166 times against ~143 (docs/benchmarks.md, issue 30,
// session 32).
const ingestMemoryLimitPostgres = 228 << 20

func (c *ingestEVMCmd) run(ctx context.Context, m *Main) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		limit := int64(ingestMemoryLimit)
		if c.db.scheme == "postgres" {
			limit = ingestMemoryLimitPostgres
		}
		debug.SetMemoryLimit(limit)
	}
	// On a terminal the progress line and the logs share stderr: each log
	// record first clears the line, and the line is redrawn every second.
	tty := isTerminal(m.Stderr)
	var logw io.Writer = m.Stderr
	interval := 10 * time.Second
	if tty {
		logw, interval = lineClearer{m.Stderr}, time.Second
	}
	logger := c.chain.logger(c.log.logger(logw))
	stopProfile, err := c.prof.start(logger)
	if err != nil {
		return err
	}
	defer stopProfile()
	storeUp := func(chainquery.Store) error { return nil }
	if c.metricsListen != "" {
		up, stop, err := m.serveMetrics(c.metricsListen, logger, &c.chain.metrics)
		if err != nil {
			return err
		}
		defer stop()
		storeUp = up
	}
	// The node first, the database once it has answered: a mistyped --rpc
	// or a node that is down must not leave a new, empty database behind.
	err = c.chain.checkNode(ctx)
	if ctx.Err() != nil {
		return nil // stopped while connecting: nothing was written
	} else if err != nil {
		return redactErr(err, c.chain.rpc)
	}
	store, err := m.openStore(ctx, c.db, storeOptions{pg: c.pg})
	if err != nil {
		return err
	}
	if err := storeUp(store); err != nil {
		return err
	}
	src, err := c.chain.probe(ctx, logger)
	if ctx.Err() != nil {
		return nil // stopped while connecting: nothing was written
	} else if err != nil {
		return redactErr(err, c.chain.rpc)
	}
	e := c.chain.ingester(store, src, logger)
	e.To, e.Follow = c.to, c.follow
	e.Progress = &ingest.Progress{Chain: string(c.chain.chain)}

	sctx, stop := context.WithCancel(ctx)
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		e.Progress.Show(sctx, m.Stderr, tty, logger, interval)
	}()
	err = e.Run(ctx)
	stop()
	<-shown

	s := e.Progress.Snapshot()
	attrs := []any{"chain", c.chain.chain, "blocks", s.Blocks, "rows", s.Rows, "reorgs", s.Reorgs}
	if latest, lerr := store.LatestBlock(context.WithoutCancel(ctx), c.chain.chain); lerr == nil {
		attrs = append(attrs, "stored_head", latest)
	}
	var pe *ingest.PanicError
	if errors.As(err, &pe) {
		logger.Error("the ingester panicked: a bug; please report it with this stack", "chain", c.chain.chain, "stack", pe.Stack)
	}
	switch {
	case err != nil:
		return redactErr(err, c.chain.rpc)
	case ctx.Err() != nil:
		// Every batch is one transaction, so what is stored is whole: the
		// same command picks up after the stored head.
		logger.Info("stopped: rerun the same command to resume", attrs...)
	default:
		logger.Info("done", attrs...)
	}
	return nil
}

// checkMetricsListen checks --metrics-listen's ADDR, when given.
func checkMetricsListen(addr string) error {
	if addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("--metrics-listen must be host:port, e.g. 127.0.0.1:9101 or 127.0.0.1:0")
	}
	return nil
}

// serveMetrics serves an ingester's metrics at GET /metrics on addr until
// stop is called, and sets *ingestion to the metrics the ingester records.
// The registry holds the ingestion metrics and the Go runtime and process
// metrics; storeUp adds chainquery_store_up (a ping of the store at each
// scrape) once the ingester has opened its store, which it does after the
// node's first answer, counted here. Main is marked listening on addr, so
// that tests find a port picked by :0.
func (m *Main) serveMetrics(addr string, logger *slog.Logger, ingestion **metrics.Ingest) (storeUp func(chainquery.Store) error, stop func(), err error) {
	reg := metrics.NewRegistry()
	if *ingestion, err = metrics.NewIngest(reg); err != nil {
		return nil, nil, err
	}
	storeUp = func(store chainquery.Store) error { return metrics.RegisterStoreUp(reg, store.Ping) }
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	srv := &nethttp.Server{
		Handler:           metrics.Handler(reg),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go srv.Serve(ln) // ends with ErrServerClosed at stop
	logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	m.markListening(ln.Addr())
	return storeUp, func() { srv.Close() }, nil
}

// redactErr replaces the node URL in err's text by its redacted form: errors
// of the HTTP client quote the URL, which may hold the customer's key of a
// hosted node.
func redactErr(err error, rpc string) error {
	if err == nil || !strings.Contains(err.Error(), rpc) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), rpc, redactURL(rpc)))
}
