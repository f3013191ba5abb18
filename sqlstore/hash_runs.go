package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/chainquery/chainquery/history"
)

// The transaction hash index of history is a few runs (migration 0019),
// each the sorted prefixes of a span of heights in pages of
// history.HashPageEntries: the prefixes of the blocks a write puts into
// history become a run when it commits (an ingester's append transaction:
// a few hundred blocks), which is then merged with the runs before it
// that hold fewer than HashRunRatio times its entries, and so on. Each run
// so holds HashRunRatio times the entries of the next at least, and a
// history of n writes has about log4(n) runs, two or three at 50,000
// blocks. A lookup costs a seek a run, the page it reads little beside it
// (BenchmarkFindTransactionHistory); tiered merges (four runs of one
// level into one of the next) wrote each prefix half as often, but left
// up to three runs a level, eight at 50,000 blocks, and Get Transaction a
// fifth slower. A ratio of 8 left a run fewer but wrote each prefix half
// again as often, which the 50,000-block grow paid for in its rate
// (docs/benchmarks.md, issue 30, session 21). The merges are made in the
// writer's transaction, but those of more than 2^incrementalShift ranges of
// prefixes (the largest rewrite the whole index each time the history has
// grown by a quarter) are made a few ranges a write (hash_merge.go), so
// that no write holds the writer for a rewrite of the whole index. The
// B-trees the runs replaced took
// each prefix at a random place twice: into recent_tx_hashes as it was
// written, and every 2,000 heights into history_tx_hashes, a rewrite of
// that whole index which grew with the history (session 20).
const HashRunRatio = 4

// legacyRunLevel is the level of the run the upgrade made of an older
// release's index: it is never merged again.
const legacyRunLevel = 1 << 20

// hashRun is a row of tx_hash_runs: a run's key in tx_hash_pages, its
// level (0 for a write's, else one above the highest of those merged into
// it), the lowest and highest block of its entries (its pages store the
// blocks' distances from low) and how many entries it has.
//
// A run in a merge under way answers for a range of prefixes only: the run
// being made for those up to hi, those merged into it for those from lo
// (hash_merge.go); any other run for all, from math.MinInt64 to
// math.MaxInt64.
type hashRun struct {
	id, level, low, high, entries int64
	lo, hi                        int64
}

// hashPages are the columns of tx_hash_pages: a page's run, its first
// prefix and its entries.
var hashPages = Table{Name: "tx_hash_pages", Columns: []string{"chain", "run", "prefix", "entries"}}

const (
	qHashRuns     = `SELECT id, level, low, high, entries, prefix_lo, prefix_hi FROM tx_hash_runs WHERE chain = $1 ORDER BY id`
	qAddHashRun   = `INSERT INTO tx_hash_runs (chain, id, level, low, high, entries) VALUES ($1, $2, $3, $4, $5, $6)`
	qDropHashRun  = `DELETE FROM tx_hash_runs WHERE chain = $1 AND id = $2`
	qDropPages    = `DELETE FROM tx_hash_pages WHERE chain = $1 AND run = $2`
	qNextRunID    = `SELECT id FROM tx_hash_next WHERE chain = $1`
	qSetNextRunID = `INSERT INTO tx_hash_next (chain, id) VALUES ($1, $2) ON CONFLICT (chain) DO UPDATE SET id = excluded.id`
	// qRunPages: chain, run, lo, hi → the entries of the run's pages that
	// may hold prefixes lo to hi: the one that holds lo, and those that
	// start after it up to hi.
	qRunPages = `SELECT entries FROM tx_hash_pages WHERE chain = $1 AND run = $2
		AND prefix >= coalesce((SELECT max(prefix) FROM tx_hash_pages WHERE chain = $1 AND run = $2 AND prefix <= $3), $3)
		AND prefix <= $4 ORDER BY prefix`
)

// qHistoryTxRuns: chain, prefix (HashPrefix), block (-1: any),
// memRunEntries, math.MaxInt64 → for each run (that holds block) that
// answers for the prefix (of a merge under way, the runs that do), its id,
// its low block, its entries, whether it is searched in memory (1: of at
// most memRunEntries entries, and complete or merged from, hash_cache.go),
// and if not the page that would hold the prefix, which historyTxBlocks
// searches. One statement, one snapshot: a merge (or a step of one) that
// commits meanwhile is wholly seen or not; the runs searched in memory are
// loaded, when they must be, in the same transaction.
const qHistoryTxRuns = `SELECT r.id, r.low, r.entries, CASE WHEN r.entries <= $4 AND r.prefix_hi = $5 THEN 1 ELSE 0 END,
	CASE WHEN r.entries > $4 OR r.prefix_hi <> $5 THEN (SELECT p.entries FROM tx_hash_pages p
	WHERE p.chain = $1 AND p.run = r.id AND p.prefix <= $2 ORDER BY p.prefix DESC LIMIT 1) END
	FROM tx_hash_runs r WHERE r.chain = $1 AND (r.low <= $3 AND r.high >= $3 OR $3 < 0) AND r.prefix_lo <= $2 AND r.prefix_hi >= $2`

