package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// testTraceCounts holds Filter Traces' counts and offsets, which come from
// trace_counts over whole buckets of sqlstore.TraceCountBlocks heights, to
// a count of the traces written, on a chain of 500 blocks (partial buckets
// at both ends, empty blocks, traces without a recipient, one hot
// recipient), and again after each kind of change the stores make to
// trace_counts: a reorg to a shorter chain, heights written again, blocks
// appended, a reorg in the middle of a bucket.
func testTraceCounts(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	const first, last = 1050, 1549 // buckets 10 (partial) to 15 (partial)
	chain := map[uint64]*chainquery.BlockData{}
	write := func(seed uint64, lo, hi uint64) []*chainquery.BlockData {
		var out []*chainquery.BlockData
		for n := lo; n <= hi; n++ {
			d := countBlock(seed, n)
			chain[n] = d
			out = append(out, d)
		}
		return out
	}
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, write(1, first, last)))
	checkTraceCounts(t, s, chain, first, last)

	t.Run("ReorgToShorterChain", func(t *testing.T) {
		for n := uint64(1290); n <= last; n++ {
			delete(chain, n)
		}
		must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, 1290, write(2, 1290, 1320)))
		checkTraceCounts(t, s, chain, first, last)
	})
	t.Run("HeightsWrittenAgain", func(t *testing.T) {
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, write(3, 1120, 1121)))
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, write(4, 1199, 1200)))
		checkTraceCounts(t, s, chain, first, last)
	})
	t.Run("Appended", func(t *testing.T) {
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, write(5, 1321, 1460)))
		checkTraceCounts(t, s, chain, first, last)
	})
	t.Run("ReorgInsideBucket", func(t *testing.T) {
		for n := uint64(1355); n <= 1460; n++ {
			delete(chain, n)
		}
		must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, 1355, write(6, 1355, 1370)))
		checkTraceCounts(t, s, chain, first, last)
	})
}

// The addresses of the count chain: countHot is the recipient of about half
// of the traces.
var (
	countHot   = Addr(0x40)
	countAddrs = []chainquery.Address{countHot, Addr(0x41), Addr(0x42), Addr(0x43), Addr(0x44)}
)

// countBlock returns block n of the count chain drawn from seed: zero to
// three transactions of one to four traces each.
func countBlock(seed, n uint64) *chainquery.BlockData {
	r := rand.New(rand.NewPCG(seed, n))
	pick := func() chainquery.Address {
		if r.IntN(2) == 0 {
			return countHot
		}
		return countAddrs[r.IntN(len(countAddrs))]
	}
	txs := r.IntN(4)
	d := &chainquery.BlockData{Block: header(chainquery.Polygon, n, PolygonTime+int64(n)*2, txs)}
	d.Block.Hash = H(TagBlock, byte(seed*31+n))
	for i := range txs {
		from, to := pick(), pick()
		d.Transactions = append(d.Transactions, tx(n, i, H(TagTx, byte(seed*7+n*3+uint64(i))), from, &to))
		calls := 1 + r.IntN(4)
		for j := range calls {
			var addr []int
			subtraces := calls - 1
			if j > 0 {
				addr, subtraces = []int{j - 1}, 0
			}
			c := call(n, i, addr, chainquery.TraceCall, chainquery.CallTypeCall, pick(), nil, 100_000, 50_000, nil, subtraces)
			if r.IntN(8) > 0 {
				to := pick()
				c.To = &to
			} else {
				c.Type, c.CallType = chainquery.TraceCreate, chainquery.CallTypeCreate // a failed creation
			}
			d.Traces = append(d.Traces, c)
		}
	}
	return d
}

// checkTraceCounts compares counts and pages of Filter Traces with what the
// blocks of chain hold, for ranges that start and end inside and on the
// edges of buckets, every kind of address filter, and offsets from 0 to
// past the count.
func checkTraceCounts(t *testing.T, s chainquery.Store, chain map[uint64]*chainquery.BlockData, first, last uint64) {
	t.Helper()
	ctx := context.Background()
	ranges := [][2]uint64{{first, last}, {first + 7, last - 13}, {1100, 1299}, {1101, 1298}, {1100, 1199},
		{1150, 1160}, {1105, 1190}, {1140, 1265}, {1199, 1300}, {1000, 2000}, {1299, 1401}}
	hot, other := []chainquery.Address{countHot}, []chainquery.Address{Addr(0x42)}
	filters := []struct {
		name     string
		from, to []chainquery.Address
	}{
		{"all", nil, nil},
		{"to hot", nil, hot},
		{"to hot or other", nil, []chainquery.Address{countHot, Addr(0x42), countHot}},
		{"from other", other, nil},
		{"from two", []chainquery.Address{Addr(0x41), Addr(0x43)}, nil},
		{"from other to hot", other, hot}, // walks the senders
		{"from hot to other", hot, other}, // walks the recipients
		{"from hot and other to other", []chainquery.Address{countHot, Addr(0x42)}, other},
	}
	for _, rg := range ranges {
		for _, fl := range filters {
			checkTraceOffsets(t, s, chain, rg[0], rg[1], fl.name, fl.from, fl.to)
		}
	}
	// A datetime range becomes the same block range.
	from, to := time.Unix(PolygonTime+1101*2, 0), time.Unix(PolygonTime+1298*2, 0)
	want := matchingTraces(chain, 1101, 1298, nil, hot)
	got, count, err := s.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromTime: &from, ToTime: &to,
		ToAddresses: hot, Page: chainquery.Page{Limit: 7, Offset: len(want) / 2}})
	must(t, err)
	if g, w := traceKeys(got), traceKeys(want[len(want)/2:min(len(want)/2+7, len(want))]); count != len(want) || g != w {
		t.Fatalf("datetime range: count %d, want %d:\n got  %s\n want %s", count, len(want), g, w)
	}
}

