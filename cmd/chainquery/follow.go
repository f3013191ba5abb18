package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/metrics"
)

// How serve's followers retry. A node outage or a rate limit must not take
// the API down: every follower resumes from what the store holds, so
// waiting and trying again loses nothing. The first wait is long enough for
// a node restart; doubling keeps a dead node from filling the logs, and ten
// minutes caps how stale a chain stays once its node is back.
const (
	followerMinBackoff = 30 * time.Second
	followerMaxBackoff = 10 * time.Minute

	// followerProgressEvery is how often a follower logs its progress: serve
	// may follow eight chains, and once they are at the head a line per
	// chain a minute is enough to show that they are alive.
	followerProgressEvery = time.Minute
)

// follower keeps one chain's ingester following the head next to the API.
type follower struct {
	settings   chainSettings
	store      chainquery.BlockWriter
	logger     *slog.Logger
	minBackoff time.Duration
	maxBackoff time.Duration

	// progress is the current attempt's, for readiness: it knows the
	// node's head.
	progress atomic.Pointer[ingest.Progress]

	// lastErr is the last attempt's failure, nil before any: readiness and
	// the status endpoint tell why a chain has no block yet.
	lastErr atomic.Pointer[http.FollowError]
}

// run follows the chain until ctx ends, starting over after each failure.
func (f *follower) run(ctx context.Context) {
	f.logger = f.settings.logger(f.logger)
	retry(ctx, f.logger, f.settings.chain, f.minBackoff, f.maxBackoff, func(ctx context.Context) (wrote bool, err error) {
		defer func() {
			if err != nil && ctx.Err() == nil {
				f.lastErr.Store(&http.FollowError{Text: err.Error(), Time: time.Now()})
			}
		}()
		defer ingest.Recover(&err) // first, so that a panic is recorded too
		return f.attempt(ctx)
	})
}

// attempt connects to the node and follows the chain until an error or the
// end of ctx. It reports whether it stored any block, which tells retry that
// the node was healthy for a while.
func (f *follower) attempt(ctx context.Context) (wrote bool, err error) {
	src, err := f.settings.source(ctx, f.logger)
	if err != nil {
		return false, redactErr(err, f.settings.rpc)
	}
	e := f.settings.ingester(f.store, src, f.logger)
	e.Follow = true
	e.Progress = &ingest.Progress{Chain: string(f.settings.chain)}
	f.progress.Store(e.Progress)
	sctx, stop := context.WithCancel(ctx)
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		e.Progress.Show(sctx, io.Discard, false, f.logger, followerProgressEvery)
	}()
	defer func() {
		stop()
		<-shown
		wrote = e.Progress.Snapshot().Blocks > 0
	}()
	return false, redactErr(e.Run(ctx), f.settings.rpc)
}

// retry calls attempt until ctx ends. After a failure it logs the error and
// waits, from lo doubling up to hi; an attempt that stored blocks before
// failing starts the waits over at lo, since the node had recovered.
func retry(ctx context.Context, logger *slog.Logger, chain chainquery.Chain, lo, hi time.Duration, attempt func(context.Context) (bool, error)) {
	backoff := chainquery.Backoff{Min: lo, Max: hi}
	failures := 0 // in a row, since the last attempt that stored blocks
	// The ingester turns the panics of its goroutines into errors; this
	// catches the rest (connecting, probing), so that no node answer can
	// end the API.
	safely := func() (wrote bool, err error) {
		defer ingest.Recover(&err)
		return attempt(ctx)
	}
	for {
		wrote, err := safely()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			// A follower returns nil only when ctx ends; anything else is a
			// bug worth seeing, and retrying is still the right response.
			err = errors.New("the ingester stopped without an error")
		}
		if wrote {
			failures = 0
		}
		failures++
		delay := backoff.Next(failures)
		attrs := []any{"chain", chain, "error", err, "retry_in", delay}
		var pe *ingest.PanicError
		if errors.As(err, &pe) {
			attrs = append(attrs, "stack", pe.Stack)
		}
		logger.Error("follower failed; the API keeps serving and the follower tries again", attrs...)
		if !chainquery.Sleep(ctx, delay) {
			return
		}
	}
}

