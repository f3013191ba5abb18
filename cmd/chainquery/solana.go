package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/metrics"
	"github.com/chainquery/chainquery/solana"
)

const ingestSolanaUsage = `Usage: chainquery ingest solana [--db DSN] --rpc URL [--from-slot N] [--to-slot N | --follow]
                             [--concurrency N] [--batch N] [--metadata=false]
                             [--rpc-timeout D] [--rpc-max-response-mb N]
                             [--metrics-listen ADDR]

Ingests the SPL token balance changes of Solana mainnet from a JSON-RPC node:
getBlocks lists the confirmed blocks (skipped slots are simply absent) and
getBlock fetches each (full transactions, version 0 included, no rewards).
Every batch of blocks is one database transaction that also records the last
slot, so what is stored is always a whole prefix of the chain.

A rerun resumes after that slot whatever --from-slot says; --from-slot only
says where an empty database starts (--follow alone starts at the node's
confirmed slot). Without --to-slot or --follow
it stops at the node's confirmed slot; --follow keeps polling it until
SIGINT or SIGTERM.

Before resuming, it checks that the node's block at the stored slot has the
stored blockhash, and stops (exit 1) when it does not, or when the node has
no block there: the database then holds another chain or fork, or the node
cannot vouch for it. Use a fresh database, or a node that keeps that slot.
There is no --rewind-to: confirmed Solana blocks do not reorg (see
docs/solana.md).

With --metadata (the default) it also fills the token registry with the
Metaplex metadata (name, symbol) of each mint it sees for the first time.

With --sol-balances (the default) it also stores every account's SOL
balance at the end of each block that changed it, for SOL Balance by
Account: blocks are read with their rewards, and a 2021 mainnet block adds
about 1,400 rows (votes pay fees too). --sol-balances=false leaves them
out; SOL balances are then answered up to where they were last stored.

--metrics-listen ADDR serves Prometheus metrics at GET /metrics on ADDR (and
nothing else): the node's slot, the stored slot, the lag, rows written,
batches and node calls (docs/operations.md lists them). It needs no key:
keep ADDR on loopback or a private network.
`

// ingestSolanaCmd ingests Solana token balances.
type ingestSolanaCmd struct {
	db          dsn
	rpc         string
	from, to    *uint64
	follow      bool
	metadata    bool
	sol         bool
	concurrency int
	batch       int
	rpcTimeout  time.Duration
	maxRespMB   int
	metrics     string // --metrics-listen ADDR; "": no listener
	log         logOptions
	pg          pgOptions
}

