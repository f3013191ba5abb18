package storetest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/polyrows"
	"github.com/chainquery/chainquery/sqlstore"
)

// The Polygon-shaped blocks of CheckHistory: 200 of them from the 31st
// height of a bucket, so that history (below HistoryBoundary) holds a
// partial bucket and a whole one, and rows the 30 blocks above; or, when
// written straight into history, a whole bucket and the pieces of another
// below DirectBoundary, and rows above. They cross a bucket of log_postings
// (sqlstore.LogBucketBlocks).
var (
	historyConfig   = polychain.Config{Seed: 7, Start: 65_000_930, Blocks: 200, TxPerBlock: 40, Accounts: 3000, HotShare: 0.1}
	HistoryBoundary = uint64(65_001_100)
	DirectBoundary  = uint64(65_001_070)

	historyBlocksOnce sync.Once
	historyBlocks     []*chainquery.BlockData
	historyBlocksErr  error
)

// polygonHistoryBlocks returns the blocks of historyConfig, made by the
// ingester's decoders, fresh for each call (stores set their versions).
func polygonHistoryBlocks(tb testing.TB) []*chainquery.BlockData {
	tb.Helper()
	historyBlocksOnce.Do(func() {
		c, err := polychain.New(historyConfig)
		if err != nil {
			historyBlocksErr = err
			return
		}
		for n := c.First(); n <= c.Last(); n++ {
			d, err := polyrows.Decode(c, n, polychain.KindParity)
			if err != nil {
				historyBlocksErr = err
				return
			}
			historyBlocks = append(historyBlocks, d)
		}
	})
	if historyBlocksErr != nil {
		tb.Fatal(historyBlocksErr)
	}
	out := make([]*chainquery.BlockData, len(historyBlocks))
	for i, d := range historyBlocks {
		b := *d.Block
		out[i] = &chainquery.BlockData{Block: &b, Transactions: d.Transactions, Logs: d.Logs, Traces: d.Traces}
	}
	return out
}

// CheckHistory writes the same Polygon-shaped blocks into two stores of
// open, keeps them as rows in one and turns those below HistoryBoundary
// into history in the other, and requires every read to give the same
// answer from both: blocks with their transactions, receipt and log
// pages, transactions by hash with their traces, blocks' logs, and
// Filter Traces pages and counts without an address, for a hot and a cold
// address, for several addresses, for a sender and a
// recipient together, over ranges in history, in rows and across the
// boundary, at offsets up to the end.
func CheckHistory(t *testing.T, open func(testing.TB) chainquery.Store) {
	ctx := context.Background()
	rows, hist, direct := open(t), open(t), open(t)
	// direct hears of a node head that makes the blocks below
	// DirectBoundary final: written in batches of 20, they go straight into
	// history, a bucket's posting lists appended in pieces (runs).
	nh, ok := direct.(chainquery.NodeHeadWriter)
	if !ok {
		t.Fatalf("%T takes no node head", direct)
	}
	nh.SetNodeHead(chainquery.Polygon, DirectBoundary-1+sqlstore.DefaultRowBlocks)
	for _, s := range []chainquery.Store{rows, hist, direct} {
		blocks := polygonHistoryBlocks(t)
		for len(blocks) > 0 { // in the ingester's batch size
			n := min(20, len(blocks))
			if err := s.WriteBlocks(ctx, chainquery.Polygon, blocks[:n]); err != nil {
				t.Fatal(err)
			}
			blocks = blocks[n:]
		}
	}
	appended := open(t)
	appendHistory(t, appended)
	fellBack := open(t)
	writePreparedFallingBack(t, fellBack)
	f, ok := hist.(HistoryFreezer)
	if !ok {
		t.Fatalf("%T keeps no history", hist)
	}
	if err := f.FreezeHistory(ctx, chainquery.Polygon, HistoryBoundary); err != nil {
		t.Fatal(err)
	}
	for _, other := range []chainquery.Store{hist, direct, appended, fellBack} {
		checkSameAnswers(t, rows, other)
	}
	// A rewrite below the boundary thaws history from the start of its
	// bucket of trace_counts, inside a bucket of log_postings: the logs of
	// the history below keep their lists.
	blocks := polygonHistoryBlocks(t)
	from := HistoryBoundary - 50
	for _, s := range []chainquery.Store{rows, hist} {
		again := polygonHistoryBlocks(t)[from-blocks[0].Block.Number:]
		must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, from, again))
	}
	checkSameLogs(t, sameAs(t, rows, hist), blocks)
}

