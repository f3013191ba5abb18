package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/chainquery/chainquery"
)

// testLogCounts holds Filter Logs' counts over every stored block, which
// for the rows come from log_counts (sqlstore/log_counts.go), to a count of
// the logs written, on a chain of 500 blocks of logBlock, and again after
// each kind of change the stores make to log_counts: a reorg to a shorter
// chain, heights written again (rows, and history thawed), blocks appended
// (and rows frozen into history), a reorg in the middle of a bucket.
func testLogCounts(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	const first = 1050
	last := uint64(1549)
	chain := map[uint64]*chainquery.BlockData{}
	write := func(seed uint64, lo, hi uint64) []*chainquery.BlockData {
		var out []*chainquery.BlockData
		for n := lo; n <= hi; n++ {
			d := logBlock(seed, n)
			chain[n] = d
			out = append(out, d)
		}
		last = max(last, hi)
		return out
	}
	check := func(t *testing.T) {
		t.Helper()
		hot := []chainquery.Address{countHot}
		for _, f := range []chainquery.LogRangeFilter{
			{Addresses: hot},
			{Addresses: []chainquery.Address{countAddrs[3], countAddrs[1], countAddrs[3]}},
			{Topics: [4][]chainquery.Hash{{logEvents[1]}}},
			{Addresses: hot, Topics: [4][]chainquery.Hash{{logEvents[0], logEvents[2]}}},
		} {
			want := 0
			for _, d := range chain {
				for _, l := range d.Logs {
					if (len(f.Addresses) == 0 || slices.Contains(f.Addresses, l.Address)) &&
						(len(f.Topics[0]) == 0 || len(l.Topics) > 0 && slices.Contains(f.Topics[0], l.Topics[0])) {
						want++
					}
				}
			}
			f.Chain, f.FromBlock, f.ToBlock, f.Page = chainquery.Polygon, ptr(uint64(first)), ptr(last), chainquery.Page{Limit: 1}
			_, got, err := s.FindLogs(ctx, f)
			must(t, err)
			if got != want {
				t.Errorf("%d addresses, topic0 %d: count %d, want %d", len(f.Addresses), len(f.Topics[0]), got, want)
			}
		}
	}
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, write(1, first, last)))
	check(t)
	t.Run("ReorgToShorterChain", func(t *testing.T) {
		for n := uint64(1290); n <= last; n++ {
			delete(chain, n)
		}
		last = 0
		must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, 1290, write(2, 1290, 1320)))
		check(t)
	})
	t.Run("HeightsWrittenAgain", func(t *testing.T) {
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, write(3, 1120, 1121)))
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, write(4, 1310, 1311)))
		check(t)
	})
	t.Run("Appended", func(t *testing.T) {
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, write(5, 1321, 2460)))
		check(t)
	})
	t.Run("ReorgInsideBucket", func(t *testing.T) {
		for n := uint64(2355); n <= last; n++ {
			delete(chain, n)
		}
		last = 0
		must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, 2355, write(6, 2355, 2370)))
		check(t)
	})
}
