package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/solanareplay"
	"github.com/chainquery/chainquery/solana"
)

// replaySolana stores the recorded Solana mainnet block that solanareplay
// embeds, so that the Solana endpoints answer with real data: it loads the
// token list into the registry, as registry import does, and runs the
// ingester of ingest solana, with its default flags, against a node on
// 127.0.0.1 that serves the block and an empty one an hour later. With
// --keep the store's cursor is already there and nothing is ingested.
//
// The data are embedded in the binary rather than read from
// testdata/solana, so that dev works from the binary in any folder, and
// need no network (see solanareplay).
func (c *devCmd) replaySolana(ctx context.Context, m *Main, store chainquery.Store, logger *slog.Logger) error {
	start := time.Now()
	tokens, err := solana.ReadTokenList(solanareplay.TokenList())
	if err != nil {
		return fmt.Errorf("solana: the embedded token list: %w", err)
	}
	if err := store.WriteTokens(ctx, tokens); err != nil {
		return fmt.Errorf("solana: store the token list: %w", err)
	}
	node, err := solanareplay.Mainnet()
	if err != nil {
		return err
	}
	srv, err := solanareplay.Serve(node)
	if err != nil {
		return err
	}
	defer srv.Close()
	// The command's own parser, so that the replay runs with exactly the
	// defaults of ingest solana. --db is given only so that the parser
	// does not read CHAINQUERY_DB: the ingester gets dev's store.
	ic, err := m.parseIngestSolana([]string{"--db", c.db.String(), "--rpc", srv.URL,
		"--from-slot", strconv.FormatUint(solanareplay.MainnetSlot, 10),
		"--to-slot", strconv.FormatUint(solanareplay.TailSlot, 10)})
	if err != nil {
		return fmt.Errorf("solana: %w", err)
	}
	e, _ := ic.ingester(logger)
	e.Store = store
	if err := e.Run(ctx); err != nil {
		return err
	}
	if p := e.Progress.Snapshot(); p.Blocks > 0 {
		logger.Info("replayed a recorded mainnet block", "chain", "solana", "slot", solanareplay.MainnetSlot, "blocks", p.Blocks,
			"rows", p.Rows, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// background is a function running on its own goroutine: dev's Solana
// replay, which runs while anvil starts and the contracts are deployed.
type background struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error // f's, once done is closed
}

// goBackground runs f on a goroutine with a context of its own, derived
// from ctx.
func goBackground(ctx context.Context, f func(context.Context) error) *background {
	ctx, cancel := context.WithCancel(ctx)
	b := &background{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.err = f(ctx)
	}()
	return b
}

// wait returns f's error once it has returned, or ctx's if ctx ends first.
func (b *background) wait(ctx context.Context) error {
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop cancels f and waits until it has returned.
func (b *background) stop() {
	b.cancel()
	<-b.done
}