// appendHistory writes the blocks of CheckHistory into s as an ingester
// that backfills does, in groups of uneven sizes appended to the store's
// open transaction (chainquery.BlockAppender), below DirectBoundary
// straight into history, every other group prepared first
// (chainquery.BlockPreparer). Halfway it loses the open transaction, as a
// crash does, and resumes after the stored head: what was committed is a
// whole prefix of the blocks.
func appendHistory(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	a, ok := s.(chainquery.BlockAppender)
	if !ok {
		t.Fatalf("%T appends no blocks", s)
	}
	s.(chainquery.NodeHeadWriter).SetNodeHead(chainquery.Polygon, DirectBoundary-1+sqlstore.DefaultRowBlocks)
	blocks := polygonHistoryBlocks(t)
	first := blocks[0].Block.Number
	sizes := []int{7, 13, 1, 20, 29, 3, 40}
	crashed := false
	for i, k := 0, 0; i < len(blocks); k++ {
		n := min(sizes[k%len(sizes)], len(blocks)-i)
		if p, ok := s.(chainquery.BlockPreparer); ok && k%2 == 0 {
			p.PrepareBlocks(chainquery.Polygon, blocks[i:i+n]) // as the ingester's fetch does, every other group
		}
		must(t, a.AppendBlocks(ctx, chainquery.Polygon, blocks[i:i+n]))
		i += n
		if crashed || i < 120 {
			continue
		}
		crashed = true
		s.(interface{ CloseAppends() }).CloseAppends()
		head, err := s.HeadBlock(ctx, chainquery.Polygon)
		if err != nil {
			t.Fatal(err)
		}
		// The open transaction began at a bucket's start, and nothing
		// ends a bucket since; only appendOpenFor, on a slow machine,
		// may have committed it.
		if head+1 > first+uint64(i) {
			t.Fatalf("block %d stored after a crash, of %d appended", head, first+uint64(i)-1)
		}
		i = int(head + 1 - first)
		blocks = polygonHistoryBlocks(t)
	}
	must(t, a.FlushBlocks(ctx, chainquery.Polygon))
}

// writePreparedFallingBack writes the blocks of CheckHistory into s in
// the ingester's batch size, each batch prepared first
// (chainquery.BlockPreparer) while the node's head makes every block final,
// then written after the head fell back to where DirectBoundary divides
// them: those above it were prepared for history (and compacted) but go
// into rows.
func writePreparedFallingBack(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	p, ok := s.(chainquery.BlockPreparer)
	if !ok {
		t.Fatalf("%T prepares no blocks", s)
	}
	nh := s.(chainquery.NodeHeadWriter)
	blocks := polygonHistoryBlocks(t)
	last := blocks[len(blocks)-1].Block.Number
	for len(blocks) > 0 {
		n := min(20, len(blocks))
		nh.SetNodeHead(chainquery.Polygon, last+sqlstore.DefaultRowBlocks)
		p.PrepareBlocks(chainquery.Polygon, blocks[:n])
		if blocks[0].Prepared == nil {
			t.Fatalf("block %d not prepared", blocks[0].Block.Number)
		}
		nh.SetNodeHead(chainquery.Polygon, DirectBoundary-1+sqlstore.DefaultRowBlocks)
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, blocks[:n]))
		blocks = blocks[n:]
	}
}

