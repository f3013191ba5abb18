package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	nethttp "net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/http"
)

// defaultListen is loopback only: exposing the API beyond the machine should
// be a decision, not a default.
const defaultListen = "127.0.0.1:8080"

// serveCmd serves the HTTP API until its context is cancelled, and follows
// the chains its config file names.
type serveCmd struct {
	db              dsn
	readDB          *dsn // --read-db: a streaming replica that answers the API's reads
	pg              pgOptions
	listen          string
	log             logOptions
	shutdownTimeout time.Duration
	traceStart      map[chainquery.Chain]time.Time // nil: the http package's defaults
	config          string                         // the --config file, if any
	chains          []chainSettings                // followers, from the config file
	rateLimit       float64                        // requests per second per API key; 0: no limit
	rateBurst       int                            // 0: max(1, ceil(rateLimit))
	metrics         bool                           // serve Prometheus metrics at GET /metrics
	readyMaxLag     int                            // seconds a followed chain may be behind its node for /readyz; 0: not checked
	answerCacheMB   int                            // MiB of deep answers kept in memory; 0: none
	share           shareOptions                   // the request deadline and fair share between keys
	prof            profileFlags                   // hidden, as ingest evm's: cqbench load profiles serve with them
}

func (m *Main) parseServe(args []string) (*serveCmd, error) {
	c := &serveCmd{}
	args, err := c.prof.take(args)
	if err != nil {
		return nil, err
	}
	fs := newFlagSet("chainquery serve")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB); with PostgreSQL, the primary")
	readDB := dsnVar(fs, "read-db", m.env("CHAINQUERY_READ_DB", ""), "PostgreSQL only: `DSN` of a streaming replica of --db that answers the API's\nreads (env CHAINQUERY_READ_DB); writes and the followers use --db")
	fs.StringVar(&c.listen, "listen", m.env("CHAINQUERY_LISTEN", defaultListen), "`ADDR` to listen on, host:port; port 0 picks a free one (env CHAINQUERY_LISTEN)")
	fs.StringVar(&c.config, "config", "", "config `FILE` (JSON with // comment lines): db, read_db, listen, and the chains\nto follow; see docs/config.md")
	c.log.register(fs, slog.LevelInfo)
	c.pg.register(fs)
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish after SIGINT or SIGTERM")
	fs.Float64Var(&c.rateLimit, "rate-limit", 0, "requests per second each API key may make, `N`; over it a request gets 429\nwith Retry-After; 0 means no limit (env CHAINQUERY_RATE_LIMIT)")
	fs.IntVar(&c.readyMaxLag, "ready-max-lag", 0, "with --config: GET /readyz answers 503 while a followed chain is more than `N`\nseconds behind its node; 0 does not check (config: ready_max_lag)")
	fs.IntVar(&c.rateBurst, "rate-burst", 0, "requests an API key may make at once before --rate-limit paces it, `N`;\n0 means max(1, ceil(--rate-limit))")
	fs.IntVar(&c.answerCacheMB, "answer-cache-mb", http.DefaultAnswerCacheBytes>>20, "`MiB` of answers about blocks deeper than the chain's confirmations kept in\nmemory and served again without the database, for at most an hour; 0 keeps none")
	c.share.register(fs)
	fs.BoolVar(&c.metrics, "metrics", true, "serve Prometheus metrics at GET /metrics, without an API key; restrict it\nat the network level; --metrics=false turns it off")
	fs.Func("trace-history-start", "where Filter Traces history starts on a chain, `CHAIN=DATETIME` (RFC 3339);\nrepeatable; default polygon=2025-01-01T00:00:00Z", func(s string) error {
		chain, at, err := parseTraceStart(s)
		if err != nil {
			return err
		}
		if c.traceStart == nil {
			c.traceStart = map[chainquery.Chain]time.Time{}
		}
		c.traceStart[chain] = at
		return nil
	})
	usage := "Usage: chainquery serve [--db DSN [--read-db DSN]] [--listen ADDR] [--config FILE] [flags]\n\n" +
		"Serves the read-only HTTP API until SIGINT or SIGTERM, then finishes\n" +
		"in-flight requests and exits. Every request needs an API key in the apikey\n" +
		"header (chainquery keys create). GET /openapi.json describes the API.\n\n" +
		"With --config, it also follows each chain the file names, in the same\n" +
		"process. A follower that fails logs the error and tries again after 30 s,\n" +
		"doubling up to 10 min, while the API keeps serving; GET /readyz answers 503\n" +
		"until each followed chain has a stored block. For db, read_db and\n" +
		"listen, flags win over the environment, which wins over the file.\n\n" +
		"With PostgreSQL, any number of serve processes may share one database\n" +
		"(docs/scaling.md): --read-db sends the API's reads to a streaming replica,\n" +
		"whose answers trail the primary by its replay lag. While the database is\n" +
		"unreachable requests get 503, and serve logs it; it recovers by itself.\n" + dsnUsage
	if err := m.parse(fs, args, usage); err != nil {
		return nil, err
	}
	help := fs.Name() + " -h"
	if c.config != "" {
		cfg, chains, err := loadConfig(c.config)
		if err != nil {
			return nil, err
		}
		c.chains = chains
		set := flagsSet(fs)
		if cfg.DB != "" && !set["db"] && m.env("CHAINQUERY_DB", "") == "" {
			db.s = cfg.DB
		}
		if cfg.ReadDB != "" && !set["read-db"] && m.env("CHAINQUERY_READ_DB", "") == "" {
			readDB.s = cfg.ReadDB
		}
		if cfg.Listen != "" && !set["listen"] && m.env("CHAINQUERY_LISTEN", "") == "" {
			c.listen = cfg.Listen
		}
		if cfg.ReadyMaxLag != 0 && !set["ready-max-lag"] {
			c.readyMaxLag = cfg.ReadyMaxLag
		}
		c.share.fromConfig(cfg.shareConfig, set)
	}
	if c.db, err = parseDBFlag(help, db.s); err != nil {
		return nil, err
	}
	if c.readDB, err = checkReadDB(help, readDB.s, c.db); err != nil {
		return nil, err
	}
	if err := c.pg.check(help, c.db, flagsSet(fs)); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(c.listen); err != nil {
		return nil, usagef(help, "--listen must be host:port, e.g. %s or 127.0.0.1:0", defaultListen)
	}
	if err := c.log.check(help); err != nil {
		return nil, err
	}
	if v := m.env("CHAINQUERY_RATE_LIMIT", ""); v != "" && !flagsSet(fs)["rate-limit"] {
		if c.rateLimit, err = strconv.ParseFloat(v, 64); err != nil {
			return nil, usagef(help, "CHAINQUERY_RATE_LIMIT must be a number of requests per second, e.g. 10, or 0 for no limit")
		}
	}
	if math.IsNaN(c.rateLimit) || math.IsInf(c.rateLimit, 0) || c.rateLimit < 0 {
		return nil, usagef(help, "--rate-limit must be a number of requests per second, at least 0 (0: no limit)")
	}
	if c.rateBurst < 0 {
		return nil, usagef(help, "--rate-burst must be at least 0 (0: max(1, ceil(--rate-limit)))")
	}
	if c.readyMaxLag < 0 {
		return nil, usagef(help, "--ready-max-lag must be a number of seconds, at least 0 (0: not checked)")
	}
	if c.answerCacheMB < 0 {
		return nil, usagef(help, "--answer-cache-mb must be at least 0 (0: no answer cache)")
	}
	if c.shutdownTimeout <= 0 {
		return nil, usagef(help, "--shutdown-timeout must be positive")
	}
	if err := c.share.check(help); err != nil {
		return nil, err
	}
	return c, nil
}

