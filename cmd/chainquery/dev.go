package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/internal/solanareplay"
	"github.com/chainquery/chainquery/jsonrpc"
)

// defaultDevDSN is dev's own database. dev deletes it at every start, so it
// never defaults to CHAINQUERY_DB, which may name a database that matters.
const defaultDevDSN = "sqlite:chainquery-dev.db"

// devChainID makes anvil a polygon chain: Filter Traces and Get Block serve
// polygon only, and every endpoint should have something to show.
const devChainID = 137

// devCmd is the whole service on a local chain, for a first look: anvil,
// a stream of transactions, a follower and the API, in one process.
type devCmd struct {
	db       dsn
	listen   string
	interval time.Duration
	keep     bool
	log      logOptions
}

func (m *Main) parseDev(args []string) (*devCmd, error) {
	c := &devCmd{}
	fs := newFlagSet("chainquery dev")
	db := fs.String("db", defaultDevDSN, "database `DSN`; deleted and created afresh at start unless --keep")
	fs.StringVar(&c.listen, "listen", defaultListen, "`ADDR` the API listens on, host:port; port 0 picks a free one")
	fs.DurationVar(&c.interval, "interval", 2*time.Second, "time between rounds of transactions (one block each)")
	fs.BoolVar(&c.keep, "keep", false, "keep the database and the chain (anvil's state file) of the last run")
	c.log.register(fs, slog.LevelInfo)
	usage := "Usage: chainquery dev [--db DSN] [--listen ADDR] [--interval 2s] [--keep]\n\n" +
		"Runs the whole service on a local chain: starts anvil (chain id 137, indexed\n" +
		"as polygon), deploys test contracts and sends a round of varied transactions\n" +
		"every --interval (with an empty block now and then), follows the chain into\n" +
		"the database, serves the API, and prints an API key with a curl command for\n" +
		"each endpoint. Ctrl-C stops everything.\n\n" +
		"For the Solana endpoints it also replays a recorded mainnet block (slot\n" +
		"110360000, December 2021, embedded in the binary) into the database through\n" +
		"the ingester of ingest solana, from a node on 127.0.0.1: no network needed.\n\n" +
		"anvil comes from ./node_modules (scripts/setup installs it, and dev runs\n" +
		"scripts/setup when it is missing), $CHAINQUERY_ANVIL, or $PATH.\n\n" +
		"The database and anvil's state (next to it, *.anvil.json) are deleted at start,\n" +
		"since a new chain does not match an old database; --keep resumes both. dev\n" +
		"refuses to delete a database that holds anything it did not make itself.\n" +
		"CHAINQUERY_DB and CHAINQUERY_LISTEN are not read.\n"
	if err := m.parse(fs, args, usage); err != nil {
		return nil, err
	}
	help := fs.Name() + " -h"
	var err error
	if c.db, err = parseDBFlag(help, *db); err != nil {
		return nil, err
	}
	if c.db.scheme != "sqlite" {
		return nil, usagef(help, "--db must be sqlite:PATH: dev deletes and recreates its database")
	}
	if _, _, err := net.SplitHostPort(c.listen); err != nil {
		return nil, usagef(help, "--listen must be host:port, e.g. %s or 127.0.0.1:0", defaultListen)
	}
	if c.interval < 10*time.Millisecond {
		return nil, usagef(help, "--interval must be at least 10ms")
	}
	return c, c.log.check(help)
}

// anvilState is where anvil keeps the dev chain between runs, next to the
// database that indexes it.
func (c *devCmd) anvilState() string {
	return strings.TrimSuffix(c.db.path, ".db") + ".anvil.json"
}

