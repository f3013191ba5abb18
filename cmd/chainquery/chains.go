package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/metrics"
)

// chainDefault is how a chain is ingested unless the command line or the
// config file says otherwise.
type chainDefault struct {
	confirmations uint64
	traces        string
}

// chainDefaults holds the per-chain defaults; docs/config.md explains them
// to operators. Confirmations trade freshness for fewer rewrites: the
// ingester rewinds any reorg it meets (up to 256 blocks deep), so they only
// keep the API from serving, for a few seconds, blocks that a reorg then
// replaces. Each value is a little above the reorgs seen in practice on that
// chain, counted in its own block time:
//
//   - ethereum: 12 blocks (~2.4 min). Since the Merge reorgs are one or two
//     blocks; full finality (two epochs, ~13 min) would make the API lag far
//     behind for a risk the rewind covers anyway.
//   - polygon: 128 blocks (~4 min at 2 s). Bor has had reorgs of dozens of
//     blocks and, in 2023, one over 150 deep, before milestones bounded them;
//     128 stays clear of all but such outliers.
//   - base, optimism: 10 blocks (~20 s). The sequencer orders blocks; an
//     unsafe-head reorg is rare and short.
//   - arbitrum: 20 blocks (~5 s at 0.25 s). The sequencer's order is final in
//     practice; the margin only covers load-balanced RPC replicas that lag.
//   - binance: 15 blocks. Parlia with fast finality settles blocks within a
//     few; 15 is the long-standing rule of thumb (a majority of the 21
//     validators has built on top).
//   - avalanche: 1 block. Snowman consensus makes an accepted block final,
//     and nodes serve only accepted blocks; the one block absorbs replica lag.
//   - gnosis: 8 blocks (~40 s at 5 s). The beacon chain's reorgs are a block
//     or two, and finality takes about three minutes.
//
// Traces are ingested by default only where the API serves them (Filter
// Traces is polygon only): elsewhere they would cost a call per block and most
// of the disk for rows nobody can read.
var chainDefaults = map[chainquery.Chain]chainDefault{
	chainquery.Ethereum:  {12, evm.TracesOff},
	chainquery.Polygon:   {128, evm.TracesAuto},
	chainquery.Base:      {10, evm.TracesOff},
	chainquery.Arbitrum:  {20, evm.TracesOff},
	chainquery.Optimism:  {10, evm.TracesOff},
	chainquery.Binance:   {15, evm.TracesOff},
	chainquery.Avalanche: {1, evm.TracesOff},
	chainquery.Gnosis:    {8, evm.TracesOff},
}

// Defaults of the ingester shared by every chain.
const (
	defaultConcurrency = 4
	defaultBatch       = 10
	maxConcurrency     = 64   // more in flight only gets a node to rate-limit us
	maxBatch           = 1000 // blocks per store transaction; more holds the writer too long
	maxResponseMB      = 4096 // MB of one node answer; beyond, a 64-bit machine's memory is the limit
)

// parseRPCTimeout reads a node request timeout: a Go duration from 100ms to
// 10m (a node that needs longer for one answer needs smaller batches).
func parseRPCTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 100*time.Millisecond || d > 10*time.Minute {
		return 0, fmt.Errorf("%q: want a duration from 100ms to 10m, such as 30s", v)
	}
	return d, nil
}

func evmChainNames() string {
	names := make([]string, len(chainquery.EVMChains))
	for i, c := range chainquery.EVMChains {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// parseEVMChain returns the EVM chain named s.
func parseEVMChain(s string) (chainquery.Chain, error) {
	for _, c := range chainquery.EVMChains {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("%q is not an EVM chain: use one of %s", s, evmChainNames())
}

// checkRPC accepts http and https URLs: the node client speaks JSON-RPC over
// HTTP only.
func checkRPC(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http:// or https:// URL of a JSON-RPC node")
	}
	return nil
}

func checkTraces(s string) error {
	switch s {
	case evm.TracesAuto, evm.TracesParity, evm.TracesCallTracer, evm.TracesOff:
		return nil
	}
	return fmt.Errorf("must be auto, trace_block, debug_trace or off, not %q", s)
}

func checkRange(n, max int) error {
	if n < 1 || n > max {
		return fmt.Errorf("must be between 1 and %d", max)
	}
	return nil
}

// redactURL returns the node URL fit for logs: hosted nodes carry the
// customer's key in the path (Infura, Alchemy) or in user info, so only the
// scheme and host are shown.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	out := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		out += "/..."
	}
	return out
}

