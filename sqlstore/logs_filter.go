package sqlstore

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// FindLogs returns one page of the logs matching f and their number
// (LogRangeService). In history, a filter naming an address or a topic0
// is answered by the posting lists (postingRangeLogs), any other by
// matching every log of its range, at most chainquery.MaxLogRangeBlocks
// blocks (historyRangeLogs); in rows the database counts the matches and
// reads the page's, the conditions in the statements.
func (s *Store) FindLogs(ctx context.Context, f chainquery.LogRangeFilter) ([]*chainquery.Log, int, error) {
	tx, r, err := s.readChain(ctx, f.Chain)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	// The boundary, from where history's blocks are counted and listed,
	// and the epochs, in one statement with the range's seeks: on
	// PostgreSQL each is a round trip.
	var below, counted int64
	m := &logMatcher{f: &f, page: []*chainquery.Log{}}
	q, asks := f.TimeSeek()
	at, err := r.historyBounds(ctx, q, asks, logBounds, &below, &counted, &m.logsFrom, &m.epochsFrom, &m.epochsBelow)
	if err != nil {
		return nil, 0, err
	}
	lo, hi, ok, err := f.BlockRange(func(chainquery.TimeSeek) (chainquery.TimeBlocks, error) { return at, nil })
	if err != nil || !ok {
		return []*chainquery.Log{}, 0, err
	}
	hi = min(hi, math.MaxInt64)
	rlo := max(int64(lo), below)
	var rowCount func() (int, bool)
	if int64(hi) >= below {
		// The rows' count rides with history's counts (m.ride).
		m.ride, rowCount = r.rowLogCount(rlo, int64(hi), below, &f)
	}
	if int64(lo) < below {
		if err := r.historyRangeMatches(ctx, lo, min(hi, uint64(below-1)), int64(hi) >= below-1, counted, m); err != nil {
			return nil, 0, err
		}
	}
	if int64(hi) >= below {
		// The rows: their matches counted, and their part of the page
		// read, by the database.
		if err := queryBatch(ctx, tx, m.ride...); err != nil { // none if they rode
			return nil, 0, err
		}
		n, counted := rowCount()
		if !counted {
			q, args := s.Dialect.RangeLogCount(r.chain, rlo, int64(hi), &f)
			if _, err := queryRow(ctx, tx, q, args, &n); err != nil {
				return nil, 0, err
			}
		}
		offset, limit := max(0, f.Offset-m.count), f.Limit-len(m.page)
		if limit > 0 && offset < n {
			var l chainquery.Log
			sc := new(scan).counter(&l.BlockNumber).to(&l.Timestamp, &l.TransactionIndex).fixed(l.TransactionHash[:]).
				fixed(l.TransactionFrom[:]).address(&l.TransactionTo)
			logScan(sc, &l)
			q, args := s.Dialect.RangeLogPage(r.chain, rlo, int64(hi), &f, limit, offset)
			rows, err := queryRows(ctx, tx, q, args, sc, &l)
			if err != nil {
				return nil, 0, err
			}
			m.page = append(m.page, rows...)
		}
		m.count += n
	}
	return m.page, m.count, nil
}

