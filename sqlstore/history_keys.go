package sqlstore

import (
	"bytes"
	"fmt"
	"math/big"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// blockKeys is what a history write adds for a block besides its
// segments: its transactions' hash prefixes, each once, and the keys of
// its traces' and logs' list entries, in the order history encodes them
// (canonical).
type blockKeys struct {
	txs      int
	prefixes []int64
	traces   []traceRef
	logs     []logRef
}

// traceRef is what the trace lists take of a trace.
type traceRef struct {
	from, to chainquery.Address
	tx       int
	hasTo    bool
}

// logRef is what the log lists take of a log.
type logRef struct {
	addr     chainquery.Address
	topic0   chainquery.Hash
	hasTopic bool
}

// keysOf returns the keys of block d, which is canonical.
func keysOf(d *chainquery.BlockData) blockKeys {
	k := blockKeys{txs: len(d.Transactions), traces: make([]traceRef, len(d.Traces)), logs: logRefs(d.Logs)}
	seen := make(map[int64]bool, len(d.Transactions)) // one row a block for hashes that share a prefix
	for _, t := range d.Transactions {
		if p := HashPrefix(t.Hash); !seen[p] {
			seen[p] = true
			k.prefixes = append(k.prefixes, p)
		}
	}
	for i, t := range d.Traces {
		r := traceRef{from: t.From, tx: t.TransactionIndex}
		if t.To != nil {
			r.to, r.hasTo = *t.To, true
		}
		k.traces[i] = r
	}
	return k
}

// logRefs returns the list keys of logs, in their order.
func logRefs(logs []*chainquery.Log) []logRef {
	out := make([]logRef, len(logs))
	for i, l := range logs {
		out[i].addr = l.Address
		if len(l.Topics) > 0 {
			out[i].topic0, out[i].hasTopic = l.Topics[0], true
		}
	}
	return out
}

// prepared is a block's history made ahead of its write by PrepareBlocks:
// its segments and keys. The block itself keeps only its header then
// (compact): waiting for the writer, a Polygon-sized block held ~0.7 MB
// of decoded values against ~0.15 MB of these, and that memory, not the
// node, bounded the window of blocks an ingester keeps in flight
// (docs/benchmarks.md, issue 30, session 18).
type prepared struct {
	n    uint64 // the block's number
	seg  segments
	keys blockKeys
}

// Counts returns the numbers of the block's transactions, logs and traces
// (chainquery.BlockData.Counts).
func (p *prepared) Counts() (txs, logs, traces int) {
	return p.keys.txs, len(p.keys.logs), len(p.keys.traces)
}

// compact drops the values of block d, prepared, but for its header,
// which it copies out of the memory it was decoded into: nothing of that
// stays reachable from d.
func compact(d *chainquery.BlockData) {
	b := *d.Block
	b.LogsBloom, b.ExtraData, b.Transactions = bytes.Clone(b.LogsBloom), bytes.Clone(b.ExtraData), nil
	if b.BaseFeePerGas != nil {
		b.BaseFeePerGas = new(big.Int).Set(b.BaseFeePerGas)
	}
	d.Block = &b
	d.Transactions, d.Logs, d.Traces = nil, nil, nil
}

// expand gives the prepared blocks among blocks their values again, from
// their segments, and forgets what was prepared: a write that stores them
// as rows (the node's head fell below them since they were prepared, or
// a block repeats a height) needs them whole.
func expand(blocks []*chainquery.BlockData) error {
	for _, d := range blocks {
		p, ok := d.Prepared.(*prepared)
		if !ok {
			continue
		}
		n := d.Block.Number
		var err error
		if d.Transactions, err = history.DecodeTransactions(p.seg.txs, n); err == nil {
			if d.Logs, err = history.DecodeLogs(p.seg.logs, n); err == nil {
				d.Traces, err = history.DecodeTraces(p.seg.traces, n)
			}
		}
		if err != nil {
			return fmt.Errorf("block %d, prepared: %w", n, err)
		}
		d.Prepared = nil
	}
	return nil
}
