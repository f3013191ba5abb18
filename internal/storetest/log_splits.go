package storetest

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// splitBlock is logBlock's block with countHot busier: below block 4,500 it
// emits six to ten logs a block more, so that a write of 20 blocks gives it
// parts of 64 entries and more, whose (address, topic0) pairs get lists of
// their own (sqlstore.splitEntries); above, its parts are filtered by their
// tags. The bucket of blocks 4,000 to 4,999 holds both.
func splitBlock(seed, n uint64) *chainquery.BlockData {
	d := logBlock(seed, n)
	r := rand.New(rand.NewPCG(seed^0x20, n))
	more := 0
	if n < 4500 {
		more = 6 + r.IntN(5)
	}
	for range more {
		if len(d.Transactions) == 0 {
			break
		}
		l := &chainquery.Log{BlockNumber: n, TransactionIndex: d.Transactions[r.IntN(len(d.Transactions))].Index,
			Address: countHot, Data: []byte{byte(n)}}
		if r.IntN(10) > 0 {
			l.Topics = []chainquery.Hash{logEvents[r.IntN(len(logEvents))]}
		}
		d.Logs = append(d.Logs, l)
	}
	// in transaction order, as a node gives them
	slices.SortStableFunc(d.Logs, func(a, b *chainquery.Log) int { return cmp.Compare(a.TransactionIndex, b.TransactionIndex) })
	for i, l := range d.Logs {
		l.LogIndex = i
	}
	return d
}

// CheckLogSplits writes splitBlock's blocks 2,950 to 5,100 into want, a
// store of rows, and straight into history in got, 20 at a time, and
// requires Filter Logs by an address and a topic0 (and by the address
// alone) to answer alike over ranges of split pieces, of pieces filtered
// by their tags, and of buckets that hold both. conn is got's database:
// the check makes sure that the write split the pieces it means to.
func CheckLogSplits(t *testing.T, want, got chainquery.Store, conn sqlstore.Conn) {
	ctx := context.Background()
	const first, last = 2950, 5100
	write := writeAlike(t, want, got, last, splitBlock)
	write(1, first, false)
	var buckets []int64
	var bucket int64
	must(t, conn.Query(ctx, `SELECT DISTINCT bucket FROM log_postings WHERE chain = $1 AND kind = 2 ORDER BY bucket`,
		[]any{int64(chainquery.Polygon.ID())}, []any{&bucket}, func() error {
			buckets = append(buckets, bucket)
			return nil
		}))
	if !slices.Equal(buckets, []int64{2, 3, 4}) {
		t.Fatalf("the pairs' lists are in buckets %v; want 2 to 4", buckets)
	}
	tagged := false
	must(t, conn.Query(ctx, `SELECT bucket FROM log_postings WHERE chain = $1 AND bucket = 4 AND kind = 0 AND key = $2 AND length(tags) > 0`,
		[]any{int64(chainquery.Polygon.ID()), countHot[:]}, []any{&bucket}, func() error {
			tagged = true
			return nil
		}))
	if !tagged {
		t.Fatal("the busy address's list of bucket 4 has no tagged piece beside its split ones")
	}
	same := sameAs(t, want, got)
	filters := []chainquery.LogRangeFilter{
		{Addresses: []chainquery.Address{countHot}, Topics: [4][]chainquery.Hash{{logEvents[0]}}},
		{Addresses: []chainquery.Address{countHot}, Topics: [4][]chainquery.Hash{{logEvents[1], logEvents[2]}}},
		{Addresses: []chainquery.Address{countHot, countAddrs[2]}, Topics: [4][]chainquery.Hash{{logEvents[2]}}},
		{Addresses: []chainquery.Address{countHot}},
	}
	for _, r := range [][2]uint64{{first, last}, {3000, 3999}, {3000, 4999}, {3500, 4500}, {4000, 4999}, {4490, 4510}} {
		lo, hi := r[0], r[1]
		for _, f := range filters {
			f.Chain, f.FromBlock, f.ToBlock, f.Page = chainquery.Polygon, &lo, &hi, chainquery.Page{Limit: 1}
			_, count, err := want.FindLogs(ctx, f)
			must(t, err)
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
