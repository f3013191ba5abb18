package history_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chainquery/chainquery/history"
)

// TestHashPages: a run's entries cut into pages (HashPageEnd) never part a
// prefix's entries, even one of more than a page, and each page gives
// back its entries and, searched, the blocks of a prefix, including
// prefixes at the ends of the integers.
func TestHashPages(t *testing.T) {
	const base = 65_000_000
	var es []history.HashEntry
	for i := range 500 {
		p := int64(i/3) * 1_000_003
		switch {
		case i < 6:
			p = math.MinInt64 + int64(i/3)
		case i >= 490:
			p = math.MaxInt64
		case i >= 60 && i < 200:
			p = 42 // 140 entries of one prefix: more than a page
		}
		es = append(es, history.HashEntry{Prefix: p, Block: base + uint64(i)})
	}
	slices.SortFunc(es, history.HashEntry.Compare)
	var pages [][]byte
	var got []history.HashEntry
	for rest := es; len(rest) > 0; {
		n := history.HashPageEnd(rest)
		if n < len(rest) && rest[n].Prefix == rest[n-1].Prefix {
			t.Fatalf("a page ends inside prefix %d", rest[n].Prefix)
		}
		page := history.AppendHashPage(nil, base, rest[:n])
		pages = append(pages, page)
		var err error
		if got, err = history.AppendHashEntries(got, page, base); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if !slices.Equal(got, es) {
		t.Fatalf("the pages give back %d entries, not the %d written", len(got), len(es))
	}
	for _, p := range []int64{math.MinInt64, math.MinInt64 + 1, 42, 1_000_003 * 100, math.MaxInt64, 7} {
		var want, found []uint64
		for _, e := range es {
			if e.Prefix == p {
				want = append(want, e.Block)
			}
		}
		for _, page := range pages {
			var err error
			if found, err = history.AppendHashBlocks(found, page, base, p); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(found, want) {
			t.Errorf("prefix %d: blocks %v, want %v", p, found, want)
		}
	}
	if _, err := history.AppendHashBlocks(nil, make([]byte, 13), base, 0); err == nil {
		t.Error("a page of 13 bytes was read")
	}
}

// TestMergeHashEntries: parts sorted on their own come out sorted as a
// whole, whatever their number and sizes, empty ones included.
func TestMergeHashEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var scratch []history.HashEntry
	for round := range 200 {
		var es []history.HashEntry
		var ends []int
		for range 1 + r.IntN(6) {
			part := make([]history.HashEntry, r.IntN(40))
			for i := range part {
				part[i] = history.HashEntry{Prefix: r.Int64N(50) - 25, Block: uint64(r.IntN(4))}
			}
			slices.SortFunc(part, history.HashEntry.Compare)
			es = append(es, part...)
			ends = append(ends, len(es))
		}
		want := slices.SortedFunc(slices.Values(es), history.HashEntry.Compare)
		got := history.MergeHashEntries(slices.Clone(es), ends, &scratch)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: merged %v, want %v", round, got, want)
		}
	}
}
