package ingest

import (
	"context"
	"log/slog"
	"time"

	"github.com/chainquery/chainquery"
)

// patience retries store calls that fail because the database cannot be
// reached (EUNAVAILABLE): a PostgreSQL restart or failover must pause
// ingestion, not end it. Each write is one transaction, so a retried write
// either happened or did not; the store stays the cursor and nothing is lost
// or written twice. Any other error is returned at once.
type patience struct {
	chain   chainquery.Chain
	logger  *slog.Logger
	backoff chainquery.Backoff
}

// patientStore is a BlockWriter whose calls are retried with patience.
type patientStore struct {
	chainquery.BlockWriter
	patience
}

// storeBackoff is how long a loop waits for an unavailable store: from first
// (the loop's StoreRetry), doubling up to 30 s.
func storeBackoff(first time.Duration) chainquery.Backoff {
	return chainquery.Backoff{Min: first, Max: 30 * time.Second}
}

func (s patience) retry(ctx context.Context, what string, call func() error) error {
	for attempt := 1; ; attempt++ {
		err := call()
		if chainquery.ErrorCode(err) != chainquery.EUNAVAILABLE {
			return err
		}
		wait := s.backoff.Next(attempt)
		s.logger.Warn("store unavailable, retrying", "chain", s.chain, "call", what, "attempt", attempt, "wait", wait, "error", err)
		if !chainquery.Sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

func (s *patientStore) HeadBlock(ctx context.Context, chain chainquery.Chain) (n uint64, err error) {
	err = s.retry(ctx, "HeadBlock", func() error { n, err = s.BlockWriter.HeadBlock(ctx, chain); return err })
	return n, err
}

func (s *patientStore) BlockHash(ctx context.Context, chain chainquery.Chain, number uint64) (h chainquery.Hash, err error) {
	err = s.retry(ctx, "BlockHash", func() error { h, err = s.BlockWriter.BlockHash(ctx, chain, number); return err })
	return h, err
}

// SetNodeHead passes the node's head on to a store that wants it
// (chainquery.NodeHeadWriter).
func (s *patientStore) SetNodeHead(chain chainquery.Chain, head uint64) {
	if w, ok := s.BlockWriter.(chainquery.NodeHeadWriter); ok {
		w.SetNodeHead(chain, head)
	}
}

func (s *patientStore) WriteBlocks(ctx context.Context, chain chainquery.Chain, blocks []*chainquery.BlockData) error {
	return s.retry(ctx, "WriteBlocks", func() error { return s.BlockWriter.WriteBlocks(ctx, chain, blocks) })
}

func (s *patientStore) ReplaceBlocks(ctx context.Context, chain chainquery.Chain, from uint64, blocks []*chainquery.BlockData) error {
	return s.retry(ctx, "ReplaceBlocks", func() error { return s.BlockWriter.ReplaceBlocks(ctx, chain, from, blocks) })
}