// checkSameAnswers requires every read of CheckHistory to give the same
// answer from got as from want.
func checkSameAnswers(t *testing.T, want, got chainquery.Store) {
	ctx := context.Background()
	same := sameAs(t, want, got)

	blocks := polygonHistoryBlocks(t)
	first, last := blocks[0].Block.Number, blocks[len(blocks)-1].Block.Number
	for i, d := range blocks {
		n := d.Block.Number
		same(fmt.Sprintf("block %d", n), func(s chainquery.Store) (any, error) { return s.FindBlock(ctx, chainquery.Polygon, n, true) })
		if i%10 != 0 {
			continue
		}
		for _, pg := range []chainquery.Page{{Limit: 5}, {Offset: 3, Limit: 7}, {Offset: len(d.Transactions) - 2, Limit: 10}, {Offset: len(d.Transactions) + 1, Limit: 5}} {
			same(fmt.Sprintf("receipts of block %d, %+v", n, pg), func(s chainquery.Store) (any, error) {
				r, c, err := s.FindBlockReceipts(ctx, chainquery.ReceiptFilter{Chain: chainquery.Polygon, BlockNumber: n, Page: pg})
				return []any{r, c}, err
			})
		}
		for _, pg := range []chainquery.Page{{Limit: 5}, {Offset: 7, Limit: 50}, {Offset: 1000, Limit: 5}} {
			same(fmt.Sprintf("logs of block %d, %+v", n, pg), func(s chainquery.Store) (any, error) {
				l, c, err := s.FindBlockLogs(ctx, chainquery.BlockLogFilter{Chain: chainquery.Polygon, BlockNumber: n, Page: pg})
				return []any{l, c}, err
			})
		}
		for j, tx := range d.Transactions {
			if j%7 != 0 {
				continue
			}
			for _, block := range []*uint64{nil, &n} {
				f := chainquery.TransactionFilter{Chain: chainquery.Polygon, TransactionHash: tx.Hash, BlockNumber: block}
				same(fmt.Sprintf("transaction %s", tx.Hash.Hex()), func(s chainquery.Store) (any, error) { return s.FindTransaction(ctx, f) })
				for _, pg := range []chainquery.Page{{Limit: 3}, {Offset: 2, Limit: 50}} {
					f.Page = pg
					same(fmt.Sprintf("traces of %s, %+v", tx.Hash.Hex(), pg), func(s chainquery.Store) (any, error) {
						tr, c, err := s.FindTransactionTraces(ctx, f)
						return []any{tr, c}, err
					})
				}
				for _, pg := range []chainquery.Page{{Limit: 3}, {Offset: 1, Limit: 50}} {
					same(fmt.Sprintf("logs of %s, %+v", tx.Hash.Hex(), pg), func(s chainquery.Store) (any, error) {
						l, c, err := s.FindTransactionLogs(ctx, chainquery.LogFilter{Chain: chainquery.Polygon, TransactionHash: tx.Hash, BlockNumber: block, Page: pg})
						return []any{l, c}, err
					})
				}
			}
		}
	}
	same("a transaction that is nowhere", func(s chainquery.Store) (any, error) {
		return s.FindTransaction(ctx, chainquery.TransactionFilter{Chain: chainquery.Polygon, TransactionHash: chainquery.Hash{1}})
	})
	same("logs of a transaction that is nowhere", func(s chainquery.Store) (any, error) {
		_, _, err := s.FindTransactionLogs(ctx, chainquery.LogFilter{Chain: chainquery.Polygon, TransactionHash: chainquery.Hash{1}, Page: chainquery.Page{Limit: 5}})
		return nil, err
	})

	checkSameLogs(t, same, blocks)

	// Addresses by how often they receive and send calls.
	to, from := map[chainquery.Address]int{}, map[chainquery.Address]int{}
	for _, d := range blocks {
		for _, tr := range d.Traces {
			from[tr.From]++
			if tr.To != nil {
				to[*tr.To]++
			}
		}
	}
	toRank, fromRank := byCount(to), byCount(from)
	hot, cold := toRank[0], toRank[len(toRank)/2]
	sender := fromRank[1]
	filters := []struct {
		name     string
		from, to []chainquery.Address
	}{
		{"every trace", nil, nil},
		{"to the hot address", nil, []chainquery.Address{hot}},
		{"to a cold address", nil, []chainquery.Address{cold}},
		{"from a busy sender", []chainquery.Address{sender}, nil},
		{"to three addresses", nil, []chainquery.Address{hot, cold, toRank[5]}},
		{"from a sender to the hot address", []chainquery.Address{sender}, []chainquery.Address{hot}},
		{"from two senders to two addresses", []chainquery.Address{sender, fromRank[3]}, []chainquery.Address{hot, toRank[2]}},
	}
	ranges := [][2]uint64{
		{first, last},                          // across the boundary
		{first, HistoryBoundary - 1},           // history alone
		{first + 17, first + 83},               // inside history, partial buckets
		{HistoryBoundary - 40, last - 3},       // across, from a partial bucket
		{HistoryBoundary, last},                // rows alone
		{HistoryBoundary - 1, HistoryBoundary}, // two blocks, one of each
	}
	for _, fl := range filters {
		for _, r := range ranges {
			lo, hi := r[0], r[1]
			filter := chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi,
				FromAddresses: fl.from, ToAddresses: fl.to}
			filter.Page = chainquery.Page{Limit: 1}
			_, count, err := want.FindTraces(ctx, filter)
			if err != nil {
				t.Fatal(err)
			}
			for _, offset := range []int{0, 1, 49, count / 3, count / 2, count - 10, count - 1, count} {
				if offset < 0 {
					continue
				}
				filter.Page = chainquery.Page{Offset: offset, Limit: 50}
				same(fmt.Sprintf("traces %s, blocks %d to %d, offset %d of %d", fl.name, lo, hi, offset, count),
					func(s chainquery.Store) (any, error) {
						tr, c, err := s.FindTraces(ctx, filter)
						return []any{tr, c}, err
					})
			}
		}
	}
}