func (m *Main) parseIngestSolana(args []string) (*ingestSolanaCmd, error) {
	c := &ingestSolanaCmd{}
	fs := newFlagSet("chainquery ingest solana")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	fs.StringVar(&c.rpc, "rpc", "", "`URL` of a Solana JSON-RPC node (http or https)")
	fs.Var(optUint64{&c.from}, "from-slot", "first slot `N`")
	fs.Var(optUint64{&c.to}, "to-slot", "last slot `N`; stop there")
	fs.BoolVar(&c.follow, "follow", false, "keep following the confirmed slot until stopped (excludes --to-slot)")
	fs.BoolVar(&c.metadata, "metadata", true, "fill the token registry from Metaplex metadata of new mints")
	fs.BoolVar(&c.sol, "sol-balances", true, "store SOL balance changes too, for SOL Balance by Account (about 3x the rows of token balances)")
	fs.IntVar(&c.concurrency, "concurrency", 2, "batches fetched at once (`N`)")
	fs.IntVar(&c.batch, "batch", 4, "blocks per getBlock batch and per database transaction (`N`)")
	rpcTimeout := fs.String("rpc-timeout", "60s", "time allowed for one node request, its answer included (`DURATION`)")
	fs.StringVar(&c.metrics, "metrics-listen", "", "serve Prometheus metrics at GET /metrics on `ADDR`, host:port (no key: keep it private)")
	fs.IntVar(&c.maxRespMB, "rpc-max-response-mb", int(jsonrpc.DefaultMaxResponse>>20), "largest node answer read, in MB (`N`); larger batches are split")
	c.log.register(fs, slog.LevelInfo)
	c.pg.register(fs)
	if err := m.parse(fs, args, ingestSolanaUsage+dsnUsage); err != nil {
		return nil, err
	}
	help := fs.Name() + " -h"
	if err := required(fs, "rpc"); err != nil {
		return nil, err
	}
	var err error
	if c.db, err = parseDBFlag(help, db.s); err != nil {
		return nil, err
	}
	if err := c.pg.check(help, c.db, flagsSet(fs)); err != nil {
		return nil, err
	}
	if err := checkRPC(c.rpc); err != nil {
		return nil, usagef(help, "--rpc %s", err)
	}
	if err := checkRange(c.concurrency, maxConcurrency); err != nil {
		return nil, usagef(help, "--concurrency %s", err)
	}
	if err := checkRange(c.batch, 100); err != nil {
		return nil, usagef(help, "--batch %s", err)
	}
	if c.rpcTimeout, err = parseRPCTimeout(*rpcTimeout); err != nil {
		return nil, usagef(help, "--rpc-timeout %s", err)
	}
	if err := checkRange(c.maxRespMB, maxResponseMB); err != nil {
		return nil, usagef(help, "--rpc-max-response-mb %s", err)
	}
	switch {
	case c.to != nil && c.follow:
		return nil, usagef(help, "--to-slot and --follow exclude each other: --to-slot stops at a slot, --follow never stops")
	case c.to != nil && c.from != nil && *c.from > *c.to:
		return nil, usagef(help, "--from-slot %d is after --to-slot %d", *c.from, *c.to)
	}
	if err := checkMetricsListen(c.metrics); err != nil {
		return nil, usagef(help, "%s", err)
	}
	return c, c.log.check(help)
}

func (c *ingestSolanaCmd) run(ctx context.Context, m *Main) error {
	tty := isTerminal(m.Stderr)
	var logw io.Writer = m.Stderr
	interval := 10 * time.Second
	if tty {
		logw, interval = lineClearer{m.Stderr}, time.Second
	}
	logger := redactLogger(c.log.logger(logw), c.rpc, redactURL(c.rpc)).With("chain", "solana")
	e, client := c.ingester(logger)
	storeUp := func(chainquery.Store) error { return nil }
	if c.metrics != "" {
		var ingestion *metrics.Ingest
		up, stop, err := m.serveMetrics(c.metrics, logger, &ingestion)
		if err != nil {
			return err
		}
		defer stop()
		storeUp = up
		client.RPC.Observer = ingestion.RPC(chainquery.Solana)
		e.Observer = ingestion.Chain(chainquery.Solana)
	}
	// The node first, the database once it has answered: a mistyped --rpc
	// or a node that is down must not leave a new, empty database behind.
	err := checkSolanaNode(ctx, c.rpc, client.RPC.Observer)
	if ctx.Err() != nil {
		return nil // stopped while connecting: nothing was written
	} else if err != nil {
		return redactErr(err, c.rpc)
	}
	store, err := m.openStore(ctx, c.db, storeOptions{pg: c.pg})
	if err != nil {
		return err
	}
	if err := storeUp(store); err != nil {
		return err
	}
	e.Store = store

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
	attrs := []any{"blocks", s.Blocks, "rows", s.Rows, "last_slot", s.Last}
	var pe *ingest.PanicError
	if errors.As(err, &pe) {
		logger.Error("the ingester panicked: a bug; please report it with this stack", "stack", pe.Stack)
	}
	switch {
	case err != nil:
		return redactErr(err, c.rpc)
	case ctx.Err() != nil:
		logger.Info("stopped: a rerun resumes after the last stored slot", attrs...)
	default:
		logger.Info("done", attrs...)
	}
	return nil
}

