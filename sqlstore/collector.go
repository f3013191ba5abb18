package sqlstore

import (
	"slices"

	"github.com/chainquery/chainquery/history"
)

// postingLists gathers posting lists by key, every entry in one arena: a
// key's entries are chained in the order added, so that adding a posting
// is a map lookup and an append, not a slice per key growing on its own.
// A bucket of Polygon-shaped blocks has ~40,000 lists of a few entries
// each; their slices and the map's string keys were a large share of the
// ingester's allocations (docs/benchmarks.md, issue 30). The keys are
// sorted once, when the lists are written (the collector of Erigon's ETL
// and Reth's history writers, in memory).
type postingLists[K comparable] struct {
	index   map[K]int32
	keys    []K
	lists   []listSpan
	entries []chained
}

// listSpan is a list's first and last entry in the arena, and its length.
type listSpan struct{ first, last, n int32 }

// chained is an entry of a list and the index of the list's next one.
type chained struct {
	p    history.Posting
	next int32
}

// add appends p to the list of k.
func (l *postingLists[K]) add(k K, p history.Posting) {
	e := int32(len(l.entries))
	l.entries = append(l.entries, chained{p: p, next: -1})
	i, ok := l.index[k]
	if !ok {
		if l.index == nil {
			l.index = map[K]int32{}
		}
		l.index[k] = int32(len(l.keys))
		l.keys = append(l.keys, k)
		l.lists = append(l.lists, listSpan{first: e, last: e, n: 1})
		return
	}
	c := &l.lists[i]
	l.entries[c.last].next = e
	c.last = e
	c.n++
}

// sorted returns the indexes of the lists in the order of their keys by
// cmp.
func (l *postingLists[K]) sorted(cmp func(a, b *K) int) []int32 {
	order := make([]int32, len(l.keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp(&l.keys[a], &l.keys[b]) })
	return order
}

// postings returns the entries of list i in the order added, in dst's
// room.
func (l *postingLists[K]) postings(dst []history.Posting, i int32) []history.Posting {
	dst = dst[:0]
	for e := l.lists[i].first; e >= 0; e = l.entries[e].next {
		dst = append(dst, l.entries[e].p)
	}
	return dst
}

// reset empties the lists, keeping their room.
func (l *postingLists[K]) reset() {
	clear(l.index)
	l.keys, l.lists, l.entries = l.keys[:0], l.lists[:0], l.entries[:0]
}
