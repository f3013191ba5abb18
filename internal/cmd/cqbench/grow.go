package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/chainquery/chainquery/sqlstore"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/bench"
	"github.com/chainquery/chainquery/internal/polychain"
)

// runGrow builds the dataset in steps with the real ingester, each next to
// the raw fetch of its range, and measures the uncached reads at chosen
// steps (package bench, grow.go).
func runGrow(ctx context.Context, args []string) error {
	var w workFlags
	fs := flag.NewFlagSet("cqbench grow", flag.ContinueOnError)
	w.register(fs)
	// A growth run is about a larger store than the other commands build.
	w.cfg.Blocks = 50_000
	fs.Lookup("blocks").DefValue = "50000"
	fs.Lookup("db").Usage = "dataset `DSN` (default sqlite:DIR/polygon-SEED-BLOCKS-TXS-grow.db, removed first)"
	step := fs.Int("step", 5000, "`N` blocks a step, each one run of chainquery ingest evm --from --to")
	readsAt := fs.String("reads-at", "", "run the reads after the steps that leave these block counts stored, `LIST` (such as 5000,50000), or none; default: the first step and the last")
	pg := fs.String("pg", "", "grow this PostgreSQL `DSN` instead of a SQLite file (its database must hold no polygon blocks)")
	traces := fs.String("traces", evm.TracesParity, "trace `METHOD`: trace_block or debug_trace")
	batch := fs.Int("batch", 10, "blocks per fetch, for the ingester and the raw fetch alike")
	concurrency := fs.Int("concurrency", 4, "fetches in flight, for both")
	nodeCPUs := fs.String("node-cpus", "", "taskset CPU `LIST` for the node (run cqbench itself under taskset for the ingester's)")
	duration := fs.Duration("duration", 5*time.Second, "length of each read measurement (ceiling, then server)")
	connections := fs.Int("connections", 32, "concurrent connections of the reads")
	maxRequests := fs.Uint64("max-requests", 5_000_000, "most requests per read measurement")
	targets := fs.Int("targets", 32, "distinct requests per read workload (blocks, ranges, transactions)")
	only := fs.String("only", "", "run only the read workloads whose name matches `REGEXP` (default: bench.GrowReads, the seven uncached reads)")
	serverCPUs := fs.String("server-cpus", "", "taskset CPU `LIST` for the server")
	if err := parse(fs, args); err != nil {
		return err
	}
	dbSet := w.db != ""
	if *pg != "" {
		if dbSet {
			return errors.New("--db and --pg exclude each other: a growth run grows one store")
		}
		w.db = *pg
	} else if !dbSet {
		w.db = w.defaultDB("-grow")
	}
	if err := w.check(); err != nil {
		return err
	}
	if *traces != evm.TracesParity && *traces != evm.TracesCallTracer {
		return fmt.Errorf("--traces: want trace_block or debug_trace")
	}
	if *duration <= 0 || *connections < 1 {
		return fmt.Errorf("--duration and --connections must be positive")
	}
	match := bench.GrowReads
	if *only != "" {
		var err error
		if match, err = regexp.Compile(*only); err != nil {
			return fmt.Errorf("--only: %w", err)
		}
	}
	at, err := bench.ParseReadsAt(*readsAt)
	if err != nil {
		return err
	}
	c, err := w.chain()
	if err != nil {
		return err
	}
	steps, err := bench.PlanGrowth(c.First(), c.Config().Blocks, *step, at)
	if err != nil {
		return err
	}
	if err := freshSQLite(w.db, w.dir); err != nil {
		return err
	}
	// Each step's node renders that step's blocks into a cache of its own,
	// removed after the step: the answers of a whole growth run would take
	// more disk than this machine has (docs/benchmarks.md, "Growth: the
	// store as it grows", gives their size).
	cache := filepath.Join(w.dir, "grow-cache")
	// The node's chain runs RowBlocks past the last step, so that the last
	// step goes into history as the first does: a chain's tip (its last
	// 256 blocks, kept as rows until they are final) is the same work in a
	// store of any size, and at the chain's end it made the last step
	// slower and larger than the first (docs/benchmarks.md, issue 30,
	// session 18).
	nodeFlags := w
	nodeFlags.cfg.Blocks += sqlstore.DefaultRowBlocks
	node := func(ctx context.Context, from, to uint64) (string, func(), error) {
		if err := os.RemoveAll(cache); err != nil {
			return "", nil, err
		}
		say(fmt.Sprintf("starting the node (rendering blocks %d-%d into %s)", from, to, cache))
		p, url, err := nodeFlags.startNode(ctx, *nodeCPUs, cache, "--prerender", fmt.Sprintf("%d-%d", from, to))
		if err != nil {
			return "", nil, err
		}
		return url, func() { p.Stop(); _ = os.RemoveAll(cache) }, nil
	}
	say(fmt.Sprintf("grow %s: %d blocks in %d steps", bench.RedactDSN(w.db), c.Config().Blocks, len(steps)))
	rows, err := bench.Grow(ctx, bench.GrowOptions{Chainquery: w.chainquery, DSN: w.db, Chain: c, Steps: steps,
		Traces: *traces, Batch: *batch, Concurrency: *concurrency, Node: node, ServerCPUs: *serverCPUs,
		Targets: *targets, Match: match.MatchString,
		Load:     bench.LoadOptions{Duration: *duration, Connections: *connections, MaxRequests: *maxRequests, Progress: say},
		Progress: say})
	if len(rows) > 0 {
		store := "SQLite"
		if !strings.HasPrefix(w.db, "sqlite:") {
			store = "PostgreSQL"
		}
		fmt.Printf("Growth of %s (%s) to %d blocks (%d-%d) in steps of %d; %s, batch %d, concurrency %d; "+
			"reads with the answer cache off, %d distinct requests per workload, %s per measurement, %d connections\n\n",
			store, bench.RedactDSN(w.db), c.Config().Blocks, c.First(), c.Last(), *step, *traces, *batch, *concurrency,
			*targets, *duration, *connections)
		fmt.Print(bench.GrowthTable(rows), "\n")
		if t := bench.GrowReadsTable(rows); strings.Count(t, "\n") > 2 {
			fmt.Print(t, "\n")
		}
		fmt.Print(bench.GrowSummary(rows))
	}
	return err
}

// parseBlockRange parses FIRST-LAST.
func parseBlockRange(s string) (uint64, uint64, error) {
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.ParseUint(a, 10, 64)
	last, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || first > last {
		return 0, 0, fmt.Errorf("want a block range FIRST-LAST, not %q", s)
	}
	return first, last, nil
}

// prerender renders blocks first..last of node's chain with one worker per
// CPU, as Node.Prerender does for the whole chain.
func prerender(ctx context.Context, node *polychain.Node, first, last uint64) error {
	var next atomic.Uint64
	next.Store(first)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				b := next.Add(1) - 1
				if b > last {
					return
				}
				if _, err := node.Answer(b, polychain.KindBlockFull); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