// ingester returns the ingester of the command's flags, reading from its
// node with client, and without its store. dev runs it too.
func (c *ingestSolanaCmd) ingester(logger *slog.Logger) (*ingest.SolanaLoop, *solana.Client) {
	client := solana.NewClient(c.rpc)
	client.RPC.Logger = logger
	client.RPC.Timeout, client.RPC.MaxResponse = c.rpcTimeout, int64(c.maxRespMB)<<20
	source := solana.NewSource(client, logger)
	source.SOL = c.sol
	e := &ingest.SolanaLoop{Source: source, Logger: logger, From: c.from, To: c.to, Follow: c.follow,
		Concurrency: c.concurrency, BatchSlots: c.batch, Metadata: c.metadata, SOL: c.sol,
		Progress: &ingest.Progress{Chain: "solana"}}
	return e, client
}

// checkSolanaNode asks the node for its confirmed slot. It gives up sooner
// than the ingester's client, as checkChainID does: an unreachable node at
// start is most often a mistyped URL.
func checkSolanaNode(ctx context.Context, rpc string, obs jsonrpc.Observer) error {
	c := solana.NewClient(rpc)
	c.RPC.Attempts, c.RPC.MaxBackoff, c.RPC.Timeout = 3, 2*time.Second, 15*time.Second
	c.RPC.Observer = obs
	if _, err := c.Slot(ctx); err != nil {
		return fmt.Errorf("solana: getSlot from %s: %w", redactURL(rpc), err)
	}
	return nil
}

const registryUsage = `Usage: chainquery registry import [--db DSN] FILE

Loads a token list in the Solana token-list JSON format ({"tokens": [{"chainId",
"address", "name", "symbol", "decimals"}, ...]}) into the token registry that
include_metadata=true answers from. Mainnet entries (chainId 101, or none)
are kept; an entry replaces what the registry held for its mint.
`

// registryImportCmd loads a token list into the registry.
type registryImportCmd struct {
	db   dsn
	file string
}

// parseRegistry parses the registry subcommands; only import exists.
func (m *Main) parseRegistry(args []string) error {
	if len(args) == 0 || args[0] != "import" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "help" || args[0] == "--help") {
			fmt.Fprint(m.Stdout, registryUsage)
			return flag.ErrHelp
		}
		return usagef("chainquery registry import -h", "registry needs a subcommand: import")
	}
	c := &registryImportCmd{}
	fs := newFlagSet("chainquery registry import")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	// The file is the one positional argument; parse refuses positionals,
	// so it is taken off the end first.
	rest := args[1:]
	if n := len(rest); n > 0 && (len(rest[n-1]) == 0 || rest[n-1][0] != '-') && (n < 2 || rest[n-2] != "--db") {
		c.file, rest = rest[n-1], rest[:n-1]
	}
	if err := m.parse(fs, rest, registryUsage+dsnUsage); err != nil {
		return err
	}
	help := fs.Name() + " -h"
	if c.file == "" {
		return usagef(help, "the token list FILE is required")
	}
	var err error
	if c.db, err = parseDBFlag(help, db.s); err != nil {
		return err
	}
	m.cmd = c
	return nil
}

func (c *registryImportCmd) run(ctx context.Context, m *Main) error {
	f, err := os.Open(c.file)
	if err != nil {
		return err
	}
	defer f.Close()
	tokens, err := solana.ReadTokenList(f)
	if err != nil {
		return fmt.Errorf("%s: %w", c.file, err)
	}
	store, err := m.openStore(ctx, c.db, storeOptions{})
	if err != nil {
		return err
	}
	if err := store.WriteTokens(ctx, tokens); err != nil {
		return err
	}
	_, err = fmt.Fprintf(m.Stdout, "imported %d tokens from %s\n", len(tokens), c.file)
	return err
}