// historyRangeMatches hands m the logs of the history blocks lo to hi that match
// its filter: by the blocks' counts when it has no condition
// (countedRangeLogs), by the posting lists when it names an address or a
// topic0 (postingRangeLogs), else, and in blocks whose logs are not in the
// lists or counted yet, by matching every log of the range, which then
// must not hold more than chainquery.MaxLogRangeBlocks blocks. toTop says
// that hi is history's highest block; counted is log_counts_from.
func (r reader) historyRangeMatches(ctx context.Context, lo, hi uint64, toTop bool, counted int64, m *logMatcher) error {
	if unconditional(m.f) && lo >= uint64(counted) {
		if done, err := r.countedRangeLogs(ctx, lo, hi, m); done || err != nil {
			return err
		}
	}
	listed := hi + 1 // the first block read by the lists: none without a key
	fromBottom := false
	if m.f.Keyed() {
		listed, fromBottom = max(lo, uint64(m.logsFrom)), lo <= uint64(m.logsFrom)
	}
	if lo < listed {
		end := min(hi, listed-1)
		if end-lo >= chainquery.MaxLogRangeBlocks {
			return chainquery.Errorf(chainquery.EUNAVAILABLE, "the logs of blocks %d to %d are not indexed by address and topic yet (chainquery migrate indexes them); ask for at most %d of those blocks at a time",
				lo, listed-1, chainquery.MaxLogRangeBlocks)
		}
		numbers := make([]uint64, 0, end-lo+1)
		for n := lo; n <= end; n++ {
			numbers = append(numbers, n)
		}
		if err := r.historyRangeLogs(ctx, numbers, m); err != nil {
			return err
		}
	}
	if listed <= hi {
		return r.postingRangeLogs(ctx, listed, hi, listEnds{fromBottom, toTop}, m)
	}
	return nil
}

// LogConditions returns f's address and topic conditions as the columns
// they test (address, topic0 to topic3) and the values any of which each
// must hold, for the stores' RangeLogCount and RangeLogPage.
func LogConditions(f *chainquery.LogRangeFilter) (columns []string, values [][][]byte) {
	if len(f.Addresses) > 0 {
		columns = append(columns, "address")
		values = append(values, addressBytes(f.Addresses))
	}
	for i, t := range f.Topics {
		if len(t) == 0 {
			continue
		}
		vs := make([][]byte, len(t))
		for j := range t {
			vs[j] = t[j][:]
		}
		columns = append(columns, fmt.Sprintf("topic%d", i))
		values = append(values, vs)
	}
	return columns, values
}

// logMatcher counts the logs that match its filter, given in API order,
// and keeps those of the page.
type logMatcher struct {
	f     *chainquery.LogRangeFilter
	count int
	page  []*chainquery.Log
	// The chain's history's bounds: logs_from, and the logs' epochs
	// (log_epochs.go).
	logsFrom, epochsFrom, epochsBelow int64
	// ride are statements that depend on no other's answer (the rows'
	// count), sent with history's first batch of counts, which then
	// empties it; what is left is the caller's to run.
	ride []Query
}

// counted counts one more matching log, and reports whether it is one of
// the page (which the caller then adds).
func (m *logMatcher) counted() bool {
	m.count++
	return m.count > m.f.Offset && len(m.page) < m.f.Limit
}