// brief renders an answer for a failure message, cut short.
func brief(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return s
}

// sameAs returns a check that a read gives the same answer, or the same
// error code, from got (history) as from want (rows).
func sameAs(t *testing.T, want, got chainquery.Store) func(string, func(chainquery.Store) (any, error)) {
	return func(what string, read func(s chainquery.Store) (any, error)) {
		t.Helper()
		w, werr := read(want)
		g, gerr := read(got)
		if chainquery.ErrorCode(werr) != chainquery.ErrorCode(gerr) || (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: error %v from history, %v from rows", what, gerr, werr)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: history answers\n%s\nrows answer\n%s", what, brief(g), brief(w))
		}
	}
}

// checkSameLogs requires Filter Logs to answer alike (same) over ranges
// in history, across the boundary and in rows, of at most 100 blocks and,
// for filters that name an address or a topic0, over all of blocks: every
// log, the busiest emitter, two emitters, a cold one, the commonest
// topic0, the busiest emitter's commonest topic0 (with a topic1 of it or
// not), at offsets from 0 to past the end.
func checkSameLogs(t *testing.T, same func(string, func(chainquery.Store) (any, error)), blocks []*chainquery.BlockData) {
	ctx := context.Background()
	first, last := blocks[0].Block.Number, blocks[len(blocks)-1].Block.Number
	emitted, topics0 := map[chainquery.Address]int{}, map[chainquery.Hash]int{}
	pairs := map[[2]any]int{}
	for _, d := range blocks {
		for _, l := range d.Logs {
			emitted[l.Address]++
			if len(l.Topics) > 0 {
				topics0[l.Topics[0]]++
				pairs[[2]any{l.Address, l.Topics[0]}]++
			}
		}
	}
	emitters := byCount(emitted)
	busiest, cold := emitters[0], emitters[len(emitters)/2]
	commonest := chainquery.Hash{}
	for h, n := range topics0 {
		if n > topics0[commonest] || n == topics0[commonest] && bytes.Compare(h[:], commonest[:]) < 0 {
			commonest = h
		}
	}
	// The busiest emitter's commonest event, and a topic1 it was emitted
	// with.
	var event, someTopic1 chainquery.Hash
	for k, n := range pairs {
		if k[0] != busiest {
			continue
		}
		h := k[1].(chainquery.Hash)
		if n > pairs[[2]any{busiest, event}] || n == pairs[[2]any{busiest, event}] && bytes.Compare(h[:], event[:]) < 0 {
			event = h
		}
	}
	for _, d := range blocks {
		for _, l := range d.Logs {
			if l.Address == busiest && len(l.Topics) > 1 && l.Topics[0] == event && someTopic1 == (chainquery.Hash{}) {
				someTopic1 = l.Topics[1]
			}
		}
	}
	type filter struct {
		f     chainquery.LogRangeFilter
		count int // of the whole of blocks
	}
	filters := []filter{
		{f: chainquery.LogRangeFilter{}},
		{f: chainquery.LogRangeFilter{Addresses: []chainquery.Address{busiest}}, count: emitted[busiest]},
		{f: chainquery.LogRangeFilter{Addresses: []chainquery.Address{cold, busiest}}, count: emitted[busiest] + emitted[cold]},
		{f: chainquery.LogRangeFilter{Addresses: []chainquery.Address{cold}}, count: emitted[cold]},
		{f: chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{{commonest}}}, count: topics0[commonest]},
		{f: chainquery.LogRangeFilter{Addresses: []chainquery.Address{busiest, cold}, Topics: [4][]chainquery.Hash{{event, commonest}}},
			count: pairs[[2]any{busiest, event}] + pairs[[2]any{busiest, commonest}] + pairs[[2]any{cold, event}] + pairs[[2]any{cold, commonest}]},
		{f: chainquery.LogRangeFilter{Addresses: []chainquery.Address{busiest}, Topics: [4][]chainquery.Hash{{event}, {someTopic1}}}, count: -1},
	}
	if pairs[[2]any{busiest, event}] < 50 {
		t.Fatalf("the busiest emitter's commonest event has %d logs; the blocks are not Polygon's shape", pairs[[2]any{busiest, event}])
	}
	for _, r := range [][2]uint64{{first, first + 99}, {HistoryBoundary - 50, HistoryBoundary + 20}, {HistoryBoundary, last}, {first, last}, {first + 5, last - 5}} {
		lo, hi := r[0], r[1]
		for _, x := range filters {
			lf := x.f
			if hi-lo >= chainquery.MaxLogRangeBlocks && !lf.Keyed() {
				continue
			}
			lf.Chain, lf.FromBlock, lf.ToBlock = chainquery.Polygon, &lo, &hi
			// Offsets in the first block, past it, across blocks, and past
			// the last: a range with no condition finds its page's blocks
			// by their counts.
			pages := []chainquery.Page{{Limit: 50}, {Offset: 37, Limit: 50}, {Offset: 100_000, Limit: 5}, {Offset: 401, Limit: 1000}, {Offset: 3999, Limit: 7}}
			if x.count > 0 {
				pages = append(pages, chainquery.Page{Offset: x.count / 3, Limit: 50}, chainquery.Page{Offset: x.count - 20, Limit: 50})
			}
			for _, pg := range pages {
				lf.Page = pg
				same(fmt.Sprintf("logs of blocks %d to %d, %d addresses, topics %v, %+v", lo, hi, len(lf.Addresses), lf.Topics, pg), func(s chainquery.Store) (any, error) {
					l, c, err := s.FindLogs(ctx, lf)
					return []any{l, c}, err
				})
			}
		}
	}
}

