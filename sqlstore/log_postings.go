package sqlstore

import (
	"bytes"
	"context"
	"math"
	"slices"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// The logs of history blocks are found by posting lists, as their traces
// are: per bucket of LogBucketBlocks heights and key, the places of the
// logs with that key (log_postings, migration 0012). A key is an address,
// a topic0, or both (the kinds below); a place is (block, 0, position of
// the log in its block's log segment). So Filter Logs with an address or a
// topic0 counts its matches by the rows' n, a sum per bucket of the range
// whatever the matches, and reads the page's lists alone.

// LogBucketBlocks is the span of a bucket of log_postings: ten of
// trace_counts', since a count over a range seeks each bucket of it once
// (50 seeks for 50,000 blocks where 500 were a third of serve's CPU), and
// a key that logs now and then has one row where it had several (29% fewer
// rows at Polygon's shape). A count's edges and a page decode at most the
// runs of one bucket's list they need.
const LogBucketBlocks = 1000

// Kinds of key of log_postings.
const (
	logKeyAddress       = 0 // the emitting contract's address
	logKeyTopic0        = 1 // the first topic, the event's signature
	logKeyAddressTopic0 = 2 // both, the address first
)

// logPostingKeys returns the kind and the keys of log_postings whose lists
// hold every log that f's address and topic0 conditions let through, and
// no other; ok is false when f has neither.
func logPostingKeys(f *chainquery.LogRangeFilter) (kind int, keys [][]byte, ok bool) {
	addrs := addressBytes(uniqueAddresses(f.Addresses))
	var topics [][]byte
	for i, t := range f.Topics[0] {
		if !slices.Contains(f.Topics[0][:i], t) {
			topics = append(topics, t[:])
		}
	}
	switch {
	case len(addrs) > 0 && len(topics) > 0:
		for _, a := range addrs {
			for _, t := range topics {
				keys = append(keys, append(slices.Clip(a), t...))
			}
		}
		return logKeyAddressTopic0, keys, true
	case len(addrs) > 0:
		return logKeyAddress, addrs, true
	case len(topics) > 0:
		return logKeyTopic0, topics, true
	}
	return 0, nil, false
}

// logsFrom returns the lowest history block of chain whose logs are in
// log_postings.
func (s *SQLStore) logsFrom(ctx context.Context, c StoreConn, chain int64) (int64, error) {
	var from int64
	_, err := queryRow(ctx, c, s.SQL.LogsFrom, []any{chain}, &from)
	return from, err
}

// listEnds says which ends of a range of listed history are the lists'
// own: a range from the lowest listed block (logs_from) holds the whole of
// its first bucket's lists, however the bucket lies, and one to history's
// highest block the whole of its last bucket's. Such a bucket is counted
// by its n, as one inside the range: reading its lists to count them by
// their headers cost what its matches cost (on PostgreSQL, the range over
// the whole history was 1.4-1.6x slower at 16x the matches than at 1x).
type listEnds struct{ fromBottom, toTop bool }

// postingRangeLogs hands m the logs of the history blocks lo to hi (whose
// logs are in log_postings) that match its filter, which names an address
// or a topic0. The lists' counts, bucket by bucket, give the range's count
// and the buckets where the page lies; only those buckets' lists are read
// (and the range's edge buckets', to count their part), and only the
// page's blocks decoded. A condition on topic1 to topic3 is checked in the
// log segments of the blocks the lists name: its cost grows with them.
func (s *SQLStore) postingRangeLogs(ctx context.Context, c StoreConn, chain int64, lo, hi uint64, ends listEnds, m *logMatcher) error {
	kind, keys, _ := logPostingKeys(m.f)
	first, last := int64(lo/LogBucketBlocks), int64(hi/LogBucketBlocks)
	lists := func(first, last int64, each func(bucket int64, lists [][]byte) error) error {
		return s.logPostingLists(ctx, c, chain, kind, keys, first, last, each)
	}
	if m.f.Topics[1] != nil || m.f.Topics[2] != nil || m.f.Topics[3] != nil {
		// The blocks the lists name, each matched whole.
		var numbers []uint64
		err := lists(first, last, func(_ int64, ls [][]byte) error {
			ps, err := listsPage(ls, lo, hi, 0, math.MaxInt)
			for _, p := range ps {
				if len(numbers) == 0 || numbers[len(numbers)-1] != p.Block {
					numbers = append(numbers, p.Block)
				}
			}
			return err
		})
		if err != nil {
			return err
		}
		return s.historyRangeLogs(ctx, c, chain, numbers, m)
	}
	// Each bucket's matches: n for the buckets inside the range, counted
	// in the lists (by their runs' headers) for those across its ends.
	type bucketCount struct {
		bucket int64
		n      int
	}
	var counts []bucketCount
	var b int64
	var n int
	q, args := s.SQL.LogPostingCounts(chain, kind, keys, first, last)
	if err := c.Query(ctx, q, args, []any{&b, &n}, func() error {
		counts = append(counts, bucketCount{b, n})
		return nil
	}); err != nil {
		return err
	}
	edges := map[int64][][]byte{}
	for _, e := range []int64{first, last} {
		whole := (e*LogBucketBlocks >= int64(lo) || ends.fromBottom && e == first) &&
			(e*LogBucketBlocks+LogBucketBlocks-1 <= int64(hi) || ends.toTop && e == last)
		if _, done := edges[e]; whole || done {
			continue
		}
		edges[e] = [][]byte{}
		err := lists(e, e, func(_ int64, ls [][]byte) error {
			edges[e] = ls
			return nil
		})
		if err != nil {
			return err
		}
	}
	total := 0
	for i := range counts {
		if ls, ok := edges[counts[i].bucket]; ok {
			counts[i].n = 0
			for _, list := range ls {
				k, err := history.CountPostings(list, lo, hi)
				if err != nil {
					return err
				}
				counts[i].n += k
			}
		}
		total += counts[i].n
	}
	offset, need := max(0, m.f.Offset-m.count), m.f.Limit-len(m.page)
	m.count += total
	if need <= 0 || offset >= total {
		return nil
	}
	// The buckets that hold the page: from the one where the offset falls
	// to the one where the page is full; their lists are read up to the
	// page's last entry, whole runs before its first passed undecoded.
	start, end, seen := -1, len(counts)-1, 0
	for i, bc := range counts {
		if start < 0 && seen+bc.n > offset {
			start = i
		}
		seen += bc.n
		if start >= 0 && seen >= offset+need {
			end = i
			break
		}
	}
	for _, bc := range counts[:start] {
		offset -= bc.n
	}
	var page []history.Posting
	take := func(ls [][]byte) error {
		ps, err := listsPage(ls, lo, hi, offset, need-len(page))
		page = append(page, ps...)
		offset = 0
		return err
	}
	for i := start; i <= end; i++ {
		if ls, ok := edges[counts[i].bucket]; ok {
			if err := take(ls); err != nil {
				return err
			}
			continue
		}
		if counts[i].n == 0 {
			continue
		}
		// The buckets inside the range between start and end, read in
		// one statement.
		j := i
		for j < end {
			if _, ok := edges[counts[j+1].bucket]; ok {
				break
			}
			j++
		}
		if err := lists(counts[i].bucket, counts[j].bucket, func(_ int64, ls [][]byte) error { return take(ls) }); err != nil {
			return err
		}
		i = j
	}
	return s.keepPostings(ctx, c, chain, page, m)
}

// logPostingLists reads the lists of keys of kind over the buckets first
// to last and hands each bucket's, in bucket order, to each.
func (s *SQLStore) logPostingLists(ctx context.Context, c StoreConn, chain int64, kind int, keys [][]byte, first, last int64, each func(bucket int64, lists [][]byte) error) error {
	q, args := s.SQL.LogPostings(chain, kind, keys, first, last)
	var bucket, cur int64 = 0, -1
	var data []byte
	var pending [][]byte
	err := c.Query(ctx, q, args, []any{&bucket, &data}, func() error {
		if bucket != cur && pending != nil {
			if err := each(cur, pending); err != nil {
				return err
			}
			pending = nil
		}
		cur = bucket
		pending = append(pending, bytes.Clone(data))
		return nil
	})
	if err == nil && pending != nil {
		err = each(cur, pending)
	}
	return err
}

// listsPage returns, in chain order, the entries offset to
// offset+limit-1 of the union of lists (which never share an entry) in
// blocks lo to hi. One list is read from its entry at offset on, the runs
// before it passed by their headers; several are each read up to entry
// offset+limit in the range and merged.
func listsPage(lists [][]byte, lo, hi uint64, offset, limit int) ([]history.Posting, error) {
	if limit <= 0 {
		return nil, nil
	}
	read := func(list []byte, skip, want int) ([]history.Posting, error) {
		r := history.NewPostingReader(list)
		r.SkipBefore(lo)
		var out []history.Posting
		p, ok := r.Next()
		for ok && p.Block < lo {
			p, ok = r.Next()
		}
		if ok && skip > 0 {
			r.Skip(skip - 1) // p is the first passed
			p, ok = r.Next()
		}
		for ; ok && p.Block <= hi && len(out) < want; p, ok = r.Next() {
			out = append(out, p)
		}
		return out, r.Err()
	}
	if len(lists) == 1 {
		return read(lists[0], offset, limit)
	}
	all := make([][]history.Posting, len(lists))
	for i, list := range lists {
		var err error
		if all[i], err = read(list, 0, offset+limit); err != nil {
			return nil, err
		}
	}
	return history.Page(history.Match(all, nil), offset, limit), nil
}

// keepPostings adds the logs at places ps, in order, to m's page.
func (s *SQLStore) keepPostings(ctx context.Context, c StoreConn, chain int64, ps []history.Posting, m *logMatcher) error {
	var numbers []uint64
	for _, p := range ps {
		if len(numbers) == 0 || numbers[len(numbers)-1] != p.Block {
			numbers = append(numbers, p.Block)
		}
	}
	blocks, err := s.logBlocks(ctx, c, chain, numbers)
	if err != nil {
		return err
	}
	for _, p := range ps {
		b := blocks[p.Block]
		if b == nil {
			return errHistoryMoved
		}
		if err := b.decode(); err != nil {
			return err
		}
		if int(p.Pos) >= len(b.logs) {
			return history.ErrCorrupt
		}
		if err := b.keep(ctx, m, b.logs[p.Pos]); err != nil {
			return err
		}
	}
	return nil
}