// parseTraceStart parses CHAIN=DATETIME of --trace-history-start.
func parseTraceStart(s string) (chainquery.Chain, time.Time, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", time.Time{}, errors.New("want CHAIN=DATETIME, e.g. polygon=2025-01-01T00:00:00Z")
	}
	chain, err := chainquery.ParseChain(chainquery.EndpointFilterTraces, name)
	if err != nil {
		return "", time.Time{}, errors.New(errorText(err))
	}
	at, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%s is not an RFC 3339 date-time such as 2025-01-01T00:00:00Z", value)
	}
	return chain, at.UTC(), nil
}

func (c *serveCmd) run(ctx context.Context, m *Main) error {
	logger := c.log.logger(m.Stderr)
	stopProfile, err := c.prof.start(logger)
	if err != nil {
		return err
	}
	defer stopProfile()
	store, err := m.openStore(ctx, c.db, storeOptions{pg: c.pg, readDB: c.readDB})
	if err != nil {
		return err
	}
	// The followers write, and they resume from the highest stored block:
	// read from a replica, that would be where the replica's replay has got
	// to, and they would write again what the primary already holds. With
	// --read-db they get a store of their own on the primary.
	writer := store
	if c.readDB != nil && len(c.chains) > 0 {
		if writer, err = m.openStore(ctx, c.db, storeOptions{pg: c.pg}); err != nil {
			return err
		}
	}
	ln, err := listen(c.listen)
	if err != nil {
		return err
	}
	dbAttrs := []any{"db", c.db.String()}
	if c.readDB != nil {
		dbAttrs = append(dbAttrs, "read_db", c.readDB.String())
	}
	if c.rateLimit > 0 {
		burst := c.rateBurst
		if burst == 0 {
			burst = http.DefaultRateBurst(c.rateLimit)
		}
		logger.Info("rate limit", "requests_per_second_per_key", c.rateLimit, "burst", burst)
	} else {
		logger.Info("rate limit off")
	}
	followers := make([]*follower, len(c.chains))
	for i, s := range c.chains {
		followers[i] = &follower{settings: s, store: writer, logger: logger, minBackoff: followerMinBackoff, maxBackoff: followerMaxBackoff}
	}
	cfg := http.Config{
		Store: store, Logger: logger, TraceStart: c.traceStart,
		RateLimit: c.rateLimit, RateBurst: c.rateBurst, Metrics: c.metrics,
		Ready: readiness(store, followers, c.readyMaxLag), NodeHeads: nodeHeads(followers),
		FollowErrors:  followErrors(followers),
		Confirmations: confirmations(c.chains), AnswerCacheBytes: int64(c.answerCacheMB) << 20,
		TracedChains: tracedChains(c.chains),
	}
	c.share.apply(&cfg)
	c.share.log(logger, cfg)
	api := m.startAPIWith(ln, cfg, dbAttrs)
	if _, err := registerIngestMetrics(api.srv.Registry(), store, followers); err != nil {
		return err
	}
	// The followers and the watch on the store stop when ctx ends, or when
	// the API breaks: the process is of no use without it. Run returns only
	// once they have stopped, so that Close never pulls the store from
	// under a writer.
	fctx, stopFollowers := context.WithCancel(ctx)
	defer stopFollowers()
	var wg sync.WaitGroup
	wg.Go(func() { watchStore(fctx, store, logger, storeCheckEvery) })
	for _, f := range followers {
		wg.Go(func() { f.run(fctx) })
	}
	err = api.wait(ctx, c.shutdownTimeout)
	stopFollowers()
	wg.Wait()
	if err == nil {
		logger.Info("stopped")
	}
	return err
}

