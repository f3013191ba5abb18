package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
)

// appendOpenFor is the longest an append transaction stays open unless
// the store says otherwise (Store.AppendOpenFor): other writers of a
// SQLite file (keys, another chain's ingester) wait for it, and a node
// that answers slowly would otherwise keep them waiting for a whole
// bucket. A commit before the bucket ends is what every write did before
// appends: the bucket's lists are appended to again by the next.
const appendOpenFor = 2 * time.Second

// WritesInProcess says whether the store's database runs in this process
// (chainquery.InProcessWriter).
func (s *Store) WritesInProcess() bool { return s.Dialect.InProcess }

// appendOpenFor returns how long an append transaction stays open at most.
func (s *Store) appendOpenFor() time.Duration {
	if s.AppendOpenFor > 0 {
		return s.AppendOpenFor
	}
	return appendOpenFor
}

// appending is a chain's open write transaction of AppendBlocks: the
// blocks appended since its last commit, their headers, segments and hash
// prefixes inserted, their posting lists and counts gathered in h, to be
// written once when the transaction commits.
type appending struct {
	b     BlockBatch
	h     *historyBuilder
	next  uint64 // the height the next append starts at
	timer *time.Timer
}

// appends holds the open append transactions by chain key.
type appends struct {
	mu   sync.Mutex
	open map[int64]*appending
	lost map[int64]error // a commit by the timer that failed, reported by the next append
}

// takeLost returns, once, the failure of the timer's commit of chain id:
// the blocks appended before it are not stored. Called with mu held.
func (a *appends) takeLost(id int64) error {
	err := a.lost[id]
	if err == nil {
		return nil
	}
	delete(a.lost, id)
	return fmt.Errorf("the blocks appended before were not stored: %w", err)
}

// AppendBlocks stores blocks of chain in the chain's open write
// transaction (chainquery.BlockAppender), which it commits when the last
// block ends a bucket of the log lists (LogBucketBlocks), when it has been
// open for appendOpenFor, when blocks reach the rows of the tip (those are
// written and committed as WriteBlocks writes them), or on FlushBlocks;
// the trace pages of a bucket of trace_counts are written when it ends. So
// a backfill writes each bucket's trace pages once, whole and sorted, and
// its log lists once a commit, instead of appending to them once a batch:
// on PostgreSQL each append left the lists' old versions dead, 8 KB a
// block (docs/benchmarks.md, issue 30, session 18). On an error the open
// transaction is rolled back: the blocks appended since the last commit
// are not stored.
func (s *Store) AppendBlocks(ctx context.Context, chain chainquery.Chain, blocks []*chainquery.BlockData) error {
	id, err := storeChainID(chain)
	if err != nil || len(blocks) == 0 {
		return err
	}
	s.appends.mu.Lock()
	defer s.appends.mu.Unlock()
	if err := s.appends.takeLost(id); err != nil {
		return err
	}
	// A run of consecutive heights is cut at the ends of buckets, each
	// piece committed with the bucket it ends.
	for len(blocks) > 0 {
		n := 1
		for n < len(blocks) && blocks[n].Block.Number == blocks[n-1].Block.Number+1 && blocks[n-1].Block.Number%TraceCountBlocks != TraceCountBlocks-1 {
			n++
		}
		if err := s.appendPiece(ctx, id, blocks[:n]); err != nil {
			return err
		}
		blocks = blocks[n:]
	}
	return nil
}

// appendPiece appends blocks, consecutive heights within one bucket of
// trace_counts, to the open transaction of chain id; it writes the
// bucket's trace pages if they end it, and commits if they end a bucket
// of the log lists or reach the tip's rows.
func (s *Store) appendPiece(ctx context.Context, id int64, blocks []*chainquery.BlockData) error {
	a := s.appends.open[id]
	if a != nil && blocks[0].Block.Number != a.next {
		// Not the continuation of what is open: a write of its own.
		if err := s.commitAppend(ctx, id, a); err != nil {
			return err
		}
		a = nil
	}
	var err error
	if a == nil {
		if a, err = s.beginAppend(ctx, id, blocks); err != nil {
			return err
		}
	}
	rows, err := s.appendTo(ctx, id, a, blocks)
	if err != nil {
		s.dropAppend(id, a)
		return err
	}
	a.next = blocks[len(blocks)-1].Block.Number + 1
	switch {
	case len(rows) > 0 || a.next%LogBucketBlocks == 0:
		if err := insertBlockRows(ctx, a.b, id, rows, s.AmountArg, rowAll); err != nil {
			s.dropAppend(id, a)
			return err
		}
		return s.commitAppend(ctx, id, a)
	case a.next%TraceCountBlocks == 0:
		// A bucket of trace_counts ends: its pages are made, whole (and
		// written at the commit, with the other buckets'), and the
		// transaction goes on to the end of the log lists' bucket (or
		// appendOpenFor): a commit at each trace bucket appended to the
		// log lists' rows ten times a bucket.
		if err := a.h.flushTraces(ctx, a.b); err != nil {
			s.dropAppend(id, a)
			return err
		}
	}
	return nil
}

