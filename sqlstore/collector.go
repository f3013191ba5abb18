package sqlstore

import (
	"slices"

	"github.com/chainquery/chainquery/history"
)

// postingLists gathers posting lists by key, every entry in one arena,
// tagged with its list: adding a posting is a map lookup and an append,
// not a slice per key growing on its own. A bucket of Polygon-shaped
// blocks has ~40,000 lists of a few entries each; their slices and the
// map's string keys were a large share of the ingester's allocations
// (docs/benchmarks.md, issue 30). When the lists are written, the keys are
// sorted once and the entries put in their lists' places in one pass (a
// counting sort; the collector of Erigon's ETL and Reth's history writers,
// in memory). Chaining each list's entries instead made their walk a
// string of cache misses.
type postingLists[K comparable] struct {
	index   map[K]int32
	keys    []K
	counts  []int32 // entries of each list
	entries []tagged

	// room of grouped, kept from write to write
	rank, at []int32
	grouped  []history.Posting
}

// tagged is an entry and the index of its list.
type tagged struct {
	p    history.Posting
	list int32
}

// add appends p to the list of k.
func (l *postingLists[K]) add(k K, p history.Posting) {
	i, ok := l.index[k]
	if !ok {
		if l.index == nil {
			l.index = map[K]int32{}
		}
		i = int32(len(l.keys))
		l.index[k] = i
		l.keys = append(l.keys, k)
		l.counts = append(l.counts, 0)
	}
	l.counts[i]++
	l.entries = append(l.entries, tagged{p: p, list: i})
}

// group returns the lists in the order of their keys by cmp: order[j] is
// the index of the j-th list (its key is keys[order[j]]), and
// ps[at[j]:at[j+1]] its entries in the order added. ps and at are l's room
// until the next group or reset.
func (l *postingLists[K]) group(cmp func(a, b *K) int) (order, at []int32, ps []history.Posting) {
	order = make([]int32, len(l.keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp(&l.keys[a], &l.keys[b]) })
	// where each list starts: at by rank, then rank turned into each
	// list's next free place
	l.rank = slices.Grow(l.rank[:0], len(order))[:len(order)]
	l.at = slices.Grow(l.at[:0], len(order)+1)[:len(order)+1]
	l.at[0] = 0
	for j, i := range order {
		l.at[j+1] = l.at[j] + l.counts[i]
		l.rank[i] = l.at[j]
	}
	l.grouped = slices.Grow(l.grouped[:0], len(l.entries))[:len(l.entries)]
	for _, e := range l.entries {
		l.grouped[l.rank[e.list]] = e.p
		l.rank[e.list]++
	}
	return order, l.at, l.grouped
}

// reset empties the lists, keeping their room.
func (l *postingLists[K]) reset() {
	clear(l.index)
	l.keys, l.counts, l.entries = l.keys[:0], l.counts[:0], l.entries[:0]
}
