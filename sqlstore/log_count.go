package sqlstore

import (
	"context"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// Filter Logs with no condition at all (no address, no topic) over
// history is counted by its blocks' log_count (migration 0024) and reads
// the log segments of its page's blocks alone, as Filter Traces without
// an address counts by trace_count: matching every log of the range,
// 100 blocks of ~400 Polygon logs each, was 0.3-0.4% of the HTTP ceiling
// and a p50 of 425-440 ms (docs/benchmarks.md, issue 31). A filter on
// topic1 to topic3 alone still matches every log of its range.
//
// Every block written carries its count (addHeaderRow); those an earlier
// release wrote into history get it from their segments, from the top
// down (countHistoryLogs), and history's blocks at or above
// log_counts_from have it. Freezes and thaws keep a block's row of
// blocks, and so its count; a thaw counts the rows it makes of blocks
// that had none.

// logBounds are the statements of the bounds Filter Logs reads with its
// range's seeks (historyBounds): below, log_counts_from, logs_from,
// log_epochs_from and log_epochs_below (no row: all 0).
var logBounds = newHistoryCols("below", "log_counts_from", "logs_from", "log_epochs_from", "log_epochs_below")

const (
	// qLogCountsFrom: chain → log_counts_from, the lowest history block
	// from which every block has its log_count. qSetLogCountsFrom: chain,
	// log_counts_from.
	qLogCountsFrom    = `SELECT log_counts_from FROM history WHERE chain = $1`
	qSetLogCountsFrom = `UPDATE history SET log_counts_from = $2 WHERE chain = $1`
	// qBlockLogCounts: chain, lo, hi → the number, log_count, timestamp
	// and version of each stored block from lo to hi, in order.
	qBlockLogCounts = `SELECT number, log_count, timestamp, version FROM blocks WHERE chain = $1 AND number BETWEEN $2 AND $3 ORDER BY number`
	// qZeroLogCounts: chain, lo, hi → the blocks from lo to hi counted as
	// without logs, for qSetLogCount to count those with a log segment.
	qZeroLogCounts = `UPDATE blocks SET log_count = 0 WHERE chain = $1 AND number BETWEEN $2 AND $3`
	qSetLogCount   = `UPDATE blocks SET log_count = $3 WHERE chain = $1 AND number = $2`
	// qCountRowLogs: chain, lo → the rows from lo up that have no
	// log_count get it from the logs table.
	qCountRowLogs = `UPDATE blocks SET log_count = (SELECT count(*) FROM logs WHERE logs.chain = blocks.chain AND logs.block_number = blocks.number)
		WHERE chain = $1 AND number >= $2 AND log_count IS NULL`
)

// unconditional reports whether f lets every log through: neither an
// address nor any topic.
func unconditional(f *chainquery.LogRangeFilter) bool {
	return len(f.Addresses)+len(f.Topics[0])+len(f.Topics[1])+len(f.Topics[2])+len(f.Topics[3]) == 0
}

// logCountsFrom returns log_counts_from; 0 for a chain without history.
func (r reader) logCountsFrom(ctx context.Context) (int64, error) {
	var from int64
	_, err := queryRow(ctx, r.c, qLogCountsFrom, []any{r.chain}, &from)
	return from, err
}

// countedRangeLogs hands m, whose filter lets every log through, the logs
// of the history blocks lo to hi: the blocks wholly before or after the
// page by their count, the page's blocks by their segments. It reports
// false, having handed nothing, when a block has no count.
func (r reader) countedRangeLogs(ctx context.Context, lo, hi uint64, m *logMatcher) (bool, error) {
	type counted struct {
		number uint64
		logs   int
		stamp  stamp
	}
	var blocks []counted
	var n int64
	var c *int64
	var st stamp
	complete := true
	err := r.c.Query(ctx, qBlockLogCounts, []any{r.chain, int64(lo), int64(hi)}, []any{&n, &c, &st.timestamp, &st.version}, func() error {
		if c == nil {
			complete = false
		} else {
			blocks = append(blocks, counted{uint64(n), int(*c), st})
		}
		return nil
	})
	if err != nil || !complete {
		return false, err
	}
	// The blocks holding the page's logs: from the log at m.f.Offset, as
	// many as the page has room for.
	var page []uint64
	stamps := map[uint64]stamp{}
	at, room := m.count, m.f.Limit-len(m.page)
	for _, b := range blocks {
		if room > 0 && b.logs > 0 && at+b.logs > m.f.Offset {
			page = append(page, b.number)
			stamps[b.number] = b.stamp
			room -= min(b.logs, at+b.logs-max(at, m.f.Offset))
		}
		at += b.logs
	}
	var rbs map[uint64]*rangeBlock
	if len(page) > 0 {
		if rbs, err = r.stampedLogBlocks(ctx, page, stamps); err != nil {
			return false, err
		}
	}
	for _, b := range blocks {
		rb := rbs[b.number]
		if rb == nil {
			m.count += b.logs
			continue
		}
		if err := rb.decode(ctx); err != nil {
			return false, err
		}
		if len(rb.logs) != b.logs {
			return false, history.ErrCorrupt
		}
		for _, l := range rb.logs {
			if m.counted() {
				if err := rb.keep(ctx, m, l); err != nil {
					return false, err
				}
			}
		}
	}
	return true, nil
}

// countHistoryLogs sets the log_count of the history blocks of up to max
// buckets of LogBucketBlocks below log_counts_from (or the boundary, when
// lower), from the top down (walkLogBuckets), from their log segments,
// and lowers log_counts_from past them; it returns log_counts_from then.
func (s *Store) countHistoryLogs(ctx context.Context, b BlockBatch, chain int64, max int) (int64, error) {
	r := s.reader(b, chain)
	from, err := r.logCountsFrom(ctx)
	if err != nil || from == 0 {
		return from, err
	}
	below, err := r.historyBelow(ctx)
	if err != nil {
		return 0, err
	}
	// Not above the boundary: a thaw made rows of the blocks above it.
	start := min(from, below)
	to, err := walkLogBuckets(ctx, b, chain, start, max, func(lo, top int64) error {
		return s.countLogBlocks(ctx, b, chain, lo, top-1)
	})
	if err == nil && to != from {
		_, err = b.Exec(ctx, qSetLogCountsFrom, chain, to)
	}
	return to, err
}

// countLogBlocks sets the log_count of chain's history blocks lo to hi
// from their log segments (a block without one has no logs).
func (s *Store) countLogBlocks(ctx context.Context, b BlockBatch, chain, lo, hi int64) error {
	type count struct{ number, logs int64 }
	var counts []count
	err := s.eachLogSegment(ctx, b, chain, lo, hi, func(n uint64, seg []byte) error {
		logs, err := decodeSegment(ctx, s, seg, n, func(seg []byte, _ uint64) (int, error) {
			_, logs, err := history.MatchLogs(seg, func(chainquery.Address, []chainquery.Hash) bool { return false })
			return logs, err
		})
		counts = append(counts, count{int64(n), int64(logs)})
		return err
	})
	if err != nil {
		return err
	}
	if _, err := b.Exec(ctx, qZeroLogCounts, chain, lo, hi); err != nil {
		return err
	}
	for _, c := range counts {
		if _, err := b.Exec(ctx, qSetLogCount, chain, c.number, c.logs); err != nil {
			return err
		}
	}
	return nil
}
