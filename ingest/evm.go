// Package ingest runs the loops that fill a store from chain nodes: backfill
// from a start block, follow the head at a distance, rewind reorgs, and
// resume after a crash from what the store holds.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/chainquery/chainquery"
)

// EVMSource is what the EVM loop reads from a node. The evm package's Fetcher
// implements it over JSON-RPC.
type EVMSource interface {
	// Head returns the number of the node's latest block.
	Head(ctx context.Context) (uint64, error)

	// Blocks returns the complete blocks from..to (inclusive) in order, each
	// with its transactions, receipts, logs and traces. It retries what the
	// node does not have yet and fails only when retrying cannot help.
	Blocks(ctx context.Context, from, to uint64) ([]*chainquery.BlockData, error)

	// BlockHash returns the hash of the node's block at number.
	BlockHash(ctx context.Context, number uint64) (chainquery.Hash, error)
}

// EVMLoop ingests one EVM chain. The store is the cursor: blocks are written
// whole, in order, in transactions of a batch or more (a store that appends
// commits a backfill where its buckets end), so the highest stored block is
// where a restarted ingester resumes, with no gap and no duplicate.
type EVMLoop struct {
	Chain  chainquery.Chain
	Store  chainquery.BlockWriter
	Source EVMSource
	Logger *slog.Logger

	From          *uint64 // first block when the store holds none of the chain; nil: 0, or the head when following
	To            *uint64 // last block; nil: follow the head (with Follow) or stop at the current head
	RewindTo      *uint64 // remove the stored blocks above this one before starting (an operator's choice)
	Follow        bool
	Confirmations uint64        // stay this many blocks behind the node's head
	Concurrency   int           // batches fetched at once
	BatchBlocks   int           // blocks per fetch and per store transaction
	PollInterval  time.Duration // wait between head checks when caught up
	MaxReorgDepth int           // deeper reorgs (and another chain in the store) stop the loop: they need a person
	StoreRetry    time.Duration // first wait when the store is unavailable; doubles up to 30 s

	Progress *Progress // optional
	Observer Observer  // optional: hears of heads, writes and reorgs (metrics)

	first uint64 // where start said to begin: where to resume when nothing is stored
	tip   tip    // the last block this loop stored or appended
}

// tip is the last block a loop stored or appended, whose hash the next
// batch's parent is checked against without asking the store: a store that
// appends (chainquery.BlockAppender) would commit its open transaction to
// answer.
type tip struct {
	number uint64
	hash   chainquery.Hash
	ok     bool
}

// defaults fills zero settings.
func (e *EVMLoop) defaults() {
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if e.Observer == nil {
		e.Observer = nopObserver{}
	}
	if e.Concurrency < 1 {
		e.Concurrency = 4
	}
	if e.BatchBlocks < 1 {
		e.BatchBlocks = 10
	}
	if e.PollInterval <= 0 {
		e.PollInterval = 2 * time.Second
	}
	if e.MaxReorgDepth < 1 {
		e.MaxReorgDepth = 256
	}
	if e.StoreRetry <= 0 {
		e.StoreRetry = time.Second
	}
	if _, ok := e.Store.(*patientStore); !ok {
		e.Store = &patientStore{e.Store, patience{chain: e.Chain, logger: e.Logger, backoff: storeBackoff(e.StoreRetry)}}
	}
}