// qRunPage: chain, run, prefix → the run's page that would hold the
// prefix; qRunAllPages: chain, run → its pages and their first prefixes,
// in no order (they are sorted by their prefixes in Go: a run's pages do
// not overlap, and PostgreSQL sorted them rather than read the key's
// order).
const (
	qRunPage     = `SELECT entries FROM tx_hash_pages WHERE chain = $1 AND run = $2 AND prefix <= $3 ORDER BY prefix DESC LIMIT 1`
	qRunAllPages = `SELECT prefix, entries FROM tx_hash_pages WHERE chain = $1 AND run = $2`
)

// historyTxRuns finds the blocks of history holding a transaction whose
// hash has prefix, highest first: block alone, when given (then only the
// runs that span it are read). It returns the statement over the runs and
// the function that returns the blocks once it has run (reading the small
// runs from the cache, or once from the store).
func (r reader) historyTxRuns(prefix int64, block *uint64) (Query, func(context.Context) ([]uint64, error)) {
	in := int64(-1)
	if block != nil {
		in = int64(*block)
	}
	type small struct{ id, low, entries int64 }
	var blocks []uint64
	var mems []small
	var id, low, entries, mem int64
	var page []byte
	args := []any{r.chain, prefix, in, int64(memRunEntries), int64(math.MaxInt64)}
	q := Query{SQL: qHistoryTxRuns, Args: args, Dest: []any{&id, &low, &entries, &mem, &page}, Row: func() error {
		if mem == 1 {
			mems = append(mems, small{id, low, entries})
			return nil
		}
		var err error
		blocks, err = history.AppendHashBlocks(blocks, page, uint64(low), prefix)
		return err
	}}
	return q, func(ctx context.Context) ([]uint64, error) {
		var err error
		for _, m := range mems {
			if blocks, err = r.hashCache.blocks(ctx, r.c, r.chain, m.id, m.low, m.entries, prefix, blocks); err != nil {
				return nil, err
			}
		}
		if block != nil {
			blocks = slices.DeleteFunc(blocks, func(n uint64) bool { return n != *block })
		}
		slices.SortFunc(blocks, func(a, b uint64) int { return cmp.Compare(b, a) })
		return blocks, nil
	}
}

// hashRuns returns the runs of chain, oldest first.
func hashRuns(ctx context.Context, c Conn, chain int64) ([]hashRun, error) {
	var runs []hashRun
	var r hashRun
	err := c.Query(ctx, qHashRuns, []any{chain}, []any{&r.id, &r.level, &r.low, &r.high, &r.entries, &r.lo, &r.hi}, func() error {
		runs = append(runs, r)
		return nil
	})
	return runs, err
}

// runWriter writes a run's pages, from its entries in order.
type runWriter struct {
	c       Conn
	chain   int64
	run     hashRun // id, level and low set; high and entries counted
	pending []history.HashEntry
	values  []any
}

func newRunWriter(c Conn, chain int64, id, level int64, low uint64) *runWriter {
	return &runWriter{c: c, chain: chain, run: hashRun{id: id, level: level, low: int64(low), high: -1, lo: math.MinInt64, hi: math.MaxInt64}}
}

// add writes es, which follow what was added before in order.
func (w *runWriter) add(ctx context.Context, es []history.HashEntry) error {
	for _, e := range es {
		if e.Block < uint64(w.run.low) || e.Block-uint64(w.run.low) >= history.MaxHashRunSpan {
			return fmt.Errorf("block %d is outside the run from %d", e.Block, w.run.low)
		}
		w.run.high = max(w.run.high, int64(e.Block))
	}
	w.run.entries += int64(len(es))
	w.pending = append(w.pending, es...)
	// A page ends where the next entry is known to have another prefix.
	i := 0
	for len(w.pending)-i > 2*history.HashPageEntries {
		n := history.HashPageEnd(w.pending[i:])
		if i+n == len(w.pending) {
			break // the last prefix may go on
		}
		w.page(w.pending[i : i+n])
		i += n
	}
	w.pending = w.pending[:copy(w.pending, w.pending[i:])]
	return w.insert(ctx, false)
}