// beginAppend opens the append transaction of chain id, whose timer
// commits it after s.appendOpenFor().
func (s *Store) beginAppend(ctx context.Context, id int64, blocks []*chainquery.BlockData) (*appending, error) {
	// The transaction outlives the call's ctx (database/sql rolls a
	// transaction back when the context it began with ends), as it
	// outlives the call.
	b, err := s.BeginBlocks(context.WithoutCancel(ctx), id, blockHeights(blocks))
	if err != nil {
		return nil, err
	}
	a := &appending{b: b, h: newHistoryBuilder(id, true, s.hashChunk())}
	a.timer = time.AfterFunc(s.appendOpenFor(), func() {
		s.appends.mu.Lock()
		defer s.appends.mu.Unlock()
		if s.appends.open[id] != a {
			return // committed or dropped meanwhile
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.commitAppend(ctx, id, a); err != nil {
			if s.appends.lost == nil {
				s.appends.lost = map[int64]error{}
			}
			s.appends.lost[id] = err
		}
	})
	if s.appends.open == nil {
		s.appends.open = map[int64]*appending{}
	}
	s.appends.open[id] = a
	return a, nil
}

// appendTo makes room for blocks in a's transaction and writes those that
// go straight into history, gathering their lists in a.h; it returns the
// others, which go into rows.
func (s *Store) appendTo(ctx context.Context, id int64, a *appending, blocks []*chainquery.BlockData) ([]*chainquery.BlockData, error) {
	prior, err := s.clearHeights(ctx, a.b, id, nil, blockHeights(blocks))
	if err != nil {
		return nil, err
	}
	direct, rows, err := s.splitDirect(ctx, a.b, id, planVersions(blocks, prior))
	if err != nil {
		return nil, err
	}
	return rows, s.addHistory(ctx, a.b, a.h, id, direct)
}

// commitAppend writes the lists gathered in a, settles and commits its
// transaction; a is closed whatever the outcome.
func (s *Store) commitAppend(ctx context.Context, id int64, a *appending) error {
	defer s.dropAppend(id, a)
	if err := a.h.flush(ctx, a.b); err != nil {
		return err
	}
	if err := s.settle(ctx, a.b, id); err != nil {
		return err
	}
	return a.b.Commit(ctx)
}

// dropAppend rolls a's transaction back (nothing, after its commit) and
// forgets it.
func (s *Store) dropAppend(id int64, a *appending) {
	a.timer.Stop()
	a.b.Rollback()
	if s.appends.open[id] == a {
		delete(s.appends.open, id)
	}
}

// FlushBlocks commits the open append transaction of chain, if any
// (chainquery.BlockAppender).
func (s *Store) FlushBlocks(ctx context.Context, chain chainquery.Chain) error {
	id, err := storeChainID(chain)
	if err != nil {
		return err
	}
	return s.flushAppend(ctx, id)
}

// flushAppend commits the open append transaction of chain id, if any:
// every other write of the chain, and the reads an ingester resumes from,
// come after what was appended.
func (s *Store) flushAppend(ctx context.Context, id int64) error {
	s.appends.mu.Lock()
	defer s.appends.mu.Unlock()
	if err := s.appends.takeLost(id); err != nil {
		return err
	}
	if a := s.appends.open[id]; a != nil {
		return s.commitAppend(ctx, id, a)
	}
	return nil
}

// CloseAppends rolls back every open append transaction: the store is
// closing, and a pool waits for the connections they hold.
func (s *Store) CloseAppends() {
	s.appends.mu.Lock()
	defer s.appends.mu.Unlock()
	for id, a := range s.appends.open {
		s.dropAppend(id, a)
	}
}