// readiness returns serve's further /readyz check, nil without followers:
// each followed chain must have a stored block (one stored before serve
// started counts), so that a follower that never reached its node is not
// taken for a ready server; the detail says why it has none. With maxLag >
// 0, each must also be at most maxLag seconds behind its node. Seconds
// behind are the blocks between the node's head and the stored head, in
// the chain's block time as the last 100 stored blocks show it; the
// confirmations count too, so maxLag must leave room for them.
func readiness(store chainquery.BlockService, followers []*follower, maxLag int) func(context.Context) error {
	if len(followers) == 0 {
		return nil
	}
	return func(ctx context.Context) error {
		for _, f := range followers {
			chain := f.settings.chain
			var head uint64
			if p := f.progress.Load(); p != nil {
				head = p.Snapshot().Head
			}
			stored, err := store.LatestBlock(ctx, chain)
			if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
				why := "the follower has not heard from its node yet"
				if head > 0 {
					why = fmt.Sprintf("node head %d", head)
				}
				return fmt.Errorf("%s: no block stored yet (%s)%s", chain, why, f.lastError())
			} else if err != nil {
				return fmt.Errorf("%s: %w", chain, err)
			}
			if maxLag <= 0 {
				continue
			}
			if head == 0 {
				return fmt.Errorf("%s: the follower has not heard from its node yet%s", chain, f.lastError())
			}
			lag, err := secondsBehind(ctx, store, chain, stored, head)
			if err != nil {
				return fmt.Errorf("%s: %w", chain, err)
			}
			if lag > float64(maxLag) {
				return fmt.Errorf("%s is %.0f s behind its node (head %d; --ready-max-lag %d)", chain, lag, head, maxLag)
			}
		}
		return nil
	}
}

// lastError is "; last error (AGE ago): TEXT" of the follower's last failure, ""
// before any.
func (f *follower) lastError() string {
	e := f.lastErr.Load()
	if e == nil {
		return ""
	}
	return fmt.Sprintf("; last error (%s ago): %s", time.Since(e.Time).Round(time.Second), e.Text)
}

// secondsBehind is how far stored, the stored head of chain, is behind the
// node's head, in seconds of the chain's own block time.
func secondsBehind(ctx context.Context, store chainquery.BlockService, chain chainquery.Chain, stored, head uint64) (float64, error) {
	if stored >= head {
		return 0, nil
	}
	last, err := store.FindBlock(ctx, chain, stored, false)
	if err != nil {
		return 0, err
	}
	// The block time over up to 100 stored blocks; one block alone says
	// nothing, and a gap below the head (a range ingested later) is taken
	// as unknown rather than as no lag.
	span := min(stored, 100)
	if span == 0 {
		return 0, fmt.Errorf("one block stored: its block time is unknown (node head %d)", head)
	}
	earlier, err := store.FindBlock(ctx, chain, stored-span, false)
	if err != nil {
		return 0, fmt.Errorf("block time unknown: %w", err)
	}
	blockTime := max(float64(last.Timestamp-earlier.Timestamp)/float64(span), 0)
	return float64(head-stored) * blockTime, nil
}

// nodeHeads returns, for the status endpoint (http.Config.NodeHeads), the
// node's head of each followed chain as its follower last heard it (0
// before it has); nil without followers.
func nodeHeads(followers []*follower) func() map[chainquery.Chain]uint64 {
	if len(followers) == 0 {
		return nil
	}
	return func() map[chainquery.Chain]uint64 {
		heads := make(map[chainquery.Chain]uint64, len(followers))
		for _, f := range followers {
			var head uint64
			if p := f.progress.Load(); p != nil {
				head = p.Snapshot().Head
			}
			heads[f.settings.chain] = head
		}
		return heads
	}
}

// followErrors returns, for the status endpoint (http.Config.FollowErrors),
// the last error of each follower that has failed; nil without followers.
func followErrors(followers []*follower) func() map[chainquery.Chain]http.FollowError {
	if len(followers) == 0 {
		return nil
	}
	return func() map[chainquery.Chain]http.FollowError {
		errs := make(map[chainquery.Chain]http.FollowError)
		for _, f := range followers {
			if e := f.lastErr.Load(); e != nil {
				errs[f.settings.chain] = *e
			}
		}
		return errs
	}
}

// registerIngestMetrics registers on reg (serve's /metrics) the ingestion
// metrics, which the followers then record, and chainquery_store_up, and
// returns the metrics for other ingesters of the process (dev's). It must be
// called before the followers start.
func registerIngestMetrics(reg prometheus.Registerer, store chainquery.Store, followers []*follower) (*metrics.Ingest, error) {
	m, err := metrics.NewIngest(reg)
	if err != nil {
		return nil, err
	}
	for _, f := range followers {
		f.settings.metrics = m
	}
	return m, metrics.RegisterStoreUp(reg, store.Ping)
}