// page makes a page of es.
func (w *runWriter) page(es []history.HashEntry) {
	w.values = append(w.values, w.chain, w.run.id, es[0].Prefix, history.AppendHashPage(nil, uint64(w.run.low), es))
}

// insert inserts the pages made, once there are enough for a statement
// or all is true.
func (w *runWriter) insert(ctx context.Context, all bool) error {
	cols := len(hashPages.Columns)
	if !all && len(w.values) < 256*cols {
		return nil
	}
	err := insertValues(ctx, w.c, hashPages, w.values)
	w.values = w.values[:0]
	return err
}

// flush writes the entries added as pages: the next to be added have
// other prefixes.
func (w *runWriter) flush(ctx context.Context) error {
	for i := 0; i < len(w.pending); {
		n := history.HashPageEnd(w.pending[i:])
		w.page(w.pending[i : i+n])
		i += n
	}
	w.pending = w.pending[:0]
	return w.insert(ctx, true)
}

// finish writes the rest and the run's row; a run without entries is not
// made.
func (w *runWriter) finish(ctx context.Context) (hashRun, error) {
	if err := w.flush(ctx); err != nil || w.run.entries == 0 {
		return w.run, err
	}
	r := w.run
	_, err := w.c.Exec(ctx, qAddHashRun, w.chain, r.id, r.level, r.low, r.high, r.entries)
	return r, err
}

// reserveRunIDs returns the first of n ids for new runs of chain, above
// every run of runs and every id taken before (tx_hash_next, migration
// 0022): an id names one run for good, so that a reader may keep a
// complete run by its id (hash_cache.go), even after a thaw deleted the
// highest runs.
func reserveRunIDs(ctx context.Context, c Conn, chain int64, runs []hashRun, n int64) (int64, error) {
	id := int64(1)
	for _, r := range runs {
		id = max(id, r.id+1)
	}
	var next int64
	if _, err := queryRow(ctx, c, qNextRunID, []any{chain}, &next); err != nil {
		return 0, err
	}
	id = max(id, next)
	_, err := c.Exec(ctx, qSetNextRunID, chain, id+n)
	return id, err
}

// addHashRun makes a run of es, the hash prefixes of blocks a write puts
// into history (in any order; es is sorted in place): of level 0, or
// merged at once with the runs before it that call for it (mergeFrom).
func addHashRun(ctx context.Context, c Conn, chain int64, es []history.HashEntry, chunk int64) error {
	if len(es) == 0 {
		return nil
	}
	slices.SortFunc(es, history.HashEntry.Compare)
	es = slices.Compact(es) // two hashes of a block with one prefix: one entry
	low := slices.MinFunc(es, func(a, b history.HashEntry) int { return cmp.Compare(a.Block, b.Block) }).Block
	runs, err := hashRuns(ctx, c, chain)
	if err != nil {
		return err
	}
	// A merge under way goes on by a share of this write.
	if m := pendingMerge(runs); m != nil {
		if err := m.step(ctx, c, chain, chunk, mergePace(len(es))); err != nil {
			return err
		}
		if runs, err = hashRuns(ctx, c, chain); err != nil {
			return err
		}
	}
	// The new run is merged from memory when it is to be merged at once:
	// written first, it was read back and deleted.
	// Two ids: the new run's, and a merge's if it starts one.
	id, err := reserveRunIDs(ctx, c, chain, runs, 2)
	if err != nil {
		return err
	}
	k := mergeFrom(append(runs, hashRun{id: id, low: int64(low), entries: int64(len(es))}))
	if k == len(runs) {
		w := newRunWriter(c, chain, id, 0, low)
		if err := w.add(ctx, es); err != nil {
			return err
		}
		_, err := w.finish(ctx)
		return err
	}
	level := int64(1)
	total := int64(len(es))
	for _, r := range runs[k:] {
		level = max(level, r.level+1)
		total += r.entries
	}
	if chunkShift(total, chunk) <= incrementalShift || pendingMerge(runs) != nil {
		_, err = rewriteRuns(ctx, c, chain, runs[k:], es, id, level, math.MaxInt64, chunk)
		return err
	}
	// Too large for one write: this write's run is written, and merged
	// with those before over this write and the next ones.
	w := newRunWriter(c, chain, id, 0, low)
	if err := w.add(ctx, es); err != nil {
		return err
	}
	made, err := w.finish(ctx)
	if err != nil {
		return err
	}
	return newHashMerge(id+1, level, append(runs[k:], made)).step(ctx, c, chain, chunk, mergePace(len(es)))
}