// LogIndexer is a store that indexes by address and topic the logs of
// history written before it did (sqlstore.Store.IndexLogHistory).
type LogIndexer interface {
	IndexLogHistory(ctx context.Context, chain chainquery.Chain, buckets int) (uint64, error)
}

// CheckLogIndexBackfill checks the indexing of logs in history that an
// earlier release wrote, which migration 0012 finds without posting lists:
// stores of open (each with a connection to its database) lose their
// log_postings rows, and logs_from goes to the boundary, as the migration
// leaves them. One store holds CheckHistory's blocks frozen below
// HistoryBoundary: Filter Logs must answer ranges of at most 100 blocks
// from the segments, refuse longer ones (EUNAVAILABLE), and, once
// IndexLogHistory has gone down to 0 a bucket at a time, answer every
// range as a store of rows does. The other is written straight into
// history in batches of 20 and loses its lists with the boundary inside a
// bucket; the writes after that, which add to that bucket's lists, index
// the rest themselves.
func CheckLogIndexBackfill(t *testing.T, open func(testing.TB) (chainquery.Store, sqlstore.Conn)) {
	ctx := context.Background()
	forget := func(conn sqlstore.Conn) {
		for _, q := range []string{`DELETE FROM log_postings`, `UPDATE history SET logs_from = below`,
			`UPDATE blocks SET log_count = NULL WHERE number < (SELECT below FROM history)`, `UPDATE history SET log_counts_from = below`} {
			_, err := conn.Exec(ctx, q)
			must(t, err)
		}
	}
	want, _ := open(t)
	must(t, want.WriteBlocks(ctx, chainquery.Polygon, polygonHistoryBlocks(t)))
	same := func(got chainquery.Store) func(string, func(chainquery.Store) (any, error)) {
		return sameAs(t, want, got)
	}
	blocks := polygonHistoryBlocks(t)
	addr := blocks[0].Logs[0].Address
	lo := blocks[0].Block.Number

	t.Run("Migrate", func(t *testing.T) {
		got, conn := open(t)
		must(t, got.WriteBlocks(ctx, chainquery.Polygon, polygonHistoryBlocks(t)))
		f, ok := got.(HistoryFreezer)
		ix, ok2 := got.(LogIndexer)
		if !ok || !ok2 {
			t.Fatalf("%T keeps no history, or does not index its logs", got)
		}
		must(t, f.FreezeHistory(ctx, chainquery.Polygon, HistoryBoundary))
		forget(conn)
		for _, r := range [][2]uint64{{HistoryBoundary - 100, HistoryBoundary - 1}, {HistoryBoundary - 30, HistoryBoundary + 20}} {
			lf := chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromBlock: &r[0], ToBlock: &r[1], Addresses: []chainquery.Address{addr}, Page: chainquery.Page{Limit: 20}}
			same(got)(fmt.Sprintf("logs of blocks %d to %d, not indexed", r[0], r[1]), func(s chainquery.Store) (any, error) {
				l, c, err := s.FindLogs(ctx, lf)
				return []any{l, c}, err
			})
			// Without a condition, not counted: matched log by log.
			lf.Addresses, lf.Page = nil, chainquery.Page{Offset: 401, Limit: 100}
			same(got)(fmt.Sprintf("logs of blocks %d to %d, not counted", r[0], r[1]), func(s chainquery.Store) (any, error) {
				l, c, err := s.FindLogs(ctx, lf)
				return []any{l, c}, err
			})
		}
		hi := HistoryBoundary + 20
		_, _, err := got.FindLogs(ctx, chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi, Addresses: []chainquery.Address{addr}, Page: chainquery.Page{Limit: 20}})
		wantCode(t, err, chainquery.EUNAVAILABLE)

		left, err := ix.IndexLogHistory(ctx, chainquery.Polygon, 0)
		must(t, err)
		if want := HistoryBoundary - lo; left != want {
			t.Fatalf("%d blocks of history left to index before the backfill, want %d", left, want)
		}
		for steps := 0; left > 0; steps++ {
			if steps > 3 {
				t.Fatalf("%d blocks still left to index after %d steps", left, steps)
			}
			// A bucket, then more than are left.
			next, err := ix.IndexLogHistory(ctx, chainquery.Polygon, 1+3*min(steps, 1))
			must(t, err)
			if next >= left {
				t.Fatalf("a step of the backfill went from %d blocks left to %d", left, next)
			}
			left = next
		}
		// Every step committed, the last one's too.
		var from int64
		if _, err := queryOne(ctx, conn, `SELECT logs_from FROM history`, &from); err != nil || from > int64(lo) {
			t.Fatalf("logs_from after the backfill: %d, %v; want at most %d", from, err, lo)
		}
		checkLogCounts(t, conn, blocks)
		checkSameLogs(t, same(got), blocks)
	})
	t.Run("Writes", func(t *testing.T) {
		got, conn := open(t)
		nh, ok := got.(chainquery.NodeHeadWriter)
		ix, ok2 := got.(LogIndexer)
		if !ok || !ok2 {
			t.Fatalf("%T takes no node head, or does not index its logs", got)
		}
		nh.SetNodeHead(chainquery.Polygon, DirectBoundary-1+sqlstore.DefaultRowBlocks)
		for i := 0; i < len(blocks); i += 20 {
			if i == 100 { // the boundary is at lo + 100, inside a bucket
				forget(conn)
				left, err := ix.IndexLogHistory(ctx, chainquery.Polygon, 0)
				must(t, err)
				if left != 100 {
					t.Fatalf("%d blocks of history left to index, want 100", left)
				}
			}
			must(t, got.WriteBlocks(ctx, chainquery.Polygon, polygonHistoryBlocks(t)[i:min(i+20, len(blocks))]))
		}
		left, err := ix.IndexLogHistory(ctx, chainquery.Polygon, 0)
		must(t, err)
		if left != 0 {
			t.Fatalf("%d blocks of history left to index after the writes, want 0", left)
		}
		checkLogCounts(t, conn, blocks)
		checkSameLogs(t, same(got), blocks)
	})
}

