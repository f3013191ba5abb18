package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// bucketKey names a row of trace_counts within a chain.
type bucketKey struct {
	dir    int
	addr   chainquery.Address
	bucket int64
}

// historyBuilder makes the history rows of blocks, given in number order:
// each block's segments and hash prefixes as it comes, and the posting
// lists (and, when counted, the counts) of their traces for trace_counts,
// which flush appends to the rows there.
type historyBuilder struct {
	chain   int64
	counted bool // the traces are not counted yet: flush adds their counts too
	lists   map[bucketKey][]history.Posting
	all     map[int64]int64 // every trace, by bucket (counted only)
	logs    logLists
}

func newHistoryBuilder(chain int64, counted bool) *historyBuilder {
	return &historyBuilder{chain: chain, counted: counted, lists: map[bucketKey][]history.Posting{}, all: map[int64]int64{}, logs: logLists{}}
}

// segments is a block's three history segments, encoded.
type segments struct {
	txs, logs, traces []byte
}

// encodeBlocks encodes the segments of blocks (canonical), on as many
// goroutines as there are CPUs: compressing them is most of a history
// write's work, and the writer is the ingester's one goroutine that the
// others wait for.
func encodeBlocks(blocks []*chainquery.BlockData) ([]segments, error) {
	out := make([]segments, len(blocks))
	errs := make([]error, len(blocks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(blocks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(blocks); i = int(next.Add(1) - 1) {
				out[i], errs[i] = encodeBlock(blocks[i])
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func encodeBlock(d *chainquery.BlockData) (segments, error) {
	var seg segments
	var err error
	n := d.Block.Number
	if seg.txs, err = history.AppendTransactions(nil, d.Transactions); err != nil {
		return seg, fmt.Errorf("block %d: %w", n, err)
	}
	if seg.logs, err = history.AppendLogs(nil, d.Logs); err != nil {
		return seg, fmt.Errorf("block %d: %w", n, err)
	}
	if seg.traces, err = history.AppendTraces(nil, d.Traces); err != nil {
		return seg, fmt.Errorf("block %d: %w", n, err)
	}
	return seg, nil
}

// add appends the segments seg of block d to segs and its transactions'
// hash prefixes to hashes (the tables of HistoryTables), and adds its
// traces to the lists. d is canonical: its traces are in API order.
func (h *historyBuilder) add(segs, hashes *StoreTable, d *chainquery.BlockData, seg segments) {
	n := int64(d.Block.Number)
	segs.Values = append(segs.Values, h.chain, n, segmentTransactions, seg.txs,
		h.chain, n, segmentLogs, seg.logs, h.chain, n, segmentTraces, seg.traces)
	prefixes := map[int64]bool{} // one row a block for hashes that share one
	for _, t := range d.Transactions {
		if p := HashPrefix(t.Hash); !prefixes[p] {
			prefixes[p] = true
			hashes.Values = append(hashes.Values, h.chain, p, n)
		}
	}
	h.addTraces(d)
	h.logs.add(d)
}

// addTraces adds the traces of block d, in API order, to the lists.
func (h *historyBuilder) addTraces(d *chainquery.BlockData) {
	n := d.Block.Number
	bucket := int64(n / TraceCountBlocks)
	if h.counted && len(d.Traces) > 0 {
		h.all[bucket] += int64(len(d.Traces))
	}
	pos, lastTx := uint32(0), -1
	for _, t := range d.Traces {
		if t.TransactionIndex != lastTx {
			pos, lastTx = 0, t.TransactionIndex
		}
		p := history.Posting{Block: n, Tx: uint32(t.TransactionIndex), Pos: pos}
		from := bucketKey{CountFrom, t.From, bucket}
		h.lists[from] = append(h.lists[from], p)
		if t.To != nil {
			to := bucketKey{CountTo, *t.To, bucket}
			h.lists[to] = append(h.lists[to], p)
		}
		pos++
	}
}

// rows returns the trace_counts changes of the traces added, in the
// primary key's order, without their lists.
func (h *historyBuilder) rows() []TraceCountRow {
	out := make([]TraceCountRow, 0, len(h.lists)+len(h.all))
	for k, ps := range h.lists {
		r := TraceCountRow{Dir: k.dir, Address: bytes.Clone(k.addr[:]), Bucket: k.bucket}
		if h.counted {
			r.N = int64(len(ps))
		}
		out = append(out, r)
	}
	for bucket, n := range h.all {
		out = append(out, TraceCountRow{Dir: CountAll, Address: []byte{}, Bucket: bucket, N: n})
	}
	slices.SortFunc(out, compareCountKeys)
	return out
}

// flush adds the lists (and counts) of the traces added to trace_counts,
// appending each list to the row's, and empties the builder.
func (h *historyBuilder) flush(ctx context.Context, b BlockBatch) error {
	rows := h.rows()
	for i := range rows {
		r := &rows[i]
		if r.Dir == CountAll {
			continue
		}
		k := bucketKey{dir: r.Dir, bucket: r.Bucket}
		copy(k.addr[:], r.Address)
		list, err := history.AppendPostings(nil, h.lists[k])
		if err != nil {
			return err
		}
		r.List = list
	}
	clear(h.lists)
	clear(h.all)
	if err := h.logs.flush(ctx, b); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	return b.AddTraceCounts(ctx, rows)
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
