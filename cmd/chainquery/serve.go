package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	nethttp "net/http"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/http"
)

// defaultListen is loopback only: exposing the API beyond the machine should
// be a decision, not a default.
const defaultListen = "127.0.0.1:8080"

// serveCmd serves the HTTP API until its context is cancelled.
type serveCmd struct {
	db              dsn
	listen          string
	logFormat       string
	logLevel        slog.Level
	shutdownTimeout time.Duration
	traceStart      map[chainquery.Chain]time.Time // nil: the http package's defaults
}

func (m *Main) parseServe(args []string) (*serveCmd, error) {
	c := &serveCmd{}
	fs := newFlagSet("chainquery serve")
	db := fs.String("db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	fs.StringVar(&c.listen, "listen", m.env("CHAINQUERY_LISTEN", defaultListen), "`ADDR` to listen on, host:port; port 0 picks a free one (env CHAINQUERY_LISTEN)")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `FORMAT`: text or json")
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "log `LEVEL`: debug, info, warn or error")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish after SIGINT or SIGTERM")
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
	usage := "Usage: chainquery serve [--db DSN] [--listen ADDR] [flags]\n\n" +
		"Serves the read-only HTTP API until SIGINT or SIGTERM, then finishes\n" +
		"in-flight requests and exits. Every request needs an API key in the apikey\n" +
		"header (chainquery keys create). GET /openapi.json describes the API.\n" + dsnUsage
	if err := m.parse(fs, args, usage); err != nil {
		return nil, err
	}
	help := fs.Name() + " -h"
	var err error
	if c.db, err = parseDBFlag(help, *db); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(c.listen); err != nil {
		return nil, usagef(help, "--listen must be host:port, e.g. %s or 127.0.0.1:0", defaultListen)
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return nil, usagef(help, "--log-format must be text or json")
	}
	if c.shutdownTimeout <= 0 {
		return nil, usagef(help, "--shutdown-timeout must be positive")
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

func (c *serveCmd) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.logLevel}
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func (c *serveCmd) run(ctx context.Context, m *Main) error {
	logger := c.logger(m.Stderr)
	store, err := m.openStore(c.db, false)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.listen, err)
	}
	srv := http.NewServer(http.Config{
		Store:             store,
		Logger:            logger,
		TraceHistoryStart: c.traceStart,
	})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	addr := ln.Addr().String()
	logger.Info("listening", "addr", addr, "url", "http://"+addr, "db", c.db.String())
	m.markListening(ln.Addr())

	select {
	case err := <-served: // only a broken listener ends Serve before Shutdown
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	// ctx is already cancelled: the grace period needs a context of its own.
	logger.Info("shutting down: finishing in-flight requests", "timeout", c.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: requests still running after %s: %w", c.shutdownTimeout, err)
	}
	if err := <-served; err != nil && !errors.Is(err, nethttp.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}
