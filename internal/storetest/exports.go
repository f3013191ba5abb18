package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// exportChunkRows is the chunk of CheckExports' exports: small enough for
// tens of checkpoints over its blocks, and prime, so that chunks end inside
// blocks (40 transactions each) rather than on their edges.
const exportChunkRows = 997

// CheckExports writes the Polygon-shaped blocks of CheckHistory into a store
// of open, those below HistoryBoundary kept as history and the rest as rows,
// and requires each export (chainquery.Export) to read exactly the rows of
// the filter endpoint's pages of 50, concatenated: for traces and logs,
// without a key and with hot and cold ones, over block ranges longer than
// the 100 blocks of one read and over datetime ranges. It then resumes the
// export from each of its checkpoints (some inside a block) and requires
// the next chunk to be the rows that followed the checkpoint.
func CheckExports(t *testing.T, open func(testing.TB) chainquery.Store) {
	ctx := context.Background()
	s := open(t)
	blocks := polygonHistoryBlocks(t)
	for rest := blocks; len(rest) > 0; {
		n := min(20, len(rest))
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, rest[:n]))
		rest = rest[n:]
	}
	f, ok := s.(HistoryFreezer)
	if !ok {
		t.Fatalf("%T keeps no history", s)
	}
	must(t, f.FreezeHistory(ctx, chainquery.Polygon, HistoryBoundary))

	first, last := blocks[0].Block, blocks[len(blocks)-1].Block
	lo, hi := first.Number, last.Number
	from, to := time.Unix(first.Timestamp, 0).UTC(), time.Unix(last.Timestamp, 0).UTC()
	senders, recipients, emitters, topics := map[chainquery.Address]int{}, map[chainquery.Address]int{}, map[chainquery.Address]int{}, map[chainquery.Hash]int{}
	for _, b := range blocks {
		for _, tr := range b.Traces {
			senders[tr.From]++
			if tr.To != nil {
				recipients[*tr.To]++
			}
		}
		for _, l := range b.Logs {
			emitters[l.Address]++
			if len(l.Topics) > 0 {
				topics[l.Topics[0]]++
			}
		}
	}
	hotTo, coldFrom := byCount(recipients)[0], byCount(senders)[len(senders)-1]
	hotEmitter := byCount(emitters)[0]
	var hotTopic chainquery.Hash
	for h, n := range topics {
		if n > topics[hotTopic] {
			hotTopic = h
		}
	}
	// Past the stored blocks on both sides: the export reads the stored ones.
	wide, wideTo := lo-1000, hi+1_000_000

	traces := []struct {
		name string
		f    chainquery.TraceFilter
	}{
		{"BlockRange", chainquery.TraceFilter{FromBlock: &lo, ToBlock: &hi}},
		{"WideBlockRange", chainquery.TraceFilter{FromBlock: &wide, ToBlock: &wideTo}},
		{"DatetimeRange", chainquery.TraceFilter{FromTime: &from, ToTime: &to}},
		{"HotRecipient", chainquery.TraceFilter{FromBlock: &lo, ToBlock: &hi, ToAddresses: []chainquery.Address{hotTo}}},
		{"ColdSender", chainquery.TraceFilter{FromTime: &from, ToTime: &to, FromAddresses: []chainquery.Address{coldFrom}}},
	}
	for _, c := range traces {
		t.Run("Traces/"+c.name, func(t *testing.T) {
			c.f.Chain = chainquery.Polygon
			want := traceFilterPages(t, s, c.f, lo, hi)
			checkExport(t, want, func(cursor string) (*chainquery.Export[*chainquery.Trace], error) {
				return chainquery.NewTraceExport(s, c.f, cursor)
			}, func(tr *chainquery.Trace) uint64 { return tr.BlockNumber })
		})
	}
	logs := []struct {
		name string
		f    chainquery.LogRangeFilter
	}{
		{"BlockRange", chainquery.LogRangeFilter{FromBlock: &lo, ToBlock: &hi}},
		{"WideBlockRange", chainquery.LogRangeFilter{FromBlock: &wide, ToBlock: &wideTo}},
		{"DatetimeRange", chainquery.LogRangeFilter{FromTime: &from, ToTime: &to}},
		{"HotAddress", chainquery.LogRangeFilter{FromBlock: &wide, ToBlock: &wideTo, Addresses: []chainquery.Address{hotEmitter}}},
		{"Topic0", chainquery.LogRangeFilter{FromTime: &from, ToTime: &to, Topics: [4][]chainquery.Hash{{hotTopic}}}},
	}
	for _, c := range logs {
		t.Run("Logs/"+c.name, func(t *testing.T) {
			c.f.Chain = chainquery.Polygon
			want := logFilterPages(t, s, c.f, lo, hi)
			checkExport(t, want, func(cursor string) (*chainquery.Export[*chainquery.Log], error) {
				return chainquery.NewLogExport(s, c.f, cursor)
			}, func(l *chainquery.Log) uint64 { return l.BlockNumber })
		})
	}
	t.Run("ErrCursor", func(t *testing.T) {
		f := chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi}
		e, err := chainquery.NewLogExport(s, f, "")
		must(t, err)
		if _, err := e.Next(ctx); err != nil {
			t.Fatal(err)
		}
		g := f
		g.Addresses = []chainquery.Address{hotEmitter}
		_, err = chainquery.NewLogExport(s, g, e.Cursor())
		wantCode(t, err, chainquery.EINVALID)
		_, err = chainquery.NewTraceExport(s, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi}, e.Cursor())
		wantCode(t, err, chainquery.EINVALID)
	})
}