// confirmations returns, per EVM chain, how deep below the latest indexed
// block an answer must be for the API to let it be cached: the chain's
// default confirmations, or those of its follower in the config file.
func confirmations(chains []chainSettings) map[chainquery.Chain]uint64 {
	m := make(map[chainquery.Chain]uint64, len(chainDefaults))
	for c, d := range chainDefaults {
		m[c] = d.confirmations
	}
	for _, s := range chains {
		m[s.chain] = s.confirmations
	}
	return m
}

// tracedChains returns the chains whose followers store traces: Filter
// Traces and Get Block serve them from the start, before any of their
// traces is stored.
func tracedChains(chains []chainSettings) []chainquery.Chain {
	var out []chainquery.Chain
	for _, s := range chains {
		if s.traces != evm.TracesOff {
			out = append(out, s.chain)
		}
	}
	return out
}

// api is the HTTP server of serve and dev, listening.
type api struct {
	srv    *http.Server
	served chan error
	logger *slog.Logger
}

// listen opens the API's socket. It is apart from startAPI so that dev can
// find a port in use before it starts anything else.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Every store serve opens (sqlite.DB, postgres.DB) answers the API, which
// reads only a part of it (http.Store).
var _ http.Store = chainquery.Store(nil)

// startAPI serves store on ln until wait returns. It marks Main as
// listening, so that tests and dev learn the address.
// dbAttrs name the database in the log, redacted.
func (m *Main) startAPI(ln net.Listener, store chainquery.Store, logger *slog.Logger, traceStart map[chainquery.Chain]time.Time, dbAttrs []any) *api {
	return m.startAPIWith(ln, http.Config{Store: store, Logger: logger, TraceStart: traceStart}, dbAttrs)
}

// startAPIWith is startAPI with the whole http.Config; cfg.Logger must not
// be nil.
func (m *Main) startAPIWith(ln net.Listener, cfg http.Config, dbAttrs []any) *api {
	logger := cfg.Logger
	a := &api{
		srv:    http.NewServer(cfg),
		served: make(chan error, 1),
		logger: logger,
	}
	go func() { a.served <- a.srv.Serve(ln) }()
	logger.Info("listening", append([]any{"addr", ln.Addr().String(), "url", "http://" + ln.Addr().String()}, dbAttrs...)...)
	m.markListening(ln.Addr())
	return a
}

// wait serves until ctx ends, then stops accepting connections and lets
// in-flight requests finish within timeout.
func (a *api) wait(ctx context.Context, timeout time.Duration) error {
	select {
	case err := <-a.served: // only a broken listener ends Serve before Shutdown
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// ctx is already cancelled: the grace period needs a context of its own.
	a.logger.Info("shutting down: finishing in-flight requests", "timeout", timeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := a.srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: requests still running after %s: %w", timeout, err)
	}
	if err := <-a.served; err != nil && !errors.Is(err, nethttp.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