// checkTraceOffsets compares the count and the pages of 7 of Filter Traces
// over blocks lo to hi with the address filter from, to (named name) with
// what the blocks of chain hold, at offsets from 0 to past the count.
func checkTraceOffsets(t *testing.T, s chainquery.Store, chain map[uint64]*chainquery.BlockData, lo, hi uint64, name string, from, to []chainquery.Address) {
	t.Helper()
	want := matchingTraces(chain, lo, hi, from, to)
	for _, offset := range []int{0, 3, len(want) / 3, len(want) / 2, len(want) - 4, len(want) - 1, len(want), len(want) + 5} {
		if offset < 0 {
			continue
		}
		f := chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: ptr(lo), ToBlock: ptr(hi),
			FromAddresses: from, ToAddresses: to, Page: chainquery.Page{Limit: 7, Offset: offset}}
		got, count, err := s.FindTraces(context.Background(), f)
		must(t, err)
		if count != len(want) {
			t.Fatalf("blocks %d-%d, %s: count %d, want %d", lo, hi, name, count, len(want))
		}
		end := min(offset+7, len(want))
		if g, w := traceKeys(got), traceKeys(want[min(offset, end):end]); g != w {
			t.Fatalf("blocks %d-%d, %s, offset %d:\n got  %s\n want %s", lo, hi, name, offset, g, w)
		}
	}
}

// matchingTraces returns the traces of chain's blocks lo to hi that match the
// address filter, in API order.
func matchingTraces(chain map[uint64]*chainquery.BlockData, lo, hi uint64, from, to []chainquery.Address) []*chainquery.Trace {
	var out []*chainquery.Trace
	for n := lo; n <= hi; n++ {
		d := chain[n]
		if d == nil {
			continue
		}
		for _, tr := range d.Traces {
			if len(from) > 0 && !slices.Contains(from, tr.From) {
				continue
			}
			if len(to) > 0 && (tr.To == nil || !slices.Contains(to, *tr.To)) {
				continue
			}
			out = append(out, tr)
		}
	}
	return out
}

// traceKeys lists traces as block:tx:trace_address.
func traceKeys(traces []*chainquery.Trace) string {
	out := ""
	for _, t := range traces {
		out += fmt.Sprintf("%d:%d:%s ", t.BlockNumber, t.TransactionIndex, chainquery.FormatTraceAddress(t.TraceAddress))
	}
	return out
}

// CheckTraceCountsBackfill holds the rows that a store's writes keep in
// trace_counts to those its migration computes from the traces of a
// database that predates it: migration is the text of that migration, and
// conn runs statements on the store s. Rows at zero, which rewinds leave,
// count as absent.
func CheckTraceCountsBackfill(t *testing.T, s chainquery.Store, conn sqlstore.Conn, migration string) {
	t.Helper()
	ctx := context.Background()
	chain := func(seed uint64, lo, hi uint64) []*chainquery.BlockData {
		var out []*chainquery.BlockData
		for n := lo; n <= hi; n++ {
			out = append(out, countBlock(seed, n))
		}
		return out
	}
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, chain(1, 1050, 1549)))
	must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, 1290, chain(2, 1290, 1320)))
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, chain(3, 1120, 1121)))
	_, err := conn.Exec(ctx, strings.ReplaceAll(migration, "trace_counts", "trace_counts_backfill"))
	must(t, err)
	var kept, backfilled, differ int
	_, err = queryOne(ctx, conn, `SELECT (SELECT count(*) FROM trace_counts WHERE n <> 0),
		(SELECT count(*) FROM trace_counts_backfill),
		(SELECT count(*) FROM (SELECT chain, dir, address, bucket, n FROM trace_counts WHERE n <> 0
			EXCEPT SELECT chain, dir, address, bucket, n FROM trace_counts_backfill) d)`, &kept, &backfilled, &differ)
	must(t, err)
	if kept == 0 || kept != backfilled || differ != 0 {
		t.Fatalf("trace_counts: %d rows kept by the writes, %d computed by the migration, %d differ", kept, backfilled, differ)
	}
}

// queryOne scans the one row of query into dest.
func queryOne(ctx context.Context, conn sqlstore.Conn, query string, dest ...any) (bool, error) {
	found := false
	err := conn.Query(ctx, query, nil, dest, func() error { found = true; return nil })
	return found, err
}