// checkExport reads the whole export of open("") in chunks and requires the
// rows of want; then resumes it from each checkpoint and requires the chunk
// after it again.
func checkExport[T any](t *testing.T, want []T, open func(cursor string) (*chainquery.Export[T], error), blockOf func(T) uint64) {
	t.Helper()
	ctx := context.Background()
	e, err := open("")
	must(t, err)
	e.ChunkRows = exportChunkRows
	var got []T
	type checkpoint struct {
		cursor string
		at     int // rows before it
		next   int // rows of the chunk after it
	}
	var cps []checkpoint
	midBlock := false
	// Each chunk reads at most ExportChunkBlocks blocks or a chunk of rows:
	// the loop ends long before this bound on a store that follows them.
	for i := 0; !e.Done(); i++ {
		if i > len(want)+100 {
			t.Fatalf("the export did not end after %d chunks", i)
		}
		rows, err := e.Next(ctx)
		must(t, err)
		if len(cps) > 0 {
			cps[len(cps)-1].next = len(rows)
			if len(got) > 0 && len(rows) > 0 && blockOf(got[len(got)-1]) == blockOf(rows[0]) {
				midBlock = true
			}
		}
		got = append(got, rows...)
		if !e.Done() {
			cps = append(cps, checkpoint{cursor: e.Cursor(), at: len(got)})
		}
	}
	if len(want) == 0 {
		t.Fatal("the filter matches nothing: the check would prove nothing")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the export read %d rows, not the %d of the filter pages%s", len(got), len(want), firstDiff(got, want))
	}
	if len(want) > exportChunkRows && !midBlock {
		t.Errorf("no checkpoint fell inside a block: the check of resuming inside one proved nothing")
	}
	// Chunks smaller than a block, each from the cursor of the last: most
	// resume inside the block the last one ended in.
	var small []T
	cursor := ""
	for range 20 {
		e, err := open(cursor)
		must(t, err)
		e.ChunkRows = 7
		rows, err := e.Next(ctx)
		must(t, err)
		small = append(small, rows...)
		if e.Done() {
			break
		}
		cursor = e.Cursor()
	}
	if n := min(len(want), 20*7); !reflect.DeepEqual(small, want[:n]) {
		t.Fatalf("in chunks of 7 rows: %d rows, not the first %d%s", len(small), n, firstDiff(small, want[:n]))
	}
	for _, cp := range cps {
		e, err := open(cp.cursor)
		must(t, err)
		e.ChunkRows = exportChunkRows
		rows, err := e.Next(ctx)
		must(t, err)
		if !reflect.DeepEqual(rows, got[cp.at:cp.at+cp.next]) {
			t.Fatalf("resumed after row %d: %d rows, not the %d that followed the checkpoint%s", cp.at, len(rows), cp.next, firstDiff(rows, got[cp.at:cp.at+cp.next]))
		}
	}
}

// firstDiff describes where got and want first differ.
func firstDiff[T any](got, want []T) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("; row %d is %s, want %s", i, brief(got[i]), brief(want[i]))
		}
	}
	return ""
}

// allPages reads every page of a list, 50 at a time, as a client pages it.
func allPages[T any](t *testing.T, find func(chainquery.Page) ([]T, int, error)) []T {
	t.Helper()
	var out []T
	for p := (chainquery.Page{Limit: chainquery.MaxLimit}); ; p.Offset += chainquery.MaxLimit {
		page, count, err := find(p)
		must(t, err)
		out = append(out, page...)
		if p.Offset+p.Limit >= count {
			return out
		}
	}
}

// traceFilterPages reads f's traces as Filter Traces pages them: 50 at a
// time, over a datetime range as f gives it, and a block range 100 blocks
// a request from lo to hi (the stored blocks).
func traceFilterPages(t *testing.T, s chainquery.TraceService, f chainquery.TraceFilter, lo, hi uint64) []*chainquery.Trace {
	t.Helper()
	var out []*chainquery.Trace
	pages := func(f chainquery.TraceFilter) {
		must(t, f.Validate())
		out = append(out, allPages(t, func(p chainquery.Page) ([]*chainquery.Trace, int, error) {
			f.Page = p
			return s.FindTraces(context.Background(), f)
		})...)
	}
	if f.FromTime != nil {
		pages(f)
		return out
	}
	from, to := max(lo, *f.FromBlock), min(hi, *f.ToBlock)
	for b := from; b <= to; b += chainquery.MaxBlockRange {
		e := min(b+chainquery.MaxBlockRange-1, to)
		f.FromBlock, f.ToBlock = &b, &e
		pages(f)
	}
	return out
}

// logFilterPages reads f's logs as Filter Logs pages them: 50 at a time,
// over f's range when it is keyed, else 100 blocks a request from lo to hi
// (the stored blocks, and CheckExports' datetime range).
func logFilterPages(t *testing.T, s chainquery.LogRangeService, f chainquery.LogRangeFilter, lo, hi uint64) []*chainquery.Log {
	t.Helper()
	var out []*chainquery.Log
	pages := func(f chainquery.LogRangeFilter) {
		must(t, f.Validate())
		out = append(out, allPages(t, func(p chainquery.Page) ([]*chainquery.Log, int, error) {
			f.Page = p
			return s.FindLogs(context.Background(), f)
		})...)
	}
	if f.Keyed() {
		pages(f)
		return out
	}
	from, to := lo, hi // a datetime range: CheckExports' is that of lo to hi
	if f.FromBlock != nil {
		from, to = max(lo, *f.FromBlock), min(hi, *f.ToBlock)
	}
	f.FromTime, f.ToTime = nil, nil
	for b := from; b <= to; b += chainquery.MaxLogRangeBlocks {
		e := min(b+chainquery.MaxLogRangeBlocks-1, to)
		f.FromBlock, f.ToBlock = &b, &e
		pages(f)
	}
	return out
}
