package sqlstore

import (
	"context"
	"math"

	"github.com/chainquery/chainquery/history"
)

// A merge of runs of the hash index that spans more than 2^incrementalShift
// ranges of prefixes (rewriteRuns' chunks) is made a few ranges a write,
// in the writers' own transactions, rather than in one. Made at once, the
// largest merges rewrote the whole index each time the history grew by a
// quarter, while the writer, and once their window was full the fetchers
// and the node, waited: 4.5 million entries, about 60 MB, at 50,000
// Polygon-shaped blocks, which took that step from 45-48% of the raw fetch
// to 38% (docs/benchmarks.md, issue 30, session 22); after a year of
// Polygon, ~19 GB in one transaction.
//
// While it is under way, the run it makes answers for the prefixes up to
// its hi, and the runs it merges for those from their lo (hi + 1): a
// lookup reads, for each prefix, one of them and the other runs. Each
// write merges hashMergePace times its own entries, so that a merge ends
// long before the runs after it hold the quarter of its entries that
// calls for the next. Meanwhile the runs after it merge among themselves
// as usual, at once (mergeFrom stops at a run in a merge); a thaw
// (cutHashRuns) first ends the merge.
const (
	incrementalShift = 3
	hashMergePace    = 2 * HashRunRatio
)

// mergePace is the entries a write of n entries merges of a merge under
// way: at least one range.
func mergePace(n int) int64 { return max(hashMergePace*int64(n), 1) }

const (
	// qSetMergeRun: chain, id, level, low, high, entries, prefix_hi → the
	// run being made, up to prefix_hi.
	qSetMergeRun = `INSERT INTO tx_hash_runs (chain, id, level, low, high, entries, prefix_hi) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (chain, id) DO UPDATE SET high = excluded.high, entries = excluded.entries, prefix_hi = excluded.prefix_hi`
	// qSetMergedRun: chain, id, entries, prefix_lo → a run being merged,
	// left with the entries from prefix_lo.
	qSetMergedRun = `UPDATE tx_hash_runs SET entries = $3, prefix_lo = $4 WHERE chain = $1 AND id = $2`
	// qDropMergedPages: chain, run, lo → deletes the run's pages below the
	// one that holds lo: they hold prefixes below lo only.
	qDropMergedPages = `DELETE FROM tx_hash_pages WHERE chain = $1 AND run = $2
		AND prefix < coalesce((SELECT max(prefix) FROM tx_hash_pages WHERE chain = $1 AND run = $2 AND prefix <= $3), $3)`
)

// inMerge reports whether r is the run a merge under way makes or one it
// merges.
func (r hashRun) inMerge() bool { return r.lo != math.MinInt64 || r.hi != math.MaxInt64 }

// hashMerge is a merge of runs (sources, oldest first) into one (target).
type hashMerge struct {
	target  hashRun
	sources []hashRun
	begun   bool // target holds the prefixes up to target.hi
}

// newHashMerge returns the merge of runs into a run id of the level.
func newHashMerge(id, level int64, runs []hashRun) *hashMerge {
	t := hashRun{id: id, level: level, low: math.MaxInt64, high: -1, lo: math.MinInt64, hi: math.MinInt64}
	for _, r := range runs {
		t.low = min(t.low, r.low)
	}
	return &hashMerge{target: t, sources: runs}
}

// pendingMerge returns the merge under way among runs, or nil.
func pendingMerge(runs []hashRun) *hashMerge {
	var m hashMerge
	for _, r := range runs {
		switch {
		case r.hi != math.MaxInt64:
			m.target, m.begun = r, true
		case r.lo != math.MinInt64:
			m.sources = append(m.sources, r)
		}
	}
	if !m.begun {
		return nil
	}
	return &m
}

// step merges the next ranges of prefixes, until budget entries are merged
// or none is left; then the merged runs are dropped and the run made
// answers for all prefixes. The ranges are rewriteRuns' for the entries of
// all the runs, each from the prefix after the last merged.
func (m *hashMerge) step(ctx context.Context, c Conn, chain, chunk, budget int64) error {
	total := m.target.entries
	for _, r := range m.sources {
		total += r.entries
	}
	shift := chunkShift(total, chunk)
	w := &runWriter{c: c, chain: chain, run: m.target}
	moved := make([]int64, len(m.sources))
	var es, scratch []history.HashEntry
	var ends []int
	done := false
	for merged := int64(0); merged < budget && !done; {
		lo := int64(math.MinInt64)
		if m.begun {
			lo = m.target.hi + 1
		}
		_, hi := prefixRange((uint64(lo)^1<<63)>>(64-shift), shift)
		es, ends = es[:0], ends[:0]
		for j, r := range m.sources {
			n := len(es)
			var err error
			if es, err = readRunRange(ctx, c, chain, r, lo, hi, math.MaxInt64, es); err != nil {
				return err
			}
			moved[j] += int64(len(es) - n)
			ends = append(ends, len(es))
		}
		es = history.MergeHashEntries(es, ends, &scratch)
		if err := w.add(ctx, es); err != nil {
			return err
		}
		merged += int64(len(es))
		m.target.hi, m.begun = hi, true
		done = hi == math.MaxInt64
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	t := w.run
	t.hi = m.target.hi
	m.target = t
	if done {
		for _, r := range m.sources {
			if err := dropHashRun(ctx, c, chain, r.id); err != nil {
				return err
			}
		}
		if t.entries == 0 {
			return dropHashRun(ctx, c, chain, t.id)
		}
	}
	if _, err := c.Exec(ctx, qSetMergeRun, chain, t.id, t.level, t.low, t.high, t.entries, t.hi); err != nil || done {
		return err
	}
	for j := range m.sources {
		r := &m.sources[j]
		r.entries -= moved[j]
		r.lo = t.hi + 1
		if _, err := c.Exec(ctx, qSetMergedRun, chain, r.id, r.entries, r.lo); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, qDropMergedPages, chain, r.id, r.lo); err != nil {
			return err
		}
	}
	return nil
}