func (c *devCmd) run(ctx context.Context, m *Main) error {
	// Ctrl-C while dev is still starting is a normal way out, not a failure.
	err := c.runAll(ctx, m)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// runAll starts anvil, the traffic, the follower and the API, and runs them
// until ctx ends or one of them fails.
func (c *devCmd) runAll(ctx context.Context, m *Main) error {
	logger := c.log.logger(m.Stderr)
	// Listening comes first, so that a port in use fails before the last
	// run's database and chain are deleted, and before anvil and the
	// contracts cost any time.
	ln, err := listen(c.listen)
	if err != nil {
		return err
	}
	serving := false
	defer func() {
		if !serving {
			ln.Close()
		}
	}()
	if err := ensureAnvil(ctx, m, logger); err != nil {
		return err
	}
	if !c.keep {
		if err := c.reset(ctx); err != nil {
			return err
		}
	}
	store, err := m.openStore(ctx, c.db, storeOptions{})
	if err != nil {
		return err
	}
	// The Solana replay runs while anvil starts and the contracts are
	// deployed, which take longer; the welcome waits for it.
	replay := goBackground(ctx, func(ctx context.Context) error { return c.replaySolana(ctx, m, store, logger) })
	defer replay.stop()
	// With --state anvil loads the chain of the last run and saves it when
	// it exits on a signal (Ctrl-C on a terminal reaches it too). Otherwise
	// saveAnvilState saves it before Close, which kills anvil outright.
	node, err := devchain.StartAnvil(ctx, devChainID, "--state", c.anvilState())
	if err != nil {
		return fmt.Errorf("start anvil: %w", err)
	}
	defer node.Close()
	rpc := jsonrpc.NewClient(node.URL)
	rpc.Logger = logger
	defer func() {
		if err := saveAnvilState(context.WithoutCancel(ctx), node.URL, c.anvilState()); err != nil {
			logger.Warn("could not save the dev chain: the next dev --keep starts afresh", "error", err)
		}
	}()
	if c.keep {
		if err := sameChain(ctx, store, rpc, c.anvilState()); err != nil {
			return err
		}
	}
	traffic, err := c.contracts(ctx, rpc, logger)
	if err != nil {
		return err
	}
	first, err := firstRound(ctx, traffic)
	if err != nil {
		return err
	}

	s := newChainSettings(chainquery.Polygon, node.URL)
	s.from, s.confirmations, s.traces = new(uint64), 0, evm.TracesAuto // anvil never reorganizes by itself
	// The default trace history (polygon from 2025-01-01) shows every dev
	// block: anvil stamps blocks with the current time.
	// Metrics on, as serve's default: dev listens on loopback unless told
	// otherwise, and /metrics is part of what there is to look at. As
	// serve's followers, the ingester records the ingestion metrics there
	// and gives the status endpoint the node's head.
	progress := &ingest.Progress{Chain: string(s.chain)}
	heads := func() map[chainquery.Chain]uint64 {
		return map[chainquery.Chain]uint64{s.chain: progress.Snapshot().Head}
	}
	api := m.startAPIWith(ln, http.Config{Store: store, Logger: logger, Metrics: true, NodeHeads: heads},
		[]any{"db", c.db.String()})
	serving = true
	// Until the group below runs it, an error stops the API here.
	abort := func(err error) error {
		done, cancel := context.WithCancel(ctx)
		cancel()
		api.wait(done, time.Second)
		return err
	}
	if s.metrics, err = registerIngestMetrics(api.srv.Registry(), store, nil); err != nil {
		return abort(err)
	}
	src, err := s.source(ctx, logger)
	if err != nil {
		return abort(err)
	}
	e := s.ingester(store, src, logger)
	e.Follow, e.PollInterval, e.Progress = true, 200*time.Millisecond, progress // a local node is cheap to ask

	g := newGroup(ctx)
	g.run(e.Run)
	g.run(func(ctx context.Context) error { return c.sendTraffic(ctx, traffic, logger) })
	g.run(func(ctx context.Context) error { return api.wait(ctx, 5*time.Second) })

	key, err := devKey(g.ctx, store)
	if err == nil {
		err = waitIndexed(g.ctx, store, first.block)
	}
	if err == nil {
		err = replay.wait(g.ctx)
	}
	if err == nil {
		c.printWelcome(m, node, traffic, "http://"+m.Addr().String(), key, first)
	} else if g.ctx.Err() == nil {
		g.fail(err)
	}
	err = g.wait()
	if err == nil {
		logger.Info("stopped")
	}
	return err
}

// contractsFile is where dev records the addresses of its test contracts,
// next to its database, so that --keep sends to the same ones.
func (c *devCmd) contractsFile() string {
	return strings.TrimSuffix(c.db.path, ".db") + ".contracts.json"
}

// devContracts is what contractsFile holds.
type devContracts struct {
	Lib    string `json:"lib"`
	Driver string `json:"driver"`
}

// contracts returns the traffic of the test contracts: with --keep, the last
// run's, when the kept chain still holds them; else newly deployed ones,
// whose addresses it records.
func (c *devCmd) contracts(ctx context.Context, rpc *jsonrpc.Client, logger *slog.Logger) (*devchain.Traffic, error) {
	if c.keep {
		var kept devContracts
		b, err := os.ReadFile(c.contractsFile())
		if err == nil {
			err = json.Unmarshal(b, &kept)
		}
		if err == nil {
			t, err := devchain.Attach(ctx, rpc, kept.Lib, kept.Driver)
			if err == nil {
				logger.Info("using the last run's test contracts", "lib", t.Lib, "driver", t.Driver)
				return t, nil
			}
			logger.Warn("the last run's test contracts are gone: deploying them again", "error", err)
		} else if !errors.Is(err, os.ErrNotExist) {
			logger.Warn("the last run's test contracts are not known: deploying them again", "error", err)
		}
	}
	t, err := devchain.Deploy(ctx, rpc)
	if err != nil {
		return nil, fmt.Errorf("deploy the test contracts: %w", err)
	}
	b, _ := json.Marshal(devContracts{Lib: t.Lib, Driver: t.Driver})
	if err := os.WriteFile(c.contractsFile(), b, 0o644); err != nil {
		logger.Warn("could not record the test contracts: the next dev --keep deploys them again", "error", err)
	}
	return t, nil
}

// reset deletes the database and the chain of the last run, unless the
// database holds something dev did not make: dev must never be the way a
// real database is lost to a mistyped --db.
func (c *devCmd) reset(ctx context.Context) error {
	path := c.db.path
	if _, err := os.Stat(path); err == nil {
		if err := checkDevDB(ctx, c.db); err != nil {
			return fmt.Errorf("will not delete %s: %w; choose another --db", c.db, err)
		}
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal", c.anvilState(), c.contractsFile()} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("delete the last dev run: %w", err)
		}
	}
	return nil
}

