package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"slices"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// The writes of log_postings (log_postings.go): the lists of the history
// blocks a write adds, a backfill of history written before them, and a
// thaw's.

// logKey names a list a write builds.
type logKey struct {
	kind   int
	key    string
	bucket int64
}

// logLists gathers the posting lists of the logs of the history blocks a
// write adds.
type logLists map[logKey][]history.Posting

// add adds the logs of block d, in log index order (canonical), to the
// lists.
func (ls logLists) add(d *chainquery.BlockData) {
	n := d.Block.Number
	bucket := int64(n / LogBucketBlocks)
	for i, l := range d.Logs {
		p := history.Posting{Block: n, Pos: uint32(i)}
		ls.put(logKey{logKeyAddress, string(l.Address[:]), bucket}, p)
		if len(l.Topics) > 0 {
			ls.put(logKey{logKeyTopic0, string(l.Topics[0][:]), bucket}, p)
			ls.put(logKey{logKeyAddressTopic0, string(l.Address[:]) + string(l.Topics[0][:]), bucket}, p)
		}
	}
}

func (ls logLists) put(k logKey, p history.Posting) { ls[k] = append(ls[k], p) }

// flush adds the lists to log_postings, in its key's order, and empties
// them.
func (ls logLists) flush(ctx context.Context, b BlockBatch) error {
	if len(ls) == 0 {
		return nil
	}
	rows := make([]TraceCountRow, 0, len(ls))
	for k, ps := range ls {
		// A backfill reads its blocks in the database's order.
		slices.SortFunc(ps, func(x, y history.Posting) int { return cmp.Compare(x.Block, y.Block)*2 + cmp.Compare(x.Pos, y.Pos) })
		list, err := history.AppendPostings(nil, ps)
		if err != nil {
			return err
		}
		rows = append(rows, TraceCountRow{Dir: k.kind, Address: []byte(k.key), Bucket: k.bucket, N: int64(len(ps)), List: list})
	}
	clear(ls)
	slices.SortFunc(rows, func(x, y TraceCountRow) int {
		return cmp.Or(cmp.Compare(x.Bucket, y.Bucket), cmp.Compare(x.Dir, y.Dir), bytes.Compare(x.Address, y.Address))
	})
	return b.AddLogPostings(ctx, rows)
}

// indexLogs writes the log postings of up to max buckets of chain's
// history below logs_from, from the top down, and lowers logs_from past
// them; it returns logs_from then.
func (s *SQLStore) indexLogs(ctx context.Context, b BlockBatch, chain int64, max int) (int64, error) {
	from, err := s.logsFrom(ctx, b, chain)
	if err != nil || from == 0 {
		return from, err
	}
	below, err := s.historyBelow(ctx, b, chain)
	if err != nil {
		return 0, err
	}
	start := from
	for i := 0; i < max && from > 0; i++ {
		var last *int64
		if _, err := queryRow(ctx, b, s.SQL.LastBlockBelow, []any{chain, from}, &last); err != nil {
			return 0, err
		}
		if last == nil {
			from = 0
			break
		}
		lo := *last / LogBucketBlocks * LogBucketBlocks
		if err := s.listLogBucket(ctx, b, chain, lo, min(below, lo+LogBucketBlocks)-1); err != nil {
			return 0, err
		}
		from = lo
	}
	if from != start {
		_, err = b.Exec(ctx, s.SQL.SetLogsFrom, chain, from)
	}
	return from, err
}

// listLogBucket writes anew the rows of log_postings of the bucket that
// starts at lo, from the log segments of its history blocks lo to hi
// (all of them: logs_from may lie inside the bucket, whose blocks above it
// are listed already, and a list's entries must be in chain order).
func (s *SQLStore) listLogBucket(ctx context.Context, b BlockBatch, chain, lo, hi int64) error {
	numbers := make([]uint64, 0, hi-lo+1)
	for n := lo; n <= hi; n++ {
		numbers = append(numbers, uint64(n))
	}
	ls := logLists{}
	var n int64
	var kind int
	var data []byte
	var st stamp
	q, args := s.SQL.HistoryLogBlocks(chain, numbers)
	err := b.Query(ctx, q, args, []any{&n, &st.timestamp, &st.version, &kind, &data}, func() error {
		logs, err := history.DecodeLogs(data, uint64(n))
		if err == nil {
			ls.add(&chainquery.BlockData{Block: &chainquery.Block{Number: uint64(n)}, Logs: logs})
		}
		return err
	})
	if err != nil {
		return err
	}
	if _, err := b.Exec(ctx, s.SQL.DeleteLogPostings, chain, lo/LogBucketBlocks); err != nil {
		return err
	}
	return ls.flush(ctx, b)
}

// thawLogs keeps the log postings right when a thaw turns chain's history
// from lo (the start of a bucket of trace_counts) up back into rows, after
// it has deleted the rows of log_postings from lo's bucket up: that
// bucket's blocks below lo are listed again, when they were, and logs_from
// goes no higher than lo.
func (s *SQLStore) thawLogs(ctx context.Context, b BlockBatch, chain, lo int64) error {
	from, err := s.logsFrom(ctx, b, chain)
	if err != nil {
		return err
	}
	start := lo / LogBucketBlocks * LogBucketBlocks
	if from < lo && start < lo {
		if err := s.listLogBucket(ctx, b, chain, start, lo-1); err != nil {
			return err
		}
		from = min(from, start)
	}
	_, err = b.Exec(ctx, s.SQL.SetLogsFrom, chain, min(from, lo))
	return err
}

// IndexLogHistory writes the log postings of up to buckets buckets of
// chain's history written before they existed (migration 0012), in one
// transaction, and returns how many heights of history are left without
// them, from the first stored block up: `chainquery migrate` calls it
// until it returns 0.
func (s *SQLStore) IndexLogHistory(ctx context.Context, chain chainquery.Chain, buckets int) (left uint64, err error) {
	id, err := storeChainID(chain)
	if err != nil {
		return 0, err
	}
	b, err := s.BeginBlocks(ctx, id, nil)
	if err != nil {
		return 0, err
	}
	defer b.Rollback()
	from, err := s.indexLogs(ctx, b, id, buckets)
	if err != nil {
		return 0, err
	}
	var first *int64
	if _, err := queryRow(ctx, b, s.SQL.FirstBlockFrom, []any{id, 0}, &first); err != nil {
		return 0, err
	}
	if first != nil && *first < from {
		left = uint64(from - *first)
	}
	return left, b.Commit(ctx)
}
