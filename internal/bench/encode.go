package bench

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/polyrows"
)

// EncodeResult is what the history encoding (package history) makes of a
// range of the Polygon-shaped chain: the bytes of each kind, summed.
type EncodeResult struct {
	Blocks                       int
	Bucket                       uint64 // blocks a posting list spans
	Transactions, Traces, Logs   int64  // segment bytes
	Postings, PostingKeys, Lists int64  // posting list bytes, their keys' bytes, and how many
	TraceRows, LogRows, TxRows   int64
	PostingEntries               int64
}

// Total is every byte the history would keep.
func (r *EncodeResult) Total() int64 {
	return r.Transactions + r.Traces + r.Logs + r.Postings + r.PostingKeys
}

// Encode makes the rows of every block of c with the ingester's decoders,
// encodes each block's segments, and the posting lists of the traces'
// senders and recipients sharded by each of buckets (blocks a list spans):
// the disk a history store of this design would take, before any store
// keeps it. One result a bucket size.
func Encode(c *polychain.Chain, buckets []uint64) ([]*EncodeResult, error) {
	type entry struct {
		addr chainquery.Address
		to   bool
		p    history.Posting
	}
	type block struct {
		n                   uint64
		err                 error
		txs, tr, logs       int // segment bytes
		txRows, trRows, lgs int
		entries             []entry // kept instead of the rows, which are large
	}
	first, last := c.First(), c.Last()
	blocks := make([]block, last-first+1)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				b := &blocks[i]
				b.n = first + uint64(i)
				d, err := polyrows.Decode(c, b.n, polychain.KindParity)
				if err != nil {
					b.err = err
					continue
				}
				b.txs, b.err = encodedLen(history.AppendTransactions(nil, d.Transactions))
				if b.err == nil {
					b.tr, b.err = encodedLen(history.AppendTraces(nil, d.Traces))
				}
				if b.err == nil {
					b.logs, b.err = encodedLen(history.AppendLogs(nil, d.Logs))
				}
				b.txRows, b.trRows, b.lgs = len(d.Transactions), len(d.Traces), len(d.Logs)
				pos := map[int]uint32{}
				for _, t := range d.Traces {
					p := history.Posting{Block: b.n, Tx: uint32(t.TransactionIndex), Pos: pos[t.TransactionIndex]}
					pos[t.TransactionIndex]++
					b.entries = append(b.entries, entry{t.From, false, p})
					if t.To != nil {
						b.entries = append(b.entries, entry{*t.To, true, p})
					}
				}
			}
		})
	}
	for i := range blocks {
		next <- i
	}
	close(next)
	wg.Wait()

	var rs []*EncodeResult
	for _, bucket := range buckets {
		r := &EncodeResult{Blocks: len(blocks), Bucket: bucket}
		type key struct {
			addr   chainquery.Address
			to     bool
			bucket uint64
		}
		lists := map[key][]history.Posting{}
		for i := range blocks {
			b := &blocks[i]
			if b.err != nil {
				return nil, fmt.Errorf("block %d: %w", b.n, b.err)
			}
			r.Transactions += int64(b.txs)
			r.Traces += int64(b.tr)
			r.Logs += int64(b.logs)
			r.TxRows += int64(b.txRows)
			r.TraceRows += int64(b.trRows)
			r.LogRows += int64(b.lgs)
			for _, e := range b.entries {
				k := key{e.addr, e.to, b.n / bucket}
				lists[k] = append(lists[k], e.p)
			}
		}
		for _, ps := range lists {
			enc, err := history.AppendPostings(nil, ps)
			if err != nil {
				return nil, err
			}
			r.Postings += int64(len(enc))
			r.PostingEntries += int64(len(ps))
		}
		r.Lists = int64(len(lists))
		r.PostingKeys = r.Lists * (20 + 1 + 4) // address, direction, bucket number: what a store's key holds at least
		rs = append(rs, r)
	}
	return rs, nil
}

func encodedLen(b []byte, err error) (int, error) { return len(b), err }

// EncodeTable renders results as a Markdown table, in KB a block.
func EncodeTable(rs []*EncodeResult) string {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Bucket < rs[j].Bucket })
	var b strings.Builder
	b.WriteString("| blocks | posting list span | transactions | traces | logs | posting lists (entries; lists) | their keys | total KB a block | bytes a trace, all included |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		n := float64(r.Blocks) * 1000
		fmt.Fprintf(&b, "| %d | %d blocks | %.1f | %.1f | %.1f | %.1f (%d; %d) | %.1f | %.1f | %.1f |\n",
			r.Blocks, r.Bucket, float64(r.Transactions)/n, float64(r.Traces)/n, float64(r.Logs)/n,
			float64(r.Postings)/n, r.PostingEntries, r.Lists, float64(r.PostingKeys)/n, float64(r.Total())/n,
			float64(r.Traces+r.Postings+r.PostingKeys)/float64(r.TraceRows))
	}
	return b.String()
}