// mergeFrom returns the first of the runs (oldest first) that are merged
// with the last: those after the last run that holds HashRunRatio times
// the entries of all after it (or is the upgrade's, or in a merge under
// way).
func mergeFrom(runs []hashRun) int {
	k := len(runs) - 1
	n := runs[k].entries
	for k > 0 && runs[k-1].level < legacyRunLevel && !runs[k-1].inMerge() && runs[k-1].entries < HashRunRatio*n {
		k--
		n += runs[k].entries
	}
	return k
}

// hashChunkEntries is about how many entries of the runs it merges
// rewriteRuns holds at a time: 1 MiB.
const hashChunkEntries = 1 << 16

// hashChunk is s.HashChunkEntries, or hashChunkEntries.
func (s *Store) hashChunk() int64 {
	if s.HashChunkEntries > 0 {
		return int64(s.HashChunkEntries)
	}
	return hashChunkEntries
}

// rewriteRuns writes the entries of runs and fresh (sorted entries not
// written yet, of blocks above the runs') below block below as one run of
// the level, id id, and deletes runs; it returns the run made (none when
// no entry is left). It reads the runs a range of prefixes at a time (the
// prefixes of hashes are uniform), so that a merge of any size holds
// about chunk entries.
func rewriteRuns(ctx context.Context, c Conn, chain int64, runs []hashRun, fresh []history.HashEntry, id, level, below, chunk int64) ([]hashRun, error) {
	total := int64(len(fresh))
	low := int64(math.MaxInt64)
	for _, r := range runs {
		total += r.entries
		low = min(low, r.low)
	}
	for _, e := range fresh {
		low = min(low, int64(e.Block))
	}
	shift := chunkShift(total, chunk)
	w := newRunWriter(c, chain, id, level, uint64(low))
	var es, scratch []history.HashEntry
	var ends []int
	for i := uint64(0); i < 1<<shift; i++ {
		lo, hi := prefixRange(i, shift)
		es, ends = es[:0], ends[:0]
		for _, r := range runs {
			var err error
			if es, err = readRunRange(ctx, c, chain, r, lo, hi, below, es); err != nil {
				return nil, err
			}
			ends = append(ends, len(es))
		}
		from := sort.Search(len(fresh), func(i int) bool { return fresh[i].Prefix >= lo })
		to := sort.Search(len(fresh), func(i int) bool { return fresh[i].Prefix > hi })
		for _, e := range fresh[from:to] {
			if e.Block < uint64(below) {
				es = append(es, e)
			}
		}
		ends = append(ends, len(es))
		es = history.MergeHashEntries(es, ends, &scratch)
		if err := w.add(ctx, es); err != nil {
			return nil, err
		}
	}
	made, err := w.finish(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if err := dropHashRun(ctx, c, chain, r.id); err != nil {
			return nil, err
		}
	}
	if made.entries == 0 {
		return nil, nil
	}
	return []hashRun{made}, nil
}

// readRunRange appends to es the entries of run r with prefixes lo to hi
// and blocks below below, in order.
func readRunRange(ctx context.Context, c Conn, chain int64, r hashRun, lo, hi, below int64, es []history.HashEntry) ([]history.HashEntry, error) {
	start := len(es)
	var page []byte
	err := c.Query(ctx, qRunPages, []any{chain, r.id, lo, hi}, []any{&page}, func() error {
		var err error
		es, err = history.AppendHashEntries(es, page, uint64(r.low))
		return err
	})
	if err != nil {
		return es[:start], err
	}
	// The range, and the heights below below: the pages at its ends hold
	// others. The part stays in order.
	kept := slices.DeleteFunc(es[start:], func(e history.HashEntry) bool {
		return e.Prefix < lo || e.Prefix > hi || e.Block >= uint64(below)
	})
	return es[:start+len(kept)], nil
}

// chunkShift returns the shift of prefixRange that cuts total entries
// (uniform prefixes) in ranges of about chunk.
func chunkShift(total, chunk int64) int {
	shift := 0
	for shift < 63 && total>>shift > chunk {
		shift++
	}
	return shift
}

