package sqlstore

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// TraceEpochBuckets is how many buckets (TraceCountBlocks heights each)
// one epoch of epoch_counts covers (migration 0025): an address's count
// over a range is its rows of the whole epochs in the range, one search
// of epoch_counts' key for them all, plus the pages of the buckets at
// the range's ends. Over all of 1,000,000 blocks that is 100 rows and at
// most ~200 pages, against 10,000 pages a bucket at a time; over a year of
// Polygon, ~1,600 rows. An epoch is written once, from its 200 x 1,024
// pages. It cannot change once a database holds epochs.
const TraceEpochBuckets = 100

// TraceEpochBlocks is the heights of an epoch.
const TraceEpochBlocks = TraceEpochBuckets * TraceCountBlocks

// epochCounts is the table of epochs' counts: per chain, space (a
// direction of trace_counts for traces), part (history.EpochPart) and
// epoch, a count page (history/counts.go).
var epochCounts = Table{Name: "epoch_counts", Columns: []string{"chain", "space", "part", "epoch", "counts"}}

// epochPartChunk is how many page parts of an epoch are added up at a
// time: the counts of all 1,024 of a Polygon-shaped epoch are ~300,000
// addresses a direction, a map too large for the ingester's memory.
const epochPartChunk = 64

// closeTraceEpochs writes, in b, the epochs of chain's traces that lie
// wholly in history and are not written yet, from trace_epochs_below up,
// at most limit of them, and moves trace_epochs_below past them. Epochs
// below the chain's lowest block hold nothing: trace_epochs_below starts
// at that block's epoch.
func (s *Store) closeTraceEpochs(ctx context.Context, b BlockBatch, chain int64, limit int) (int, error) {
	var below, done int64
	if found, err := queryRow(ctx, b, qTraceEpochBounds, []any{chain}, &below, &done); err != nil || !found {
		return 0, err
	}
	if done+TraceEpochBlocks > below {
		return 0, nil
	}
	start := done
	var lowest *int64
	if _, err := queryRow(ctx, b, qFirstBlockFrom, []any{chain, int64(0)}, &lowest); err != nil {
		return 0, err
	}
	if lowest != nil {
		done = max(done, *lowest/TraceEpochBlocks*TraceEpochBlocks)
	}
	written := 0
	for ; written < limit && done+TraceEpochBlocks <= below; written++ {
		if err := writeTraceEpoch(ctx, b, chain, done/TraceEpochBlocks); err != nil {
			return written, err
		}
		done += TraceEpochBlocks
	}
	if done != start {
		if _, err := b.Exec(ctx, qSetTraceEpochsBelow, chain, done); err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeTraceEpoch writes the rows of epoch_counts of chain's epoch from
// the pages of its buckets, the pages of epochPartChunk page parts of a
// direction at a time (their addresses' epoch parts are theirs alone:
// history.EpochParts).
func writeTraceEpoch(ctx context.Context, b BlockBatch, chain, epoch int64) error {
	first := epoch * TraceEpochBuckets
	last := first + TraceEpochBuckets - 1
	var part int
	var keys []byte
	for dir := CountFrom; dir <= CountTo; dir++ {
		for lo := 0; lo < history.PageParts; lo += epochPartChunk {
			sums := map[int]map[[history.AddrBytes]byte]int64{} // by epoch part
			err := b.Query(ctx, epochPagesSQL(first, last), []any{chain, dir, lo, lo + epochPartChunk - 1, first, last},
				[]any{&part, &keys}, func() error {
					counts, err := history.PageCounts(keys)
					if err != nil {
						return err
					}
					for _, c := range counts {
						ep := history.EpochPart(c.Key)
						m := sums[ep]
						if m == nil {
							m = map[[history.AddrBytes]byte]int64{}
							sums[ep] = m
						}
						m[[history.AddrBytes]byte(c.Key)] += c.N
					}
					return nil
				})
			if err != nil {
				return err
			}
			t := Table{Name: epochCounts.Name, Columns: epochCounts.Columns}
			for _, ep := range slices.Sorted(maps.Keys(sums)) {
				page, err := countPage(sums[ep])
				if err != nil {
					return err
				}
				t.Values = append(t.Values, chain, dir, ep, epoch, page)
			}
			if err := b.Insert(ctx, []Table{t}); err != nil {
				return err
			}
		}
	}
	return nil
}

// countPage is the count page of sums.
func countPage(sums map[[history.AddrBytes]byte]int64) ([]byte, error) {
	counts := make([]history.Count, 0, len(sums))
	for a, n := range sums {
		counts = append(counts, history.Count{Key: bytes.Clone(a[:]), N: n})
	}
	slices.SortFunc(counts, func(x, y history.Count) int { return bytes.Compare(x.Key, y.Key) })
	return history.AppendCounts(nil, history.AddrBytes, counts)
}

// epochPagesSQL selects the part and keys of the pages of direction $2 and
// parts $3 to $4 in buckets $5 to $6 (first to last, an epoch's), naming
// their stretches of trace_pages_key.
func epochPagesSQL(first, last int64) string {
	var stretches []string
	for e := stretchOf(first); e <= stretchOf(last); e++ {
		stretches = append(stretches, strconv.FormatInt(e, 10))
	}
	return `SELECT part, keys FROM trace_pages WHERE chain = $1 AND ` + epochOf + ` IN (` + strings.Join(stretches, ", ") + `)
		AND dir = $2 AND part BETWEEN $3 AND $4 AND bucket BETWEEN $5 AND $6`
}

// thawTraceEpochs deletes chain's epochs from the one that holds block lo
// up, which a thaw from lo makes rows again, and lowers
// trace_epochs_below to match.
func thawTraceEpochs(ctx context.Context, b BlockBatch, chain, lo int64) error {
	return thawEpochs(ctx, b, qDeleteTraceEpochsFrom, qLowerTraceEpochsBelow, chain, lo)
}

// thawEpochs runs a thaw's two statements of epochs from block lo up:
// del (chain, the epoch that holds lo) deletes them, lower (chain, that
// epoch's first block) moves their markers down to it.
func thawEpochs(ctx context.Context, b BlockBatch, del, lower string, chain, lo int64) error {
	epoch := lo / TraceEpochBlocks
	if _, err := b.Exec(ctx, del, chain, epoch); err != nil {
		return err
	}
	_, err := b.Exec(ctx, lower, chain, epoch*TraceEpochBlocks)
	return err
}

// epochSums reads the counts of addrs (keys of keyLen bytes) in space over chain's
// epochs first to last and calls each, in epoch order, with each epoch's
// total that is not zero.
func epochSums(ctx context.Context, c Conn, chain int64, space int, addrs [][]byte, keyLen int, first, last int64, each func(epoch, n int64) error) error {
	sums, err := readEpochSums(ctx, c, chain, space, addrs, keyLen, first, last)
	if err != nil {
		return err
	}
	return eachEpoch(sums, first, last, each)
}

// readEpochSums returns each epoch's total of addrs in space over chain's
// epochs first to last (epochSumsQuery), without asking when there is none.
func readEpochSums(ctx context.Context, c Conn, chain int64, space int, addrs [][]byte, keyLen int, first, last int64) (map[int64]int64, error) {
	if first > last || len(addrs) == 0 {
		return nil, nil
	}
	q, sums := epochSumsQuery(chain, space, addrs, keyLen, first, last)
	return sums, c.Query(ctx, q.SQL, q.Args, q.Dest, q.Row)
}

// eachEpoch calls each, in epoch order, with the totals of sums from
// epoch first to last that are not zero; an error of each ends it.
func eachEpoch(sums map[int64]int64, first, last int64, each func(epoch, n int64) error) error {
	for _, e := range slices.Sorted(maps.Keys(sums)) {
		if n := sums[e]; n > 0 && e >= first && e <= last {
			if err := each(e, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// epochSumsQuery is epochSums' statement, which adds each epoch's total
// of addrs to sums as it runs (none when first > last or addrs is empty).
func epochSumsQuery(chain int64, space int, addrs [][]byte, keyLen int, first, last int64) (Query, map[int64]int64) {
	var parts []int
	for _, a := range addrs {
		if p := history.EpochPart(a); !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		parts = []int{-1} // no row
	}
	sums := map[int64]int64{}
	var epoch int64
	var part int
	var page []byte
	return Query{SQL: epochCountsSQL(parts), Args: []any{chain, space, first, last}, Dest: []any{&epoch, &part, &page}, Row: func() error {
		for _, a := range addrs {
			if history.EpochPart(a) != part {
				continue
			}
			k, _, err := history.FindCount(page, keyLen, a)
			if err != nil {
				return err
			}
			sums[epoch] += k
		}
		return nil
	}}, sums
}

// epochCountsSQL selects the epoch, part and counts of the rows of
// epoch_counts of parts in space $2 over the epochs $3 to $4: a search of
// the key a part, in no order (at most a row an epoch and part, which
// epochSums adds up by epoch).
func epochCountsSQL(parts []int) string {
	return `SELECT epoch, part, counts FROM epoch_counts WHERE chain = $1 AND space = $2 AND part IN (` + partList(parts) + `)
		AND epoch BETWEEN $3 AND $4`
}

// The statements of the epochs' boundary. qTraceEpochBounds: chain →
// below, trace_epochs_below. qSetTraceEpochsBelow: chain, trace_epochs_below.
// qLowerTraceEpochsBelow: chain, a height → trace_epochs_below no higher.
// qDeleteTraceEpochsFrom: chain, epoch → deletes the traces' epochs from
// there up.
const (
	qTraceEpochBounds = `SELECT below, trace_epochs_below FROM history WHERE chain = $1`
)

// traceBounds are the statements of the bounds Filter Traces reads with
// its range's seeks (historyBounds): those of qTraceEpochBounds.
var traceBounds = newHistoryCols("below", "trace_epochs_below", "thaws")

var (
	qSetTraceEpochsBelow   = `UPDATE history SET trace_epochs_below = $2 WHERE chain = $1`
	qLowerTraceEpochsBelow = `UPDATE history SET trace_epochs_below = $2 WHERE chain = $1 AND trace_epochs_below > $2`
	qDeleteTraceEpochsFrom = `DELETE FROM epoch_counts WHERE chain = $1 AND space IN (0, 1) AND epoch >= $2`
	// qEpochsLeft: chain → below, trace_epochs_below, log_epochs_below.
	qEpochsLeft = `SELECT below, trace_epochs_below, log_epochs_below FROM history WHERE chain = $1`
)

// CountEpochs writes the counts of up to epochs epochs of chain's traces,
// and as many of its logs, that lie wholly in history and have none yet
// (a database written before migration 0025), in one transaction, and
// returns how many heights of such epochs are left (of traces or of logs,
// the more): `chainquery
// migrate` calls it until it returns 0. Writes also do, an epoch each.
func (s *Store) CountEpochs(ctx context.Context, chain chainquery.Chain, epochs int) (left uint64, err error) {
	id, err := storeChainID(chain)
	if err != nil {
		return 0, err
	}
	b, err := s.BeginBlocks(ctx, id, nil)
	if err != nil {
		return 0, err
	}
	defer b.Rollback()
	if _, err := s.closeTraceEpochs(ctx, b, id, epochs); err != nil {
		return 0, err
	}
	if _, err := s.closeLogEpochs(ctx, b, id, epochs); err != nil {
		return 0, err
	}
	var below, traces, logs int64
	if _, err := queryRow(ctx, b, qEpochsLeft, []any{id}, &below, &traces, &logs); err != nil {
		return 0, err
	}
	whole := below / TraceEpochBlocks * TraceEpochBlocks
	if whole > traces {
		left = uint64(whole - traces)
	}
	if whole > logs {
		left = max(left, uint64(whole-logs))
	}
	return left, b.Commit(ctx)
}