// chainSettings is how one chain is ingested, from flags or a config file.
type chainSettings struct {
	chain         chainquery.Chain
	rpc           string
	from          *uint64 // nil: see ingest.EVMLoop.From
	confirmations uint64
	traces        string
	concurrency   int
	batch         int
	maxResponseMB int             // largest node answer read, in MB; 0: jsonrpc.DefaultMaxResponse
	rpcTimeout    time.Duration   // per node request, answer included; 0: the client's default
	rewindTo      *uint64         // ingest evm --rewind-to
	metrics       *metrics.Ingest // records the node calls and the loop's progress; nil: none
}

// newChainSettings returns the settings of chain with its defaults.
func newChainSettings(chain chainquery.Chain, rpc string) chainSettings {
	d := chainDefaults[chain]
	return chainSettings{chain: chain, rpc: rpc, confirmations: d.confirmations, traces: d.traces,
		concurrency: defaultConcurrency, batch: defaultBatch}
}

// logger returns base with the node URL redacted from what it writes; the
// node client and the ingester of the chain log through it.
func (s chainSettings) logger(base *slog.Logger) *slog.Logger {
	return redactLogger(base, s.rpc, redactURL(s.rpc))
}

// source connects to the node: it checks that the node is the chain it is
// said to be, probes which methods it answers, and logs the plan that
// follows. Errors name the chain. logger should come from s.logger.
func (s chainSettings) source(ctx context.Context, logger *slog.Logger) (*evm.Fetcher, error) {
	if err := s.checkNode(ctx); err != nil {
		return nil, err
	}
	return s.probe(ctx, logger)
}

// checkNode is checkChainID with the error naming the chain.
func (s chainSettings) checkNode(ctx context.Context) error {
	if err := s.checkChainID(ctx); err != nil {
		return fmt.Errorf("ingest %s: %w", s.chain, err)
	}
	return nil
}

// probe is source after the chain id check: the methods the node answers,
// the plan logged, and the fetcher.
func (s chainSettings) probe(ctx context.Context, logger *slog.Logger) (*evm.Fetcher, error) {
	client := jsonrpc.NewClient(s.rpc)
	client.Logger = logger.With("chain", s.chain)
	client.Observer = s.rpcObserver()
	if s.maxResponseMB > 0 {
		client.MaxResponse = int64(s.maxResponseMB) << 20
	}
	if s.rpcTimeout > 0 {
		client.Timeout = s.rpcTimeout
	}
	plan, err := evm.Probe(ctx, client, s.traces)
	if err != nil {
		return nil, fmt.Errorf("ingest %s: probe the node: %w", s.chain, err)
	}
	logger.Info("ingestion plan", "chain", s.chain, "rpc", redactURL(s.rpc), "plan", plan.String(),
		"confirmations", s.confirmations, "concurrency", s.concurrency, "batch", s.batch)
	return evm.NewFetcher(client, s.chain, plan, logger), nil
}

// checkChainID refuses a node of another chain: its blocks would be stored
// and served under the wrong name, which is worse than not starting. It
// gives up sooner than the fetcher does, because an unreachable node at
// start is most often a mistyped URL.
func (s chainSettings) checkChainID(ctx context.Context) error {
	c := jsonrpc.NewClient(s.rpc)
	c.Attempts, c.MaxBackoff, c.Timeout = 3, 2*time.Second, 15*time.Second
	c.Observer = s.rpcObserver()
	var id string
	if err := c.Call(ctx, &id, "eth_chainId"); err != nil {
		return fmt.Errorf("eth_chainId from %s: %w", redactURL(s.rpc), err)
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(id, "0x"), 16, 64)
	if err != nil {
		return fmt.Errorf("eth_chainId from %s: %q is not a hex number", redactURL(s.rpc), id)
	}
	if want := uint64(s.chain.ID()); n != want {
		return fmt.Errorf("the node at %s is chain id %d, not %s (%d): check the RPC URL", redactURL(s.rpc), n, s.chain, want)
	}
	return nil
}

// rpcObserver returns the observer of the chain's node clients, nil without
// metrics.
func (s chainSettings) rpcObserver() jsonrpc.Observer {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.RPC(s.chain)
}

// ingester returns the loop that ingests the chain from src into store.
func (s chainSettings) ingester(store chainquery.BlockWriter, src ingest.EVMSource, logger *slog.Logger) *ingest.EVMLoop {
	var obs ingest.Observer
	if s.metrics != nil {
		obs = s.metrics.Chain(s.chain)
	}
	return &ingest.EVMLoop{
		Observer:      obs,
		Chain:         s.chain,
		Store:         store,
		Source:        src,
		Logger:        logger,
		From:          s.from,
		RewindTo:      s.rewindTo,
		Confirmations: s.confirmations,
		Concurrency:   s.concurrency,
		BatchBlocks:   s.batch,
	}
}