// Run ingests until To is reached, or until ctx ends when following. It
// returns nil when done or stopped by ctx, and an error naming the chain,
// block and cause when retrying cannot help. A panic inside the ingester is
// returned as a *PanicError.
func (e *EVMLoop) Run(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = e.fail(err)
		}
	}()
	defer Recover(&err)
	e.defaults()
	next, err := e.start(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	e.first = next
	waiting := ""
	for ctx.Err() == nil {
		head, err := e.Source.Head(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("eth_blockNumber: %w", err)
		}
		target := safeHead(head, e.Confirmations)
		if e.To != nil && (!e.Follow || *e.To < target) {
			target = min(*e.To, target)
		}
		if e.Progress != nil {
			e.Progress.SetHead(head, target)
		}
		e.Observer.NodeHead(head)
		if w, ok := e.Store.(chainquery.NodeHeadWriter); ok {
			w.SetNodeHead(e.Chain, head)
		}
		if next > target || head < e.Confirmations {
			if e.To != nil && next > *e.To {
				e.Logger.Info("ingestion done", "chain", e.Chain, "last", *e.To)
				return nil
			}
			if !e.Follow && e.To == nil {
				e.Logger.Info("caught up with the node", "chain", e.Chain, "last", int64(next)-1)
				return nil
			}
			// Caught up, or the node is behind what is stored: wait for it,
			// and say what for.
			why := e.waitReason(next, head)
			if why != waiting {
				level := slog.LevelInfo
				if e.Follow {
					level = slog.LevelDebug // at the head a follower waits for every block
				}
				e.Logger.Log(ctx, level, why, "chain", e.Chain, "next", next, "head", head, "confirmations", e.Confirmations)
				waiting = why
			}
			if e.Progress != nil {
				e.Progress.Wait(why)
			}
			if !chainquery.Sleep(ctx, e.PollInterval) {
				break
			}
			continue
		}
		waiting = ""
		if e.Progress != nil {
			e.Progress.Wait("")
		}
		if next, err = e.sync(ctx, next, target); err != nil {
			if ctx.Err() != nil {
				break
			}
			return err
		}
	}
	return nil
}

// waitReason says what the loop waits for when block next is not yet safe
// to ingest at node head head.
func (e *EVMLoop) waitReason(next, head uint64) string {
	if next > head {
		return fmt.Sprintf("waiting for the node to reach block %d (node head %d)", next, head)
	}
	return fmt.Sprintf("waiting for block %d to have %d confirmations (node head %d)", next, e.Confirmations, head)
}

func safeHead(head, confirmations uint64) uint64 {
	if head < confirmations {
		return 0
	}
	return head - confirmations
}

func (e *EVMLoop) fail(err error) error {
	return fmt.Errorf("ingest %s: %w", e.Chain, err)
}

// start returns the first block to ingest: the one after the stored head,
// else From, else the node's safe head when following, else 0. When the
// store holds the chain, it first applies RewindTo and checks that the
// stored head is the node's block at that height (verify).
func (e *EVMLoop) start(ctx context.Context) (uint64, error) {
	stored, err := e.Store.HeadBlock(ctx, e.Chain)
	if err == nil && e.RewindTo != nil && stored > *e.RewindTo {
		if err := e.Store.ReplaceBlocks(ctx, e.Chain, *e.RewindTo+1, nil); err != nil {
			return 0, fmt.Errorf("rewind to block %d: %w", *e.RewindTo, err)
		}
		e.Logger.Warn("removed the stored blocks above --rewind-to", "chain", e.Chain, "rewind_to", *e.RewindTo, "was", stored)
		stored, err = e.Store.HeadBlock(ctx, e.Chain)
	}
	switch {
	case err == nil:
		if err := e.verify(ctx, stored); err != nil {
			return 0, err
		}
		// A rewind by verify may have replaced the head: read it again.
		if stored, err = e.Store.HeadBlock(ctx, e.Chain); err != nil {
			return 0, err
		}
		next := stored + 1
		if e.From != nil && *e.From > next {
			return 0, fmt.Errorf("--from %d is past the stored head %d: ingesting from there would leave a gap; start at %d or use another database", *e.From, stored, next)
		}
		e.Logger.Info("resuming after the stored head", "chain", e.Chain, "stored_head", stored, "next", next)
		e.Observer.StoredHead(stored)
		return next, nil
	case chainquery.ErrorCode(err) != chainquery.ENOTFOUND:
		return 0, err
	case e.From != nil:
		return *e.From, nil
	case e.Follow:
		head, err := e.Source.Head(ctx)
		if err != nil {
			return 0, fmt.Errorf("eth_blockNumber: %w", err)
		}
		return safeHead(head, e.Confirmations), nil
	}
	return 0, nil
}