// byCount returns the addresses of m, the most counted first (ties in
// byte order).
func byCount(m map[chainquery.Address]int) []chainquery.Address {
	out := make([]chainquery.Address, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b chainquery.Address) int { return cmp.Or(m[b]-m[a], slices.Compare(a[:], b[:])) })
	return out
}

// checkLogCounts checks that every block of blocks has its number of logs
// as its log_count, and that log_counts_from is at most the first: Filter
// Logs without a condition counts by them (sqlstore/log_count.go).
func checkLogCounts(t *testing.T, conn sqlstore.Conn, blocks []*chainquery.BlockData) {
	t.Helper()
	ctx := context.Background()
	want := map[int64]int64{}
	for _, d := range blocks {
		want[int64(d.Block.Number)] = int64(len(d.Logs))
	}
	var n int64
	var c *int64
	got := map[int64]int64{}
	err := conn.Query(ctx, `SELECT number, log_count FROM blocks WHERE chain = 137`, nil, []any{&n, &c}, func() error {
		if c == nil {
			return fmt.Errorf("block %d has no log_count", n)
		}
		got[n] = *c
		return nil
	})
	must(t, err)
	if !maps.Equal(got, want) {
		t.Fatalf("log_count of %d blocks differs from their logs (%d blocks)", len(got), len(want))
	}
	var from int64
	if _, err := queryOne(ctx, conn, `SELECT log_counts_from FROM history`, &from); err != nil || from > int64(blocks[0].Block.Number) {
		t.Fatalf("log_counts_from: %d, %v; want at most %d", from, err, blocks[0].Block.Number)
	}
}
