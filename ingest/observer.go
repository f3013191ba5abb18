package ingest

import (
	"time"

	"github.com/chainquery/chainquery"
)

// Observer hears what a loop does, so that it can be measured: cmd/chainquery
// gives the loops one that records Prometheus metrics (package metrics), and
// this package needs no metrics library. Its methods are called from the
// loop's goroutine and must return quickly.
type Observer interface {
	// NodeHead is the node's head (an EVM block number, a Solana slot),
	// each time the loop asks the node for it.
	NodeHead(head uint64)

	// StoredHead is the highest block (or slot) the store holds when the
	// loop starts, before it writes anything.
	StoredHead(head uint64)

	// Written is one committed store transaction of blocks.
	Written(w Write)

	// Reorg is a rewind of depth blocks.
	Reorg(depth uint64)
}

// Write is what one store transaction of a loop wrote.
type Write struct {
	Blocks   int       // blocks (Solana: slots holding a block) written
	Last     uint64    // the highest block (or slot) written: the stored head after it
	LastTime time.Time // that block's time

	// Rows per table: every block is a row of blocks, and a
	// transaction's receipt shares its row.
	Transactions, Logs, Traces, TokenBalances int

	Duration time.Duration // the store call, waits for an unavailable store included
}

// evmWrite describes the store transaction that wrote blocks in d.
func evmWrite(blocks []*chainquery.BlockData, d time.Duration) Write {
	w := Write{Blocks: len(blocks), Duration: d}
	for _, b := range blocks {
		txs, logs, traces := b.Counts()
		w.Transactions += txs
		w.Logs += logs
		w.Traces += traces
		if b.Block.Number >= w.Last {
			w.Last, w.LastTime = b.Block.Number, time.Unix(b.Block.Timestamp, 0).UTC()
		}
	}
	return w
}

// nopObserver is the Observer of a loop without one.
type nopObserver struct{}

func (nopObserver) NodeHead(uint64)   {}
func (nopObserver) StoredHead(uint64) {}
func (nopObserver) Written(Write)     {}
func (nopObserver) Reorg(uint64)      {}
