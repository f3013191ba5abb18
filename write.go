package chainquery

import "context"

// BlockData is one complete block as the EVM ingester writes it: the header,
// every transaction with its receipt, every log and every trace.
//
// Trace rows of one transaction may come in any order; stores order them by
// CompareTraceAddress. Stores compute Block.TraceCount and
// Transaction.LogCount from Traces and Logs; the values given are ignored.
type BlockData struct {
	Block        *Block
	Transactions []*Transaction
	Logs         []*Log
	Traces       []*Trace

	// Prepared is what a store made of the block ahead of its write
	// (BlockPreparer), opaque to everyone else; nil when nothing was.
	Prepared any
}

// Counts returns the numbers of the block's transactions, logs and
// traces: those of its slices, or, for a block that a store's
// PrepareBlocks compacted (BlockPreparer), those its Prepared kept.
func (d *BlockData) Counts() (txs, logs, traces int) {
	if c, ok := d.Prepared.(interface{ Counts() (int, int, int) }); ok {
		return c.Counts()
	}
	return len(d.Transactions), len(d.Logs), len(d.Traces)
}

// BlockWriter is what the EVM ingester writes. Every method runs in one store
// transaction: readers see all of a block's rows or none of them.
type BlockWriter interface {
	// WriteBlocks stores blocks (with all their rows) of chain. A block stored
	// at the same height is replaced with all its rows.
	//
	// Versions: a block written at a height where a block was ever stored
	// before (including one removed by ReplaceBlocks) gets that block's
	// version + 1; otherwise 0. Traces carry the version of their block.
	WriteBlocks(ctx context.Context, chain Chain, blocks []*BlockData) error

	// ReplaceBlocks removes every stored block of chain at or above from,
	// with all their rows, and writes blocks in their place: the rewind of a
	// reorg. Versions follow the rule of WriteBlocks.
	ReplaceBlocks(ctx context.Context, chain Chain, from uint64, blocks []*BlockData) error

	// BlockHash returns the hash of the stored block at number. It returns
	// ENOTFOUND if no block is stored there.
	BlockHash(ctx context.Context, chain Chain, number uint64) (Hash, error)

	// HeadBlock returns the highest stored block number of chain, read where
	// the writer writes (never from a replica, whose lag would make an
	// ingester resume too early and rewrite blocks). It returns ENOTFOUND if
	// nothing is stored.
	HeadBlock(ctx context.Context, chain Chain) (uint64, error)
}

// BlockAppender is a BlockWriter that takes a backfill in fewer, larger
// transactions: AppendBlocks adds blocks to the chain's open write
// transaction, which the store commits when it chooses (sqlstore: when a
// bucket of its history layout is whole, so that the bucket's posting lists
// are written once), and FlushBlocks commits it. The other methods commit
// it first. Blocks appended are durable only once committed; a crash
// leaves a whole prefix of the chain, as after WriteBlocks, from which an
// ingester resumes. On an error of either method, what was appended since
// the last commit is not stored: the caller resumes from HeadBlock.
type BlockAppender interface {
	BlockWriter
	AppendBlocks(ctx context.Context, chain Chain, blocks []*BlockData) error
	FlushBlocks(ctx context.Context, chain Chain) error
}

// BlockPreparer is a BlockWriter that does part of a write's work ahead of
// it: PrepareBlocks, called on the goroutine that fetched the blocks, sets
// their Prepared (sqlstore: the segments of the blocks that go straight
// into history). The writer, which takes one batch after another, then
// finds that work done; the fetching goroutines do it side by side.
//
// A block it prepares may be compacted: its Transactions, Logs and Traces
// set to nil (Counts still gives their numbers) and its Block replaced by
// a copy, so that the memory they were decoded into is free while the
// block waits for its write. Such a block is for that store's write only.
type BlockPreparer interface {
	PrepareBlocks(chain Chain, blocks []*BlockData)
}

// InProcessWriter is a BlockWriter that says whether its writes run on the
// writing process's CPU (an embedded database) rather than a server's: an
// ingester then leaves the writer a core of its own while it commits.
type InProcessWriter interface {
	WritesInProcess() bool
}

// NodeHeadWriter is a BlockWriter that wants to know how far the node an
// ingester follows reaches: a block that lies deeper below the node's head
// than any reorg the ingester handles can be written at once in the
// compact layout a store keeps for deep history (sqlstore), instead of as
// rows moved there later. It changes how blocks are stored, never what is
// stored: a reorg below that depth is still handled (a rewind of history).
type NodeHeadWriter interface {
	SetNodeHead(chain Chain, head uint64)
}