// verify checks that the store holds the node's chain: the stored block at
// the stored head (or at the node's head, if the node is behind) must be the
// node's block there. Without it, a database filled from another chain with
// the same chain id, or a fork the node has left, would be resumed "after
// the stored head" and served as if it were the node's. A difference within
// MaxReorgDepth is a reorg that happened while we were stopped, and is
// rewound; a deeper one is a *ChainMismatchError.
func (e *EVMLoop) verify(ctx context.Context, stored uint64) error {
	head, err := e.Source.Head(ctx)
	if err != nil {
		return fmt.Errorf("eth_blockNumber: %w", err)
	}
	at := min(stored, head)
	mine, err := e.Store.BlockHash(ctx, e.Chain, at)
	if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
		// The node's head is below every stored block: it cannot be
		// compared yet. The loop waits for the node to catch up, and the
		// first batch's parent check compares then.
		e.Logger.Warn("the node's head is below the stored blocks; cannot check the stored chain yet", "chain", e.Chain, "node_head", head, "stored_head", stored)
		return nil
	} else if err != nil {
		return err
	}
	theirs, err := e.Source.BlockHash(ctx, at)
	if err != nil {
		return fmt.Errorf("eth_getBlockByNumber %d: %w", at, err)
	}
	if mine == theirs {
		return nil
	}
	e.Logger.Warn("the stored chain differs from the node's; looking for the common block", "chain", e.Chain,
		"block", at, "stored_hash", mine, "node_hash", theirs)
	return e.rewind(ctx, at)
}

// ChainMismatchError says the store and the node disagree deeper than a
// reorg goes: the database holds another chain (or a fork the node never
// had), and only a person can say which to keep.
type ChainMismatchError struct {
	Chain      chainquery.Chain
	Block      uint64 // the highest block compared
	StoredHash chainquery.Hash
	NodeHash   chainquery.Hash
	Depth      int // blocks compared below Block, all different
}

func (e *ChainMismatchError) Error() string {
	return fmt.Sprintf("the stored chain is not the node's: block %d is %s in the database and %s on the node, "+
		"and the %d blocks below it differ too (deeper than a reorg): the database holds another chain or fork. "+
		"Use a fresh database, or, if the node is right and the stored blocks below some block N are good, "+
		"rerun with --rewind-to N to remove the stored blocks above N",
		e.Block, e.StoredHash.Hex(), e.NodeHash.Hex(), e.Depth)
}

// errRefetch says a batch no longer links to what is stored or to itself:
// the node reorganized while we fetched.
var errRefetch = errors.New("refetch")

// ahead is the pipeline's room for fetched batches beyond the window:
// three windows when the store prepares blocks (what waits for the writer
// then is their segments), none otherwise.
func (e *EVMLoop) ahead() int {
	if _, ok := e.inner().(chainquery.BlockPreparer); ok {
		return 3 * e.Concurrency
	}
	return 0
}

// writeFetches is the pipeline's most fetches during a long write: all
// CPUs but one, which the writer keeps, when the store's commits run on
// this process's CPU (SQLite); no limit when they run on a server's
// (PostgreSQL: appends of a batch there wait on round trips past
// longWrite, and fewer fetches meanwhile only slowed it).
func (e *EVMLoop) writeFetches() int {
	if w, ok := e.inner().(chainquery.InProcessWriter); ok && w.WritesInProcess() {
		return max(1, runtime.GOMAXPROCS(0)-1)
	}
	return 0
}

// span is one batch of the EVM loop: the blocks from..to.
type span struct{ from, to uint64 }