// historyRangeLogs hands the logs of the history blocks numbers (in
// order; the heights without a block are passed) to m. Blocks whose logs
// the decoded cache holds are matched there; the others' log segments are
// read in one statement and matched by their address and topic columns
// alone (history.MatchLogs), and decoded whole only where the page has a
// log. Only the page's logs are copied and given their block's and
// transaction's fields, so that the transactions segment is decoded for
// the page's blocks alone: decoding every block's logs and transactions
// whole was most of serve's CPU on Filter Logs (docs/benchmarks.md).
func (r reader) historyRangeLogs(ctx context.Context, numbers []uint64, m *logMatcher) error {
	blocks, err := r.logBlocks(ctx, numbers)
	if err != nil {
		return err
	}
	for _, n := range numbers {
		b := blocks[n]
		if b == nil {
			continue // no block stored at this height
		}
		if b.seg != nil {
			if err := r.ensureDict(ctx, b.seg); err != nil {
				return err
			}
			positions, _, err := history.MatchLogs(b.seg, m.f.MatchesFields)
			if err != nil {
				return err
			}
			for _, i := range positions {
				if !m.counted() {
					continue
				}
				if err := b.decode(ctx); err != nil {
					return err
				}
				if i >= len(b.logs) {
					return history.ErrCorrupt
				}
				if err := b.keep(ctx, m, b.logs[i]); err != nil {
					return err
				}
			}
			continue
		}
		for _, l := range b.logs { // none: a block without logs
			if m.f.Matches(l) && m.counted() {
				if err := b.keep(ctx, m, l); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// logBlocks returns the stored history blocks among numbers, each with
// its logs from the decoded cache or else its log segment, read in one
// statement.
func (r reader) logBlocks(ctx context.Context, numbers []uint64) (map[uint64]*rangeBlock, error) {
	if len(numbers) == 0 {
		return nil, nil
	}
	stamps, err := r.historyStamps(ctx, numbers)
	if err != nil {
		return nil, err
	}
	return r.stampedLogBlocks(ctx, numbers, stamps)
}

// stampedLogBlocks is logBlocks with the blocks' stamps read already.
func (r reader) stampedLogBlocks(ctx context.Context, numbers []uint64, stamps map[uint64]stamp) (map[uint64]*rangeBlock, error) {
	out := make(map[uint64]*rangeBlock, len(stamps))
	var missing []uint64
	for _, n := range numbers {
		st, ok := stamps[n]
		if !ok {
			continue
		}
		b := &rangeBlock{r: r, number: n, stamp: st}
		out[n] = b
		if v, ok := r.decoded.get(decodedKey{r.chain, n, st.version, segmentLogs}); ok {
			b.logs = v.([]*chainquery.Log)
		} else {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	var n int64
	var kind int
	var data []byte
	var st stamp
	q, args := r.Dialect.HistoryLogBlocks(r.chain, missing)
	err := r.c.Query(ctx, q, args, []any{&n, &st.timestamp, &st.version, &kind, &data}, func() error {
		b := out[uint64(n)]
		if b == nil || st != b.stamp {
			return errHistoryMoved
		}
		b.seg = bytes.Clone(data)
		return nil
	})
	return out, err
}

// rangeBlock is a history block of a Filter Logs range as the page takes
// its logs: its transactions decoded when the page first needs them.
type rangeBlock struct {
	r       reader
	number  uint64
	stamp   stamp
	seg     []byte            // the log segment, when logs is not decoded yet
	logs    []*chainquery.Log // shared with the decoded cache
	byIndex map[int]*chainquery.Transaction
}

// decode decodes the block's log segment, once, into logs, and keeps them
// in the decoded cache.
func (b *rangeBlock) decode(ctx context.Context) error {
	if b.logs != nil || b.seg == nil {
		return nil
	}
	logs, err := decodeSegment(ctx, b.r.Store, b.seg, b.number, history.DecodeLogs)
	if err != nil {
		return err
	}
	b.logs = logs
	b.r.decoded.put(decodedKey{b.r.chain, b.number, b.stamp.version, segmentLogs}, logs, logsSize(logs))
	return nil
}

// keep adds a copy of l, with its block's and transaction's fields, to the
// page.
func (b *rangeBlock) keep(ctx context.Context, m *logMatcher, l *chainquery.Log) error {
	if b.byIndex == nil {
		txs, found, err := b.r.historyTransactions(ctx, b.number, b.stamp.version)
		if err != nil {
			return err
		} else if !found {
			return errHistoryMoved
		}
		b.byIndex = make(map[int]*chainquery.Transaction, len(txs))
		for _, t := range txs {
			b.byIndex[t.Index] = t
		}
	}
	t := b.byIndex[l.TransactionIndex]
	if t == nil {
		return fmt.Errorf("block %d: a log of transaction %d, which history does not hold", b.number, l.TransactionIndex)
	}
	row := *l
	row.Timestamp, row.TransactionHash, row.TransactionFrom, row.TransactionTo = b.stamp.timestamp, t.Hash, t.From, t.To
	if len(row.Topics) == 0 {
		row.Topics = nil // as rows give it
	}
	m.page = append(m.page, &row)
	return nil
}
