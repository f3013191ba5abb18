package sqlstore

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// postingKey names the posting list of an address in a direction.
type postingKey struct {
	dir  int
	addr chainquery.Address
}

// historyBuilder makes the history rows of one bucket's blocks, given in
// number order: each block's segments and hash prefixes as it comes, the
// bucket's posting lists at the end.
type historyBuilder struct {
	chain, bucket int64
	part          int64 // the first height of the piece of the bucket built
	lists         map[postingKey][]history.Posting
}

func newHistoryBuilder(chain, bucket, part int64) *historyBuilder {
	return &historyBuilder{chain: chain, bucket: bucket, part: part, lists: map[postingKey][]history.Posting{}}
}

// add appends the segments of block d to segs and its transactions' hash
// prefixes to hashes (tables of HistoryTables), and its traces to the
// bucket's posting lists. d's traces are in API order, as readTip gives
// them.
func (h *historyBuilder) add(segs, hashes *StoreTable, d *chainquery.BlockData) error {
	n := d.Block.Number
	txs, err := history.AppendTransactions(nil, d.Transactions)
	if err != nil {
		return fmt.Errorf("block %d: %w", n, err)
	}
	logs, err := history.AppendLogs(nil, d.Logs)
	if err != nil {
		return fmt.Errorf("block %d: %w", n, err)
	}
	traces, err := history.AppendTraces(nil, d.Traces)
	if err != nil {
		return fmt.Errorf("block %d: %w", n, err)
	}
	segs.Values = append(segs.Values, h.chain, int64(n), segmentTransactions, txs,
		h.chain, int64(n), segmentLogs, logs, h.chain, int64(n), segmentTraces, traces)
	prefixes := map[int64]bool{} // one row a block for hashes that share one
	for _, t := range d.Transactions {
		if p := HashPrefix(t.Hash); !prefixes[p] {
			prefixes[p] = true
			hashes.Values = append(hashes.Values, h.chain, p, int64(n))
		}
	}
	pos, lastTx := uint32(0), -1
	for _, t := range d.Traces {
		if t.TransactionIndex != lastTx {
			pos, lastTx = 0, t.TransactionIndex
		}
		p := history.Posting{Block: n, Tx: uint32(t.TransactionIndex), Pos: pos}
		h.lists[postingKey{CountFrom, t.From}] = append(h.lists[postingKey{CountFrom, t.From}], p)
		if t.To != nil {
			h.lists[postingKey{CountTo, *t.To}] = append(h.lists[postingKey{CountTo, *t.To}], p)
		}
		pos++
	}
	return nil
}

// postings returns the rows of history_postings of the blocks added, in
// the primary key's order, so that they go into the table in one pass.
func (h *historyBuilder) postings() (StoreTable, error) {
	t := HistoryTables()[1]
	keys := make([]postingKey, 0, len(h.lists))
	for k := range h.lists {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b postingKey) int {
		return cmp.Or(cmp.Compare(a.dir, b.dir), bytes.Compare(a.addr[:], b.addr[:]))
	})
	for _, k := range keys {
		list, err := history.AppendPostings(nil, h.lists[k])
		if err != nil {
			return t, err
		}
		t.Values = append(t.Values, h.chain, h.bucket, k.dir, bytes.Clone(k.addr[:]), h.part, list)
	}
	return t, nil
}

// canonical returns block d as a write takes it (BlockWriter: any trace
// order within a transaction, log counts ignored) in the form history
// encodes: transactions in index order with their log counts, logs in log
// index order, traces in API order. d itself is not changed.
func canonical(d *chainquery.BlockData) *chainquery.BlockData {
	out := *d
	logCounts := make(map[int]int, len(d.Transactions))
	for _, l := range d.Logs {
		logCounts[l.TransactionIndex]++
	}
	out.Transactions = make([]*chainquery.Transaction, len(d.Transactions))
	for i, t := range d.Transactions {
		c := *t
		c.LogCount = logCounts[t.Index]
		out.Transactions[i] = &c
	}
	slices.SortStableFunc(out.Transactions, func(a, b *chainquery.Transaction) int { return cmp.Compare(a.Index, b.Index) })
	byIndex := func(a, b *chainquery.Log) int { return cmp.Compare(a.LogIndex, b.LogIndex) }
	if !slices.IsSortedFunc(d.Logs, byIndex) {
		out.Logs = slices.Clone(d.Logs)
		slices.SortStableFunc(out.Logs, byIndex)
	}
	if !slices.IsSortedFunc(d.Traces, traceOrder) {
		out.Traces = slices.Clone(d.Traces)
		slices.SortStableFunc(out.Traces, traceOrder)
	}
	return &out
}
