package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// logBlock is countBlock's block with logs: each transaction emits up to
// three, from the count chain's addresses, with one of three events and a
// topic1 of two.
func logBlock(seed, n uint64) *chainquery.BlockData {
	d := countBlock(seed, n)
	r := rand.New(rand.NewPCG(seed^0x10, n))
	for _, t := range d.Transactions {
		for range r.IntN(4) {
			l := &chainquery.Log{BlockNumber: n, TransactionIndex: t.Index, LogIndex: len(d.Logs),
				Address: countAddrs[r.IntN(len(countAddrs))], Data: []byte{byte(n)}}
			if r.IntN(10) > 0 {
				l.Topics = []chainquery.Hash{logEvents[r.IntN(len(logEvents))], H(TagTopic, byte(r.IntN(2)))}
			}
			d.Logs = append(d.Logs, l)
		}
	}
	return d
}

// logEvents are the topic0s of logBlock's logs.
var logEvents = []chainquery.Hash{H(TagTopic, 0x70), H(TagTopic, 0x71), H(TagTopic, 0x72)}

// CheckLogBuckets writes logBlock's blocks 2,950 to 5,100, across buckets
// of log_postings (sqlstore.LogBucketBlocks), into want, a store of rows,
// and straight into history in got, 20 at a time (a bucket's lists
// appended to, piece by piece); rewrites blocks 4,350 up in both (a thaw
// inside a bucket); and requires Filter Logs to answer
// alike over ranges that hold whole buckets and parts of others, for
// addresses, topic0s, both, and a topic1, at offsets to the end: the
// counts of whole buckets come from their rows' n, those of the edges from
// their lists.
func CheckLogBuckets(t *testing.T, want, got chainquery.Store) {
	ctx := context.Background()
	const first, last, again = 2950, 5100, 4350
	write := writeAlike(t, want, got, last, logBlock)
	write(1, first, false)
	write(2, again, true)
	same := sameAs(t, want, got)
	filters := []chainquery.LogRangeFilter{
		{Addresses: []chainquery.Address{countHot}},
		{Addresses: []chainquery.Address{countAddrs[3], countAddrs[1]}},
		{Topics: [4][]chainquery.Hash{{logEvents[1]}}},
		{Addresses: []chainquery.Address{countHot}, Topics: [4][]chainquery.Hash{{logEvents[0], logEvents[2]}}},
		{Addresses: []chainquery.Address{countHot}, Topics: [4][]chainquery.Hash{nil, {H(TagTopic, 1)}}},
		{Topics: [4][]chainquery.Hash{{logEvents[2]}, {H(TagTopic, 0)}}},
	}
	for _, r := range [][2]uint64{{first, last}, {3000, 4999}, {2999, 5000}, {3500, 4500}, {4000, 4999}, {4001, 4998}, {4350, 4350}} {
		lo, hi := r[0], r[1]
		for _, f := range filters {
			f.Chain, f.FromBlock, f.ToBlock, f.Page = chainquery.Polygon, &lo, &hi, chainquery.Page{Limit: 1}
			_, count, err := want.FindLogs(ctx, f)
			must(t, err)
			if hi-lo > 1000 && count < 100 {
				t.Fatalf("blocks %d to %d: %d logs of %v; want more", lo, hi, count, f)
			}
			for _, off := range []int{0, 1, 63, 64, count / 3, count / 2, count - 7, count} {
				f.Page = chainquery.Page{Offset: max(0, off), Limit: 50}
				same(fmt.Sprintf("logs of blocks %d to %d, %v, %+v", lo, hi, f, f.Page), func(s chainquery.Store) (any, error) {
					l, c, err := s.FindLogs(ctx, f)
					return []any{l, c}, err
				})
			}
		}
	}
}

// writeAlike returns a writer of blocks from to last, made by block with a
// seed, into want and got 20 at a time; got, told of a node head far
// above last, writes them straight into history. With replace, the first
// write of each store is a ReplaceBlocks from from (a rewrite, which thaws
// got's history there).
func writeAlike(t *testing.T, want, got chainquery.Store, last uint64, block func(seed, n uint64) *chainquery.BlockData) func(seed, from uint64, replace bool) {
	t.Helper()
	nh, ok := got.(chainquery.NodeHeadWriter)
	if !ok {
		t.Fatalf("%T takes no node head", got)
	}
	nh.SetNodeHead(chainquery.Polygon, last+sqlstore.DefaultRowBlocks+10)
	ctx := context.Background()
	return func(seed, from uint64, replace bool) {
		for n := from; n <= last; n += 20 {
			var bs []*chainquery.BlockData
			for k := n; k < n+20 && k <= last; k++ {
				bs = append(bs, block(seed, k))
			}
			for _, s := range []chainquery.Store{want, got} {
				if replace && n == from {
					must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, from, bs))
				} else {
					must(t, s.WriteBlocks(ctx, chainquery.Polygon, bs))
				}
			}
		}
	}
}