// sync fetches next..target with up to Concurrency batches in flight and
// writes them in order, batches that have already arrived together. It
// returns the next block to ingest.
func (e *EVMLoop) sync(ctx context.Context, next, target uint64) (uint64, error) {
	start, size := next, uint64(e.BatchBlocks)
	spans := func(yield func(span) bool) {
		for from := start; from <= target; from += size {
			if !yield(span{from, min(from+size-1, target)}) {
				return
			}
		}
	}
	p := pipeline[span, *chainquery.BlockData]{
		concurrency: e.Concurrency,
		// Up to four times that while the node, not this machine's CPU,
		// keeps the writer waiting: a node that answers each call after
		// 100 ms or more (docs/benchmarks.md, issue 30, session 18).
		widest: min(4*e.Concurrency, 64),
		// Blocks that the store prepared keep ~0.15 MB each: three windows
		// of them, ~18 MB at the defaults. Others are kept whole.
		ahead:        e.ahead(),
		writeFetches: e.writeFetches(),
		spare:        machineSpare(),
		maxGroup:     e.maxGroup(),
		fetch: func(ctx context.Context, s span) ([]*chainquery.BlockData, error) {
			blocks, err := e.Source.Blocks(ctx, s.from, s.to)
			if p, ok := e.inner().(chainquery.BlockPreparer); ok && err == nil {
				p.PrepareBlocks(e.Chain, blocks) // here, side by side, not in the writer
			}
			return blocks, err
		},
		write: func(ctx context.Context, last span, blocks []*chainquery.BlockData) error {
			if err := e.write(ctx, next, blocks); err != nil {
				return err
			}
			next = last.to + 1
			return nil
		},
		fail: func(s span, err error) error { return fmt.Errorf("blocks %d-%d: %w", s.from, s.to, err) },
	}
	err := p.run(ctx, spans)
	// What was appended is committed whether the run ended or failed (it
	// is a whole prefix), and at a shutdown too: ctx has ended then.
	if ferr := e.flush(context.WithoutCancel(ctx)); ferr != nil && !errors.Is(err, errResume) {
		err = ferr
	}
	if errors.Is(err, errResume) {
		return e.resumeAt(ctx)
	}
	if errors.Is(err, errRefetch) {
		return next, nil // the outer loop fetches again from next
	}
	return next, err
}

// errResume says the store lost what was appended since its last commit
// (chainquery.BlockAppender) and can be reached again: the loop resumes
// after what it holds.
var errResume = errors.New("resume after the stored head")

// flush commits what was appended, if the store appends. A store that
// cannot be reached lost it: errResume.
func (e *EVMLoop) flush(ctx context.Context) error {
	a, ok := e.appender()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return e.lost(ctx, a.FlushBlocks(ctx, e.Chain))
}

// lost turns a failed append or flush into errResume once the store can be
// reached again (HeadBlock retries with patience), and returns any other
// error as it is.
func (e *EVMLoop) lost(ctx context.Context, err error) error {
	if err == nil || chainquery.ErrorCode(err) != chainquery.EUNAVAILABLE {
		return err
	}
	e.tip.ok = false
	e.Logger.Warn("store unavailable: the blocks appended since its last commit are fetched again", "chain", e.Chain, "error", err)
	return errResume
}

// resumeAt returns the block after the stored head, or where the loop
// began when nothing is stored.
func (e *EVMLoop) resumeAt(ctx context.Context) (uint64, error) {
	stored, err := e.Store.HeadBlock(ctx, e.Chain)
	switch {
	case err == nil:
		return stored + 1, nil
	case chainquery.ErrorCode(err) == chainquery.ENOTFOUND:
		return e.first, nil
	}
	return 0, err
}

// appender returns the store as a chainquery.BlockAppender, if it is one.
func (e *EVMLoop) appender() (chainquery.BlockAppender, bool) {
	a, ok := e.inner().(chainquery.BlockAppender)
	return a, ok
}

// inner returns the store the loop was given, without its patience.
func (e *EVMLoop) inner() chainquery.BlockWriter {
	if p, ok := e.Store.(*patientStore); ok {
		return p.BlockWriter
	}
	return e.Store
}

// maxGroup is the most blocks written in one store call.
func (e *EVMLoop) maxGroup() int { return 10 * e.BatchBlocks }