// prefixRange returns the lowest and highest prefix of the i-th of the
// 2^shift ranges the prefixes fall in, in the order of signed integers.
func prefixRange(i uint64, shift int) (lo, hi int64) {
	if shift == 0 {
		return math.MinInt64, math.MaxInt64
	}
	size := uint64(1) << (64 - shift)
	u := i * size
	return int64(u ^ 1<<63), int64((u + size - 1) ^ 1<<63)
}

// dropHashRun deletes the run id of chain with its pages.
func dropHashRun(ctx context.Context, c Conn, chain, id int64) error {
	if _, err := c.Exec(ctx, qDropPages, chain, id); err != nil {
		return err
	}
	_, err := c.Exec(ctx, qDropHashRun, chain, id)
	return err
}

// cutHashRuns takes the blocks at or above from out of chain's runs (a
// thaw): runs wholly above are deleted, a run across from is written again
// without them.
func cutHashRuns(ctx context.Context, c Conn, chain int64, from uint64, chunk int64) error {
	runs, err := hashRuns(ctx, c, chain)
	if err != nil {
		return err
	}
	if m := pendingMerge(runs); m != nil { // finished first: its runs are cut whole
		if err := m.step(ctx, c, chain, chunk, math.MaxInt64); err != nil {
			return err
		}
		if runs, err = hashRuns(ctx, c, chain); err != nil {
			return err
		}
	}
	next, err := reserveRunIDs(ctx, c, chain, runs, int64(len(runs)))
	if err != nil {
		return err
	}
	for _, r := range runs {
		switch {
		case r.high < int64(from):
		case r.low >= int64(from):
			err = dropHashRun(ctx, c, chain, r.id)
		default:
			_, err = rewriteRuns(ctx, c, chain, []hashRun{r}, nil, next, r.level, int64(from), chunk)
			next++
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// convertHashIndex is the Go step of migration 0019: it makes the rows of
// history_tx_hashes of each chain one run, which is never merged again,
// and those of recent_tx_hashes another, of level 0, and drops both
// tables. The rows are read in key order a part at a time.
func convertHashIndex(ctx context.Context, tx Tx) error {
	for _, t := range []struct {
		table string
		level int64
	}{{"history_tx_hashes", legacyRunLevel}, {"recent_tx_hashes", 0}} {
		if err := convertHashTable(ctx, tx, t.table, t.level); err != nil {
			return fmt.Errorf("%s: %w", t.table, err)
		}
		if _, err := tx.Exec(ctx, `DROP TABLE `+t.table); err != nil {
			return err
		}
	}
	return nil
}

// convertHashTable makes the rows of table, of the layout of
// history_tx_hashes, one run of level a chain.
func convertHashTable(ctx context.Context, tx Tx, table string, level int64) error {
	var chains []int64
	var chain int64
	err := tx.Query(ctx, `SELECT DISTINCT chain FROM `+table+` ORDER BY chain`, nil, []any{&chain}, func() error {
		chains = append(chains, chain)
		return nil
	})
	if err != nil {
		return err
	}
	for _, chain := range chains {
		var low int64
		if _, err := queryRow(ctx, tx, `SELECT min(block_number) FROM `+table+` WHERE chain = $1`, []any{chain}, &low); err != nil {
			return err
		}
		// Not hashRuns: migration 0020's columns are not there yet.
		var id int64
		if _, err := queryRow(ctx, tx, `SELECT coalesce(max(id), 0) + 1 FROM tx_hash_runs WHERE chain = $1`, []any{chain}, &id); err != nil {
			return err
		}
		w := newRunWriter(tx, chain, id, level, uint64(low))
		after := history.HashEntry{Prefix: math.MinInt64}
		var es []history.HashEntry
		var e history.HashEntry
		var block int64 = -1
		for {
			es = es[:0]
			err := tx.Query(ctx, `SELECT prefix, block_number FROM `+table+`
				WHERE chain = $1 AND (prefix, block_number) > ($2, $3) ORDER BY prefix, block_number LIMIT 65536`,
				[]any{chain, after.Prefix, block}, []any{&e.Prefix, &block}, func() error {
					e.Block = uint64(block)
					es = append(es, e)
					return nil
				})
			if err != nil {
				return err
			}
			if len(es) == 0 {
				break
			}
			if err := w.add(ctx, es); err != nil {
				return err
			}
			after = es[len(es)-1]
			block = int64(after.Block)
		}
		if _, err := w.finish(ctx); err != nil {
			return fmt.Errorf("chain %d: %w", chain, err)
		}
	}
	return nil
}
