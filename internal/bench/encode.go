package bench

import (
	"fmt"
	"runtime"
	"slices"
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

	// The lists a logs filter would walk (the next issue's): a log's
	// emitting address and its topic0, and, apart, its topics 1 to 3.
	// Total leaves them out.
	LogPostings, LogPostingKeys, TopicPostings, TopicPostingKeys int64
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
	// An entry is one posting of one list: kind says which (0 a trace's
	// sender, 1 its recipient, 2 a log's address, 3 its topic0, 4 its
	// topics 1 to 3), value the address or topic.
	type entry struct {
		kind  byte
		value [32]byte
		p     history.Posting
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
				addr := func(a chainquery.Address) (v [32]byte) { copy(v[:], a[:]); return v }
				for _, t := range d.Traces {
					p := history.Posting{Block: b.n, Tx: uint32(t.TransactionIndex), Pos: pos[t.TransactionIndex]}
					pos[t.TransactionIndex]++
					b.entries = append(b.entries, entry{0, addr(t.From), p})
					if t.To != nil {
						b.entries = append(b.entries, entry{1, addr(*t.To), p})
					}
				}
				for _, l := range d.Logs {
					p := history.Posting{Block: b.n, Tx: uint32(l.TransactionIndex), Pos: uint32(l.LogIndex)}
					b.entries = append(b.entries, entry{2, addr(l.Address), p})
					for j, topic := range l.Topics {
						kind := byte(4)
						if j == 0 {
							kind = 3
						}
						b.entries = append(b.entries, entry{kind, topic, p})
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
			kind   byte
			value  [32]byte
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
				k := key{e.kind, e.value, b.n / bucket}
				lists[k] = append(lists[k], e.p)
			}
		}
		for k, ps := range lists {
			if k.kind == 4 { // topics 1-3 repeat within a log (a transfer to oneself): one posting each
				ps = slices.CompactFunc(ps, func(a, b history.Posting) bool { return a == b })
			}
			enc, err := history.AppendPostings(nil, ps)
			if err != nil {
				return nil, err
			}
			// A key holds at least the address (or topic), the kind and
			// the span's number.
			keyLen := int64(20 + 1 + 4)
			if k.kind >= 3 {
				keyLen = 32 + 1 + 4
			}
			switch k.kind {
			case 0, 1:
				r.Postings += int64(len(enc))
				r.PostingKeys += keyLen
				r.PostingEntries += int64(len(ps))
				r.Lists++
			case 2, 3:
				r.LogPostings += int64(len(enc))
				r.LogPostingKeys += keyLen
			default:
				r.TopicPostings += int64(len(enc))
				r.TopicPostingKeys += keyLen
			}
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func encodedLen(b []byte, err error) (int, error) { return len(b), err }

// EncodeTable renders results as a Markdown table, in KB a block.
func EncodeTable(rs []*EncodeResult) string {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Bucket < rs[j].Bucket })
	var b strings.Builder
	b.WriteString("| blocks | posting list span | transactions | traces | logs | posting lists (entries; lists) | their keys | total KB a block | bytes a trace, all included | logs' address + topic0 lists, keys | topics 1-3 lists, keys |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		n := float64(r.Blocks) * 1000
		fmt.Fprintf(&b, "| %d | %d blocks | %.1f | %.1f | %.1f | %.1f (%d; %d) | %.1f | %.1f | %.1f | %.1f + %.1f | %.1f + %.1f |\n",
			r.Blocks, r.Bucket, float64(r.Transactions)/n, float64(r.Traces)/n, float64(r.Logs)/n,
			float64(r.Postings)/n, r.PostingEntries, r.Lists, float64(r.PostingKeys)/n, float64(r.Total())/n,
			float64(r.Traces+r.Postings+r.PostingKeys)/float64(r.TraceRows),
			float64(r.LogPostings)/n, float64(r.LogPostingKeys)/n, float64(r.TopicPostings)/n, float64(r.TopicPostingKeys)/n)
	}
	return b.String()
}