// write stores one batch after checking that it links to the stored chain;
// on a mismatch it rewinds the reorg and asks for a refetch.
func (e *EVMLoop) write(ctx context.Context, next uint64, blocks []*chainquery.BlockData) error {
	if len(blocks) == 0 {
		return nil
	}
	if !linked(blocks) {
		e.Logger.Warn("batch does not link up (the node reorganized while we fetched); fetching again",
			"chain", e.Chain, "from", blocks[0].Block.Number)
		return errRefetch
	}
	if next > 0 {
		parent, err := e.tip.hash, error(nil)
		if !e.tip.ok || e.tip.number != next-1 {
			parent, err = e.Store.BlockHash(ctx, e.Chain, next-1)
		}
		switch {
		case err == nil && parent != blocks[0].Block.ParentHash:
			if err := e.rewind(ctx, next-1); err != nil {
				return err
			}
			return errRefetch
		case err != nil && chainquery.ErrorCode(err) != chainquery.ENOTFOUND:
			return err
		}
	}
	began := time.Now()
	if err := e.store(ctx, blocks); err != nil {
		e.tip.ok = false
		return fmt.Errorf("store blocks %d-%d: %w", blocks[0].Block.Number, blocks[len(blocks)-1].Block.Number, err)
	}
	last := blocks[len(blocks)-1].Block
	e.tip = tip{number: last.Number, hash: last.Hash, ok: true}
	e.Observer.Written(evmWrite(blocks, time.Since(began)))
	if e.Progress != nil {
		e.Progress.Add(blocks)
	}
	return nil
}

// store appends blocks where the store appends (a backfill's buckets then
// are written whole), and writes them otherwise.
func (e *EVMLoop) store(ctx context.Context, blocks []*chainquery.BlockData) error {
	if a, ok := e.appender(); ok {
		return e.lost(ctx, a.AppendBlocks(ctx, e.Chain, blocks))
	}
	return e.Store.WriteBlocks(ctx, e.Chain, blocks)
}

// rewind finds the highest block at or below top that the store and the node
// agree on, then replaces every stored block above it with the node's, in
// one store transaction.
func (e *EVMLoop) rewind(ctx context.Context, top uint64) error {
	e.tip.ok = false
	ancestor := top
	var topStored, topNode chainquery.Hash
	for depth := 0; ; depth++ {
		if depth > e.MaxReorgDepth {
			return &ChainMismatchError{Chain: e.Chain, Block: top, StoredHash: topStored, NodeHash: topNode, Depth: e.MaxReorgDepth}
		}
		stored, err := e.Store.BlockHash(ctx, e.Chain, ancestor)
		if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
			break // below what is stored: everything stored above is replaced
		} else if err != nil {
			return err
		}
		node, err := e.Source.BlockHash(ctx, ancestor)
		if err != nil {
			return fmt.Errorf("eth_getBlockByNumber %d: %w", ancestor, err)
		}
		if node == stored {
			break
		}
		if depth == 0 {
			topStored, topNode = stored, node
		}
		if ancestor == 0 {
			return &ChainMismatchError{Chain: e.Chain, Block: top, StoredHash: topStored, NodeHash: topNode, Depth: depth}
		}
		ancestor--
	}
	if ancestor == top {
		return nil // the node answered from two forks while switching: fetch again
	}
	blocks, err := e.Source.Blocks(ctx, ancestor+1, top)
	if err != nil {
		return fmt.Errorf("blocks %d-%d: %w", ancestor+1, top, err)
	}
	if !linked(blocks) {
		return nil // the node moved again: the next attempt sees where it went
	}
	if parent, err := e.Store.BlockHash(ctx, e.Chain, ancestor); err == nil && parent != blocks[0].Block.ParentHash {
		return nil
	}
	began := time.Now()
	if err := e.Store.ReplaceBlocks(ctx, e.Chain, ancestor+1, blocks); err != nil {
		return fmt.Errorf("replace blocks from %d: %w", ancestor+1, err)
	}
	e.Observer.Written(evmWrite(blocks, time.Since(began)))
	e.Observer.Reorg(top - ancestor)
	e.Logger.Warn("reorg: replaced stored blocks", "chain", e.Chain, "from", ancestor+1, "to", top, "depth", top-ancestor)
	if e.Progress != nil {
		e.Progress.Reorg(top - ancestor)
	}
	return nil
}

// linked reports whether each block's parent is the block before it.
func linked(blocks []*chainquery.BlockData) bool {
	for i := 1; i < len(blocks); i++ {
		if blocks[i].Block.ParentHash != blocks[i-1].Block.Hash || blocks[i].Block.Number != blocks[i-1].Block.Number+1 {
			return false
		}
	}
	return true
}