// devMaxBlock is a polygon height a dev chain does not reach (it would take
// over 20 days at one block every 2 s); a database beyond it holds the real
// chain.
const devMaxBlock = 1_000_000

// checkDevDB returns an error naming what in the database dev did not make:
// an API key other than "dev", or blocks of a chain other than the dev chain.
func checkDevDB(ctx context.Context, d dsn) error {
	s, closeStore, err := d.open(ctx, storeOptions{mustExist: true})
	if err != nil {
		return fmt.Errorf("it is not a database dev can read (%v)", err)
	}
	defer closeStore()
	keys, err := s.ListAPIKeys(ctx)
	if err != nil {
		return fmt.Errorf("list its API keys: %v", err)
	}
	for _, k := range keys {
		if k.Name != "dev" {
			return fmt.Errorf("it holds the API key %q, which dev did not create", k.Name)
		}
	}
	for _, chain := range chainquery.EVMChains {
		n, err := s.LatestBlock(ctx, chain)
		if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
			continue
		} else if err != nil {
			return fmt.Errorf("read its latest %s block: %v", chain, err)
		}
		if chain != chainquery.Polygon || n > devMaxBlock {
			return fmt.Errorf("it holds %s blocks up to %d, which no dev chain has", chain, n)
		}
	}
	// dev's Solana data end at the replay's tail, whose blockhash no
	// mainnet block has.
	cur, ok, err := s.SolanaCursor(ctx)
	if err != nil {
		return fmt.Errorf("read its Solana cursor: %v", err)
	}
	if ok && (cur.Slot != solanareplay.TailSlot || cur.Blockhash != solanareplay.TailBlockhash) {
		return fmt.Errorf("it holds Solana token balances up to slot %d, which dev does not replay", cur.Slot)
	}
	return nil
}

// sameChain checks, with --keep, that the database indexes this anvil's
// chain: block 0 differs between anvil chains, since it carries the time of
// their creation.
func sameChain(ctx context.Context, store chainquery.Store, rpc *jsonrpc.Client, state string) error {
	stored, err := store.BlockHash(ctx, chainquery.Polygon, 0)
	if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	var genesis struct {
		Hash string `json:"hash"`
	}
	if err := rpc.Call(ctx, &genesis, "eth_getBlockByNumber", "0x0", false); err != nil {
		return fmt.Errorf("eth_getBlockByNumber 0: %w", err)
	}
	if !strings.EqualFold(stored.Hex(), genesis.Hash) {
		return fmt.Errorf("--keep: the database indexes another chain than anvil now runs (block 0 differs; was %s removed?): run without --keep to start afresh", state)
	}
	return nil
}

// sendTraffic sends a round of transactions every interval until ctx ends,
// and an empty block every fifth round, so that the API also shows a block
// without transactions.
func (c *devCmd) sendTraffic(ctx context.Context, t *devchain.Traffic, logger *slog.Logger) error {
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		hashes, err := t.Round(ctx)
		if err == nil && t.Rounds%5 == 0 {
			err = t.MineEmpty(ctx, 1)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("send transactions to anvil: %w", err)
		}
		logger.Debug("sent a round of transactions", "round", t.Rounds, "transactions", len(hashes))
	}
}
