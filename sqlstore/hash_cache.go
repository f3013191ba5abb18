package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/chainquery/chainquery/history"
)

// A lookup by hash seeks a page in each run of the hash index that may
// hold the prefix (hash_runs.go): three at 50,000 blocks, where the single
// B-tree before the runs took one seek, and Get Transaction and its
// receipt, logs and traces were 10-16% slower on SQLite than at the
// issue's start (docs/benchmarks.md, issue 30, session 27). All runs but
// the largest are small: each holds HashRunRatio times the entries of the
// next at least. Those of at most memRunEntries entries are read once,
// whole, and searched in memory; the largest are sought as before.
//
// A complete run never changes: a write makes a new run (a merge, a thaw
// too), with an id never taken before (reserveRunIDs), and deletes the
// old one. A merge in parts (hash_merge.go) takes the runs it merges
// from below, a range of prefixes a step: each loses its pages below its
// prefix_lo, and the entries of a prefix at or above it do not change, so
// a copy loaded at any time answers for every prefix the run still
// answers for, and those runs are searched in memory too (at 50,000
// blocks a merge under way took five seeks a lookup, the runs merged
// from, for half the prefixes: docs/benchmarks.md, issue 30, session 29).
// The run a merge makes grows from below (prefix_hi rises): it is sought
// as before.
const (
	memRunEntries = 1 << 20 // ~12 MB: the second run of 50,000 Polygon-shaped blocks is 895,000 entries
	// memRunBudget is the most entries the cache keeps: runs merged away
	// stay until the least recently used go to make room.
	memRunBudget = 2 * memRunEntries
)

type hashRunKey struct{ chain, id int64 }

// memRun is a run's entries, sorted, with blocks as distances
// from its lowest block as in its pages.
type memRun struct {
	ready    chan struct{} // closed when loaded or failed
	err      error
	prefixes []int64
	blocks   []uint32
	used     uint64 // the cache's clock at the last lookup
}

// hashRunCache keeps runs of at most memRunEntries entries, complete or
// merged from, by chain and id, up to memRunBudget entries in all.
type hashRunCache struct {
	mu      sync.Mutex
	runs    map[hashRunKey]*memRun
	entries int
	clock   uint64
}

// blocks appends to dst the blocks of run id of chain (its lowest block
// low, its number of entries n) whose entries have prefix, loading the
// run on c first if no reader has. Where another reader's load failed
// (its request ended, say), the run's page is sought on c as before.
func (hc *hashRunCache) blocks(ctx context.Context, c Conn, chain, id, low, n, prefix int64, dst []uint64) ([]uint64, error) {
	k := hashRunKey{chain, id}
	hc.mu.Lock()
	if hc.runs == nil {
		hc.runs = map[hashRunKey]*memRun{}
	}
	hc.clock++
	m, ok := hc.runs[k]
	if !ok {
		m = &memRun{ready: make(chan struct{})}
		hc.runs[k] = m
	}
	m.used = hc.clock
	hc.mu.Unlock()
	if !ok {
		hc.load(ctx, c, k, m, int(n))
	}
	select {
	case <-m.ready:
	case <-ctx.Done():
		return dst, ctx.Err()
	}
	if m.err != nil && ok {
		var page []byte
		if _, err := queryRow(ctx, c, qRunPage, []any{chain, id, prefix}, &page); err != nil {
			return dst, err
		}
		return history.AppendHashBlocks(dst, page, uint64(low), prefix)
	}
	if m.err != nil {
		return dst, m.err
	}
	i := sort.Search(len(m.prefixes), func(i int) bool { return m.prefixes[i] >= prefix })
	for ; i < len(m.prefixes) && m.prefixes[i] == prefix; i++ {
		dst = append(dst, uint64(low)+uint64(m.blocks[i]))
	}
	return dst, nil
}

// load reads run k's pages (n entries) into m, and makes room for it. A
// failed load is forgotten, for the next lookup to try again.
func (hc *hashRunCache) load(ctx context.Context, c Conn, k hashRunKey, m *memRun, n int) {
	defer close(m.ready)
	type page struct {
		first   int64
		entries []byte
	}
	var pages []page
	var first int64
	var entries []byte
	err := c.Query(ctx, qRunAllPages, []any{k.chain, k.id}, []any{&first, &entries}, func() error {
		pages = append(pages, page{first, bytes.Clone(entries)})
		return nil
	})
	slices.SortFunc(pages, func(a, b page) int { return cmp.Compare(a.first, b.first) })
	prefixes, blocks := make([]int64, 0, n), make([]uint32, 0, n)
	var es []history.HashEntry
	for _, p := range pages {
		if err != nil {
			break
		}
		es, err = history.AppendHashEntries(es[:0], p.entries, 0)
		for _, e := range es {
			prefixes, blocks = append(prefixes, e.Prefix), append(blocks, uint32(e.Block))
		}
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if err != nil {
		m.err = err
		delete(hc.runs, k)
		return
	}
	m.prefixes, m.blocks = prefixes, blocks
	hc.entries += len(prefixes)
	for hc.entries > memRunBudget {
		var oldest hashRunKey
		least := uint64(math.MaxUint64)
		for key, r := range hc.runs {
			if key != k && r.prefixes != nil && r.used < least {
				oldest, least = key, r.used
			}
		}
		if least == math.MaxUint64 {
			break
		}
		hc.entries -= len(hc.runs[oldest].prefixes)
		delete(hc.runs, oldest)
	}
}
