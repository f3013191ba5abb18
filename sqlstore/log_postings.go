package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// LogBucketBlocks is the span of a bucket of log_postings: ten of
// trace_counts', since a count over a range seeks each bucket of it once,
// and a key that logs now and then has one row where it had several
// (docs/benchmarks.md, "Filter Logs by posting lists"). A count's edges
// and a page decode at most the runs of one bucket's list they need.
//
// The logs of history blocks are found by posting lists, as their traces
// are: per bucket of LogBucketBlocks heights and key, the places of the
// logs with that key (log_postings, migration 0012). A key is an address,
// a topic0, or both (the kinds below); a place is (block, 0, position of
// the log in its block's log segment). So Filter Logs with an address or a
// topic0 counts its matches by the rows' n, a sum per bucket of the range
// whatever the matches, and reads the page's lists alone.
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
func (r reader) logsFrom(ctx context.Context) (int64, error) {
	var from int64
	_, err := queryRow(ctx, r.c, qLogsFrom, []any{r.chain}, &from)
	return from, err
}

// listEnds says which ends of a range of listed history are the lists'
// own: a range from the lowest listed block (logs_from) holds the whole of
// its first bucket's lists, however the bucket lies, and one to history's
// highest block the whole of its last bucket's. Such a bucket is counted
// by its n, as one inside the range: reading its lists to count them by
// their headers cost what its matches cost, and the range over the whole
// history grew with its matches (docs/benchmarks.md, Filter Logs on
// PostgreSQL, "end buckets").
type listEnds struct{ fromBottom, toTop bool }

// postingRangeLogs hands m the logs of the history blocks lo to hi (whose
// logs are in log_postings) that match its filter, which names an address
// or a topic0. The lists' counts, bucket by bucket, give the range's count
// and the buckets where the page lies; only those buckets' lists are read
// (and the range's edge buckets', to count their part), and only the
// page's blocks decoded. A condition on topic1 to topic3 is checked in the
// log segments of the blocks the lists name: its cost grows with them.
func (r reader) postingRangeLogs(ctx context.Context, lo, hi uint64, ends listEnds, m *logMatcher) error {
	kind, keys, _ := logPostingKeys(m.f)
	pr := newPostingRange(r, kind, keys, lo, hi)
	pr.epochsFrom, pr.epochsBelow, pr.ride = m.epochsFrom, m.epochsBelow, &m.ride
	if m.f.Topics[1] != nil || m.f.Topics[2] != nil || m.f.Topics[3] != nil {
		numbers, err := pr.blocks(ctx)
		if err != nil {
			return err
		}
		return r.historyRangeLogs(ctx, numbers, m)
	}
	offset, need := max(0, m.f.Offset-m.count), m.f.Limit-len(m.page)
	// A page from the range's start lies in its first bucket but where
	// that holds fewer matches than the page: its lists' starts, read for
	// little, ride with the counts where statements are batched (a round
	// trip less on PostgreSQL) rather than wait for them.
	var early map[int64]readLists
	if first := int64(pr.lo / LogBucketBlocks); offset == 0 && need > 0 && pr.whole(first, ends) {
		if _, batches := r.c.(Batcher); batches {
			if q, out, ok := pr.prefixQuery(first, first, need); ok {
				m.ride, early = append(m.ride, q), out
			}
		}
	}
	counts, edges, err := pr.count(ctx, ends)
	if err != nil {
		return err
	}
	total := 0
	for _, bc := range counts {
		total += bc.n
	}
	m.count += total
	if need <= 0 || offset >= total {
		return nil
	}
	page, err := pr.page(ctx, counts, edges, early, offset, need)
	if err != nil {
		return err
	}
	return r.keepPostings(ctx, page, m)
}

// postingRange is a range of history, lo to hi, read by the posting lists
// of keys of kind. Pairs of an address and a topic0 (logKeyAddressTopic0)
// are read from the lists of addrs, keeping the entries of topics
// (history/topics.go).
type postingRange struct {
	r      reader
	kind   int
	keys   [][]byte
	lo, hi uint64
	// epochsFrom and epochsBelow bound the chain's logs' epochs
	// (log_epochs.go): the whole ones between are in epoch_counts.
	epochsFrom, epochsBelow int64
	addrs                   [][]byte
	topics                  []chainquery.Hash
	// tagged, once counts has run, holds the buckets where the addresses'
	// own lists (not their pairs') hold matches: lists reads those alone
	tagged *map[int64]bool
	// ride, if not nil, holds statements sent with the first batch of
	// counts (logMatcher.ride)
	ride *[]Query
}

// newPostingRange returns the range lo to hi of the lists of keys of kind.
func newPostingRange(r reader, kind int, keys [][]byte, lo, hi uint64) postingRange {
	pr := postingRange{r: r, kind: kind, keys: keys, lo: lo, hi: hi, tagged: new(map[int64]bool)}
	if kind == logKeyAddressTopic0 {
		n := len(chainquery.Address{})
		for _, k := range keys {
			if !slices.ContainsFunc(pr.addrs, func(a []byte) bool { return bytes.Equal(a, k[:n]) }) {
				pr.addrs = append(pr.addrs, k[:n])
			}
			if t := chainquery.Hash(k[n:]); !slices.Contains(pr.topics, t) {
				pr.topics = append(pr.topics, t)
			}
		}
	}
	return pr
}

// keep says whether an entry of an address's list whose log has topic0 t
// (has: any) is one of the range's.
func (pr *postingRange) keep(has bool, t *chainquery.Hash) bool {
	return has && slices.Contains(pr.topics, *t)
}

// bucketCount is the number of a range's matches in a bucket.
type bucketCount struct {
	bucket int64
	n      int
	span   int64 // the buckets it counts from bucket on: one when 0 (an epoch's are LogEpochBuckets)
}

// lists reads the range's lists over the buckets first to last and hands
// each bucket's that has some, in bucket order, to each. Pairs of an
// address and a topic0 are read from the address's lists, filtered by its
// topics and tags, and from the pairs' own lists, which hold the entries
// of a busy address's parts (splitEntries).
func (pr postingRange) lists(ctx context.Context, first, last int64, each func(bucket int64, lists [][]byte) error) error {
	if pr.kind != logKeyAddressTopic0 {
		return pr.r.logPostingLists(ctx, pr.kind, pr.keys, first, last, nil, each)
	}
	byBucket := map[int64][][]byte{}
	var buckets []int64
	gather := func(b int64, ls [][]byte) error {
		if _, ok := byBucket[b]; !ok {
			buckets = append(buckets, b)
		}
		byBucket[b] = append(byBucket[b], ls...)
		return nil
	}
	if err := pr.r.logPostingLists(ctx, pr.kind, pr.keys, first, last, nil, gather); err != nil {
		return err
	}
	tagged := *pr.tagged == nil // not counted: look
	for b := first; b <= last && !tagged; b++ {
		tagged = (*pr.tagged)[b]
	}
	if tagged {
		if err := pr.r.logPostingLists(ctx, logKeyAddress, pr.addrs, first, last, pr.keep, gather); err != nil {
			return err
		}
	}
	slices.Sort(buckets)
	for _, b := range buckets {
		if err := each(b, byBucket[b]); err != nil {
			return err
		}
	}
	return nil
}

// logPostingLists reads the lists of keys of kind over the buckets first
// to last and hands each bucket's that has some, in bucket order, to each:
// with keep, addresses' lists filtered by their topics and tags.
func (r reader) logPostingLists(ctx context.Context, kind int, keys [][]byte, first, last int64,
	keep func(bool, *chainquery.Hash) bool, each func(bucket int64, lists [][]byte) error) error {
	q, finish := r.logPostingListsQuery(kind, keys, first, last, keep, each)
	if err := r.c.Query(ctx, q.SQL, q.Args, q.Dest, q.Row); err != nil {
		return err
	}
	return finish()
}

// logPostingListsQuery is logPostingLists' statement, for a batch, and
// what is left to do once it has run.
func (r reader) logPostingListsQuery(kind int, keys [][]byte, first, last int64,
	keep func(bool, *chainquery.Hash) bool, each func(bucket int64, lists [][]byte) error) (Query, func() error) {
	var bucket int64
	var list, topics, tags []byte
	q, args := r.Dialect.LogPostings(r.chain, kind, keys, first, last)
	dest := []any{&bucket, &list}
	if keep != nil {
		q, args = r.Dialect.LogTaggedPostings(r.chain, keys, first, last)
		dest = []any{&bucket, &topics, &list, &tags}
	}
	var cur int64 = -1
	var pending [][]byte
	row := func() error {
		if bucket != cur && pending != nil {
			if err := each(cur, pending); err != nil {
				return err
			}
			pending = nil
		}
		cur = bucket
		var l []byte
		var err error
		if keep != nil { // a new list: it shares nothing with what was read
			l, _, err = history.FilterTopics(list, topics, tags, keep)
		} else {
			l = list // a copy of the row's (Conn)
		}
		if l != nil {
			pending = append(pending, l)
		}
		return err
	}
	return Query{SQL: q, Args: args, Dest: dest, Row: row}, func() error {
		if pending != nil {
			return each(cur, pending)
		}
		return nil
	}
}

// blocks returns the blocks the range's lists name, in order, for a filter
// whose other topics are matched on each block whole.
func (pr postingRange) blocks(ctx context.Context) ([]uint64, error) {
	var numbers []uint64
	err := pr.lists(ctx, int64(pr.lo/LogBucketBlocks), int64(pr.hi/LogBucketBlocks), func(_ int64, ls [][]byte) error {
		ps, err := listsPage(ls, pr.lo, pr.hi, 0, math.MaxInt)
		for _, p := range ps {
			if len(numbers) == 0 || numbers[len(numbers)-1] != p.Block {
				numbers = append(numbers, p.Block)
			}
		}
		return err
	})
	return numbers, err
}

// count returns each bucket's matches: n for the buckets inside the range,
// counted in the lists (by their runs' headers) for those across its ends
// that are not the lists' own (ends), whose lists it returns in edges.
func (pr postingRange) count(ctx context.Context, ends listEnds) ([]bucketCount, map[int64][][]byte, error) {
	first, last := int64(pr.lo/LogBucketBlocks), int64(pr.hi/LogBucketBlocks)
	// The edges' lists depend on no count: they ride with the counts'
	// batch, but for pairs of an address and a topic0, whose lists depend
	// on what the counts found (tagged).
	edges := map[int64][][]byte{}
	keepEdge := func(e int64) func(int64, [][]byte) error {
		return func(_ int64, ls [][]byte) error { edges[e] = ls; return nil }
	}
	var ride []Query
	var finishes []func() error
	var after []int64
	for _, e := range []int64{first, last} {
		if _, done := edges[e]; pr.whole(e, ends) || done {
			continue
		}
		edges[e] = [][]byte{}
		if pr.kind == logKeyAddressTopic0 {
			after = append(after, e)
			continue
		}
		q, finish := pr.r.logPostingListsQuery(pr.kind, pr.keys, e, e, nil, keepEdge(e))
		ride, finishes = append(ride, q), append(finishes, finish)
	}
	if pr.ride != nil { // the caller's ride goes too
		ride, *pr.ride = append(ride, *pr.ride...), nil
	}
	pr.ride = &ride // pr is a copy
	counts, err := pr.epochCounts(ctx, first, last)
	if err != nil {
		return nil, nil, err
	}
	for _, finish := range finishes {
		if err := finish(); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range after {
		if err := pr.lists(ctx, e, e, keepEdge(e)); err != nil {
			return nil, nil, err
		}
	}
	for i := range counts {
		if ls, ok := edges[counts[i].bucket]; ok {
			counts[i].n = 0
			for _, list := range ls {
				k, err := history.CountPostings(list, pr.lo, pr.hi)
				if err != nil {
					return nil, nil, err
				}
				counts[i].n += k
			}
		}
	}
	return counts, edges, nil
}

// whole says whether the range holds the entries of bucket e, one of its
// ends, whole: the range holds the bucket, or its lists begin or end
// inside it (ends).
func (pr postingRange) whole(e int64, ends listEnds) bool {
	first, last := int64(pr.lo/LogBucketBlocks), int64(pr.hi/LogBucketBlocks)
	return (e*LogBucketBlocks >= int64(pr.lo) || ends.fromBottom && e == first) &&
		(e*LogBucketBlocks+LogBucketBlocks-1 <= int64(pr.hi) || ends.toTop && e == last)
}

// epochCounts is counts with, where the range's kind has them, the whole
// epochs between its end buckets (which count recounts when the range
// holds them in part) counted by epoch_counts, an entry an epoch.
func (pr postingRange) epochCounts(ctx context.Context, first, last int64) ([]bucketCount, error) {
	const eb, e = LogEpochBuckets, TraceEpochBlocks
	eLo := max((first+1+eb-1)/eb, (pr.epochsFrom+e-1)/e)
	eHi := min(last/eb, pr.epochsBelow/e) - 1
	if !hasLogEpochs(pr.kind) || eLo > eHi {
		return pr.counts(ctx, first, last)
	}
	// The buckets before the epochs, the epochs and the buckets after
	// them, asked in one round trip where the store has batches.
	var out, rest []bucketCount
	var qs []Query
	if first < eLo*eb {
		qs = append(qs, pr.countsQuery(first, eLo*eb-1, &out))
	}
	mid, finish := pr.logEpochQuery(eLo, eHi)
	qs = append(qs, mid)
	if (eHi+1)*eb <= last {
		qs = append(qs, pr.countsQuery((eHi+1)*eb, last, &rest))
	}
	if err := queryBatch(ctx, pr.r.c, pr.withRide(qs)...); err != nil {
		return nil, err
	}
	return slices.Concat(out, finish(), rest), nil
}

// withRide returns qs and the statements that ride with the range's first
// batch, which it takes.
func (pr postingRange) withRide(qs []Query) []Query {
	if pr.ride != nil {
		qs, *pr.ride = append(qs, *pr.ride...), nil
	}
	return qs
}

// counts returns the number of the lists' entries in each bucket from
// first to last that has some: the sum of the rows' n, and for pairs of an
// address and a topic0 also their counts in the addresses' topics, where
// the addresses' rows have groups.
func (pr postingRange) counts(ctx context.Context, first, last int64) ([]bucketCount, error) {
	var counts []bucketCount
	add := func(b int64, n int) { addCount(&counts, b, n) }
	err := queryBatch(ctx, pr.r.c, pr.withRide([]Query{pr.countsQuery(first, last, &counts)})...)
	if err != nil || pr.kind != logKeyAddressTopic0 {
		return counts, err
	}
	var b int64
	// An address's row is split wherever its pairs have a row
	// (log_forms.go): its topics count nothing there. With one address,
	// they are read only over the stretches of buckets between those.
	var paired map[int64]bool
	if len(pr.addrs) == 1 {
		paired = map[int64]bool{}
		for _, c := range counts {
			paired[c.bucket] = true
		}
	}
	var topics []byte
	tagged := map[int64]bool{}
	for lo := first; lo <= last; lo++ {
		if paired[lo] {
			continue
		}
		hi := lo
		for hi < last && !paired[hi+1] {
			hi++
		}
		q, args := pr.r.Dialect.LogTopics(pr.r.chain, pr.addrs, lo, hi)
		err = pr.r.c.Query(ctx, q, args, []any{&b, &topics}, func() error {
			n, err := history.CountTopics(topics, pr.keep)
			add(b, n)
			tagged[b] = tagged[b] || n > 0
			return err
		})
		if err != nil {
			return nil, err
		}
		lo = hi
	}
	*pr.tagged = tagged
	return counts, nil
}

// countsQuery is the statement of counts that reads the rows' n over
// buckets first to last, each added to *counts.
func (pr postingRange) countsQuery(first, last int64, counts *[]bucketCount) Query {
	var b int64
	var n int
	q, args := pr.r.Dialect.LogPostingCounts(pr.r.chain, pr.kind, pr.keys, first, last)
	return Query{SQL: q, Args: args, Dest: []any{&b, &n}, Row: func() error {
		addCount(counts, b, n)
		return nil
	}}
}

// addCount adds n entries of bucket b to counts, kept in bucket order.
func addCount(counts *[]bucketCount, b int64, n int) {
	i, found := slices.BinarySearchFunc(*counts, b, func(c bucketCount, b int64) int { return cmp.Compare(c.bucket, b) })
	switch {
	case n == 0:
	case found:
		(*counts)[i].n += n
	default:
		*counts = slices.Insert(*counts, i, bucketCount{bucket: b, n: n})
	}
}

// page returns the range's matches from offset, need of them at most: the
// buckets that hold them are those from the one where the offset falls to
// the one where the page is full, and their lists are read up to the
// page's last entry, whole runs before its first passed undecoded.
func (pr postingRange) page(ctx context.Context, counts []bucketCount, edges map[int64][][]byte, early map[int64]readLists, offset, need int) ([]history.Posting, error) {
	var start, end int
	for {
		start, end = pageCounts(counts, offset, need)
		// An epoch's count among those the page lies in: its buckets'.
		i := slices.IndexFunc(counts[max(start, 0):end+1], func(bc bucketCount) bool { return bc.span > 1 })
		if start < 0 || i < 0 {
			break
		}
		i += start
		inner, err := pr.counts(ctx, counts[i].bucket, counts[i].bucket+counts[i].span-1)
		if err != nil {
			return nil, err
		}
		counts = slices.Replace(slices.Clone(counts), i, i+1, inner...)
	}
	for _, bc := range counts[:start] {
		offset -= bc.n
	}
	var page []history.Posting
	take := func(ls [][]byte) error {
		ps, err := listsPage(ls, pr.lo, pr.hi, offset, need-len(page))
		page = append(page, ps...)
		offset = 0
		return err
	}
	for i := start; i <= end; i++ {
		if ls, ok := edges[counts[i].bucket]; ok {
			if err := take(ls); err != nil {
				return nil, err
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
		got := early // the first bucket's, read with the counts
		if _, read := early[counts[i].bucket]; !read || i != j {
			var err error
			if got, err = pr.pageLists(ctx, counts[i].bucket, counts[j].bucket, offset+need-len(page)); err != nil {
				return nil, err
			}
		}
		for _, bc := range counts[i : j+1] {
			ls, ok := got[bc.bucket]
			if !ok {
				continue
			}
			ps, err := listsPage(ls.lists, pr.lo, pr.hi, offset, need-len(page))
			if err == nil && ls.cut && len(ps) < min(need-len(page), bc.n-offset) {
				// The starts of the lists hold fewer than the page takes
				// from the bucket: its whole lists.
				err = pr.lists(ctx, bc.bucket, bc.bucket, func(_ int64, whole [][]byte) error {
					ps, err = listsPage(whole, pr.lo, pr.hi, offset, need-len(page))
					return err
				})
			}
			if err != nil {
				return nil, err
			}
			page, offset = append(page, ps...), 0
		}
		i = j
	}
	return page, nil
}

// readLists are a bucket's lists as read: cut when they are the starts
// of the lists (history.WholeRuns), which hold their first entries.
type readLists struct {
	lists [][]byte
	cut   bool
}

// ListPrefixBytes is the bytes of a list's start read for each entry a
// page may need there: a hot contract's entries take ~3 (history's
// TestPostings), a sparse key's up to ~7. A read of that many holds them
// nearly always; when not, the bucket is read again whole (the tests make
// it small for that to happen). Past maxListPrefix the lists are read
// whole at once.
var ListPrefixBytes = 16

const maxListPrefix = 64 << 10

// pageLists reads the range's lists over the buckets first to last for a
// page that needs at most need of their entries from a bucket's start:
// the lists' starts alone, where the store reads those for less (a
// single key's, whose list is long when it is hot: PostgreSQL read the
// whole first bucket's list of a hot contract, ~90 KB, for a page of 50
// of its entries), else whole.
func (pr postingRange) pageLists(ctx context.Context, first, last int64, need int) (map[int64]readLists, error) {
	if q, out, ok := pr.prefixQuery(first, last, need); ok {
		return out, pr.r.c.Query(ctx, q.SQL, q.Args, q.Dest, q.Row)
	}
	out := map[int64]readLists{}
	err := pr.lists(ctx, first, last, func(b int64, ls [][]byte) error {
		out[b] = readLists{lists: ls}
		return nil
	})
	return out, err
}

// prefixQuery is pageLists' statement where the store reads the lists'
// starts alone, and the map its rows fill: ok false where the lists are
// read whole.
func (pr postingRange) prefixQuery(first, last int64, need int) (Query, map[int64]readLists, bool) {
	n := ListPrefixBytes*need + 512
	d := pr.r.Dialect
	if d.LogPostingsPrefix == nil || pr.kind == logKeyAddressTopic0 || len(pr.keys) != 1 || n > maxListPrefix {
		return Query{}, nil, false
	}
	out := map[int64]readLists{}
	var bucket int64
	var list []byte
	q, args := d.LogPostingsPrefix(pr.r.chain, pr.kind, pr.keys, first, last, n)
	return Query{SQL: q, Args: args, Dest: []any{&bucket, &list}, Row: func() error {
		l := list        // a copy of the row's (Conn)
		if len(l) >= n { // perhaps cut inside a run
			l = history.WholeRuns(l)
		}
		out[bucket] = readLists{lists: [][]byte{l}, cut: len(list) >= n}
		return nil
	}}, out, true
}

// pageCounts returns the first and the last of counts that hold the
// matches offset to offset+need-1 (start -1 when none does).
func pageCounts(counts []bucketCount, offset, need int) (start, end int) {
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
	return start, end
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
func (r reader) keepPostings(ctx context.Context, ps []history.Posting, m *logMatcher) error {
	var numbers []uint64
	for _, p := range ps {
		if len(numbers) == 0 || numbers[len(numbers)-1] != p.Block {
			numbers = append(numbers, p.Block)
		}
	}
	blocks, err := r.logBlocks(ctx, numbers)
	if err != nil {
		return err
	}
	for _, p := range ps {
		b := blocks[p.Block]
		if b == nil {
			return errHistoryMoved
		}
		if err := b.decode(ctx); err != nil {
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

// logKey names a list a write builds: its key is the first keyLen(kind)
// bytes of key. Its fields leave no padding, so that the map of
// postingLists hashes it as one run of bytes.
type logKey struct {
	bucket int64
	kind   int32
	key    [52]byte
}

// keyLen is the length of a key of kind.
func keyLen(kind int32) int {
	switch kind {
	case logKeyAddress:
		return len(chainquery.Address{})
	case logKeyTopic0:
		return len(chainquery.Hash{})
	}
	return len(chainquery.Address{}) + len(chainquery.Hash{})
}

// compareLogKeys orders lists as log_postings' key does (keys of one kind
// have one length).
func compareLogKeys(a, b *logKey) int {
	return cmp.Or(cmp.Compare(a.bucket, b.bucket), cmp.Compare(a.kind, b.kind), bytes.Compare(a.key[:], b.key[:]))
}

// logLists gathers the posting lists of the logs of the history blocks a
// write adds: an address's list with the topic0 of each entry beside it
// (history/topics.go), and a topic0's.
type logLists struct {
	postingLists[logKey]
	// an address's entries carry their topic0 in Tx (unused in a log's
	// place) as its index in topics plus one, 0 for none, until flush
	topicIDs map[chainquery.Hash]uint32
	topics   []chainquery.Hash
	groups   []history.TopicGroup
	scratch  []history.Posting
	// firsts holds the lowest block added of each bucket: a bucket added
	// from its first block has no rows yet (history grows upward, and a
	// bucket listed again is deleted first), so its rows are inserted
	// rather than upserted (flush).
	firsts map[int64]uint64
}

// LogPostings is the table of the log lists.
var LogPostings = Table{Name: "log_postings", Columns: []string{"chain", "kind", "key", "bucket", "n", "topics", "list", "tags"}}

// add adds the logs of block n, in log index order (canonical), to the
// lists, by their keys.
func (ls *logLists) add(n uint64, logs []logRef) {
	bucket := int64(n / LogBucketBlocks)
	if _, ok := ls.firsts[bucket]; !ok {
		if ls.firsts == nil {
			ls.firsts = map[int64]uint64{}
		}
		ls.firsts[bucket] = n
	}
	for i := range logs {
		l := &logs[i]
		p := history.Posting{Block: n, Pos: uint32(i)}
		k := logKey{bucket: bucket, kind: logKeyAddress}
		copy(k.key[:], l.addr[:])
		if l.hasTopic {
			p.Tx = ls.topicID(l.topic0)
		}
		ls.postingLists.add(k, p)
		if l.hasTopic {
			k = logKey{bucket: bucket, kind: logKeyTopic0}
			copy(k.key[:], l.topic0[:])
			ls.postingLists.add(k, history.Posting{Block: n, Pos: uint32(i)})
		}
	}
}

// topicID returns t's index in ls.topics plus one, adding it if need be.
func (ls *logLists) topicID(t chainquery.Hash) uint32 {
	id, ok := ls.topicIDs[t]
	if !ok {
		if ls.topicIDs == nil {
			ls.topicIDs = map[chainquery.Hash]uint32{}
		}
		ls.topics = append(ls.topics, t)
		id = uint32(len(ls.topics))
		ls.topicIDs[t] = id
	}
	return id
}

// splitEntries is the fewest entries of an address's part of a list (the
// logs a write adds to a bucket) whose (address, topic0) pairs get lists of
// their own (history/topics.go): "a busy token's rare event" filtered out
// of the token's list decoded every entry before the page's; that Filter
// Logs was three times slower than with the pair's list
// (docs/benchmarks.md, issue 30). The busiest fortieth of a bucket's
// addresses hold half its logs: their pairs cost about what their tags
// would.
const splitEntries = 64

// pairLists appends to pairs the rows of the lists of each (address,
// topic0) pair of an address's entries ps, whose Tx are topic ids (the
// logs without topics have none), their lists to slab, and clears the Tx.
func (ls *logLists) pairLists(slab []byte, pairs []BucketRow, k *logKey, ps []history.Posting) ([]byte, []BucketRow, error) {
	var ids []uint32 // in the order of their first entry
	for _, p := range ps {
		if p.Tx != 0 && !slices.Contains(ids, p.Tx) {
			ids = append(ids, p.Tx)
		}
	}
	one := ls.scratch[:0]
	for _, id := range ids {
		one = one[:0]
		for _, p := range ps {
			if p.Tx == id {
				one = append(one, history.Posting{Block: p.Block, Pos: p.Pos})
			}
		}
		start := len(slab)
		slab = append(slab, k.key[:len(chainquery.Address{})]...)
		slab = append(slab, ls.topics[id-1][:]...)
		key := slab[start:len(slab):len(slab)]
		start = len(slab)
		var err error
		if slab, err = history.AppendPostings(slab, one); err != nil {
			return nil, nil, err
		}
		pairs = append(pairs, BucketRow{Kind: logKeyAddressTopic0, Key: key, Bucket: k.bucket, N: int64(len(one)),
			List: slab[start:len(slab):len(slab)], Topics: []byte{}, Tags: []byte{}})
	}
	ls.scratch = one
	for i := range ps {
		ps[i].Tx = 0
	}
	return slab, pairs, nil
}

// tagTopics appends to topics the piece of an address's entries ps, whose
// Tx are topic ids, and to tags their tags, and clears their Tx.
func (ls *logLists) tagTopics(topics, tags []byte, ps []history.Posting) ([]byte, []byte) {
	gs := ls.groups[:0]
	for i := range ps {
		id := ps[i].Tx
		g := 0
		// an address emits few kinds of event: the groups are few
		for g < len(gs) && !(gs[g].Has == (id != 0) && (id == 0 || gs[g].Topic == ls.topics[id-1])) {
			g++
		}
		if g == len(gs) {
			tg := history.TopicGroup{Has: id != 0}
			if id != 0 {
				tg.Topic = ls.topics[id-1]
			}
			gs = append(gs, tg)
		}
		gs[g].N++
		tags = history.AppendTag(tags, g)
		ps[i].Tx = 0
	}
	ls.groups = gs
	return history.AppendTopicPiece(topics, gs), tags
}

// flush adds the lists to log_postings, in its key's order, and empties
// them.
func (ls *logLists) flush(ctx context.Context, b BlockBatch, chain int64) error {
	if len(ls.keys) == 0 {
		return nil
	}
	split, err := ls.splitRows(ctx, b, chain)
	if err != nil {
		return err
	}
	rows, err := ls.rows(ctx, b, chain, split)
	if err != nil {
		return err
	}
	// The rows of buckets begun here are new: on PostgreSQL a COPY writes
	// them at a fraction of an upsert's cost (its speculative insertion
	// logs each row twice, docs/benchmarks.md, issue 30, session 26).
	fresh := Table{Name: LogPostings.Name, Columns: LogPostings.Columns}
	more := rows[:0:0]
	for _, r := range rows {
		if ls.firsts[r.Bucket] == uint64(r.Bucket)*LogBucketBlocks {
			fresh.Values = append(fresh.Values, chain, r.Kind, r.Key, r.Bucket, r.N, r.Topics, r.List, r.Tags)
		} else {
			more = append(more, r)
		}
	}
	if len(fresh.Values) > 0 {
		err = b.Insert(ctx, []Table{fresh})
	}
	if err == nil && len(more) > 0 {
		err = b.AddLogPostings(ctx, more)
	}
	ls.reset()
	return err
}

// rows returns the rows of the lists, in log_postings' key order. split
// holds, for each bucket whose rows the lists continue, the addresses
// whose rows are split there (log_forms.go): their parts are split
// whatever their size, and a busy part of another address takes its row
// (takeAddress, through c) to be split with it; the parts of the other
// buckets are split when busy.
func (ls *logLists) rows(ctx context.Context, c Conn, chain int64, split map[int64]map[chainquery.Address]bool) ([]BucketRow, error) {
	order, at, grouped := ls.group(compareLogKeys)
	rows := make([]BucketRow, 0, len(order))
	slab := make([]byte, 0, 4*len(ls.entries)+2*len(order))
	var topics, tags []byte
	var pairs []BucketRow
	byPlace := func(x, y history.Posting) int { return cmp.Compare(x.Block, y.Block)*2 + cmp.Compare(x.Pos, y.Pos) }
	for j, i := range order {
		k := &ls.keys[i]
		ps := grouped[at[j]:at[j+1]]
		// A backfill reads its blocks in the database's order.
		if !slices.IsSortedFunc(ps, byPlace) {
			slices.SortFunc(ps, byPlace)
		}
		row := BucketRow{Kind: int(k.kind), Key: k.key[:keyLen(k.kind)], Bucket: k.bucket}
		splits := false
		if k.kind == logKeyAddress {
			continued, ok := split[k.bucket]
			isSplit := continued[chainquery.Address(row.Key)]
			splits = isSplit || len(ps) >= splitEntries
			if ok && splits && !isSplit {
				// a busy part of a row with groups, if there is one
				old, err := ls.takeAddress(ctx, c, chain, k.bucket, row.Key)
				if err != nil {
					return nil, err
				}
				if len(old) > 0 {
					ps = append(old, ps...)
					slices.SortFunc(ps, byPlace) // the row's entries are below the part's: kept in chain order whatever
				}
			}
		}
		row.N = int64(len(ps))
		var err error
		switch {
		case k.kind != logKeyAddress:
			row.Topics, row.Tags = []byte{}, []byte{}
		case splits:
			// a busy address's part: its pairs get lists of their own
			if slab, pairs, err = ls.pairLists(slab, pairs, k, ps); err != nil {
				return nil, err
			}
			t0 := len(topics)
			topics = history.AppendSplitPiece(topics, len(ps))
			row.Topics, row.Tags = topics[t0:len(topics):len(topics)], []byte{}
		default:
			t0, g0 := len(topics), len(tags)
			topics, tags = ls.tagTopics(topics, tags, ps)
			row.Topics, row.Tags = topics[t0:len(topics):len(topics)], tags[g0:len(tags):len(tags)]
		}
		start := len(slab)
		if slab, err = history.AppendPostings(slab, ps); err != nil {
			return nil, err
		}
		row.List = slab[start:len(slab):len(slab)]
		rows = append(rows, row)
	}
	if len(pairs) > 0 { // in the table's key order, the pairs (kind 2) after the rest of their bucket
		rows = append(rows, pairs...)
		slices.SortStableFunc(rows, func(a, b BucketRow) int {
			return cmp.Or(cmp.Compare(a.Bucket, b.Bucket), cmp.Compare(a.Kind, b.Kind), bytes.Compare(a.Key, b.Key))
		})
	}
	return rows, nil
}

// reset empties the lists, keeping their room.
func (ls *logLists) reset() {
	ls.postingLists.reset()
	clear(ls.topicIDs)
	clear(ls.firsts)
	ls.topics = ls.topics[:0]
}

// indexLogs writes the log postings of up to max buckets of chain's
// history below logs_from, from the top down, and lowers logs_from past
// them; it returns logs_from then.
func (s *Store) indexLogs(ctx context.Context, b BlockBatch, chain int64, max int) (int64, error) {
	from, err := s.reader(b, chain).logsFrom(ctx)
	if err != nil || from == 0 {
		return from, err
	}
	below, err := s.reader(b, chain).historyBelow(ctx)
	if err != nil {
		return 0, err
	}
	to, err := walkLogBuckets(ctx, b, chain, from, max, func(lo, _ int64) error {
		return s.listLogBucket(ctx, b, chain, lo, min(below, lo+LogBucketBlocks)-1)
	})
	if err == nil && to != from {
		_, err = b.Exec(ctx, qSetLogsFrom, chain, to)
	}
	return to, err
}

// walkLogBuckets calls visit for up to max buckets of LogBucketBlocks
// that hold chain's stored blocks below from, from the top down, with the
// bucket's start and the height it was reached from (from, then the
// previous bucket's start), and returns the start of the last one visited
// (0 once none is left below): the backfills of the log postings and of
// the log counts, which earlier releases' history lacks, go down so.
func walkLogBuckets(ctx context.Context, b BlockBatch, chain, from int64, max int, visit func(lo, top int64) error) (int64, error) {
	for i := 0; i < max && from > 0; i++ {
		var last *int64
		if _, err := queryRow(ctx, b, qLastBlockBelow, []any{chain, from}, &last); err != nil {
			return 0, err
		}
		if last == nil {
			return 0, nil
		}
		lo := *last / LogBucketBlocks * LogBucketBlocks
		if err := visit(lo, from); err != nil {
			return 0, err
		}
		from = lo
	}
	return from, nil
}

// eachLogSegment calls each with the number and log segment of every
// history block of chain from lo to hi that has one, in number order.
func (s *Store) eachLogSegment(ctx context.Context, b BlockBatch, chain, lo, hi int64, each func(n uint64, seg []byte) error) error {
	numbers := make([]uint64, 0, hi-lo+1)
	for n := lo; n <= hi; n++ {
		numbers = append(numbers, uint64(n))
	}
	var n int64
	var kind int
	var data []byte
	var st stamp
	q, args := s.Dialect.HistoryLogBlocks(chain, numbers)
	return b.Query(ctx, q, args, []any{&n, &st.timestamp, &st.version, &kind, &data}, func() error { return each(uint64(n), data) })
}

// listLogBucket writes anew the rows of log_postings of the bucket that
// starts at lo, from the log segments of its history blocks lo to hi
// (all of them: logs_from may lie inside the bucket, whose blocks above it
// are listed already, and a list's entries must be in chain order).
func (s *Store) listLogBucket(ctx context.Context, b BlockBatch, chain, lo, hi int64) error {
	var ls logLists
	err := s.eachLogSegment(ctx, b, chain, lo, hi, func(n uint64, seg []byte) error {
		logs, err := decodeSegment(ctx, s, seg, n, history.DecodeLogs)
		if err == nil {
			ls.add(n, logRefs(logs))
		}
		return err
	})
	if err != nil {
		return err
	}
	if _, err := b.Exec(ctx, qDeleteLogPostings, chain, lo/LogBucketBlocks); err != nil {
		return err
	}
	return ls.flush(ctx, b, chain)
}

// thawLogs keeps the log postings right when a thaw turns chain's history
// from lo (the start of a bucket of trace_counts) up back into rows, after
// it has deleted the rows of log_postings from lo's bucket up: that
// bucket's blocks below lo are listed again, when they were, and logs_from
// goes no higher than lo.
func (s *Store) thawLogs(ctx context.Context, b BlockBatch, chain, lo int64) error {
	from, err := s.reader(b, chain).logsFrom(ctx)
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
	_, err = b.Exec(ctx, qSetLogsFrom, chain, min(from, lo))
	return err
}

// IndexLogHistory writes the log postings (migration 0012) and the blocks'
// log counts (migration 0024) of up to buckets buckets of chain's history
// written before they existed, in one transaction, and returns how many
// heights of history are left without either, from the first stored block
// up: `chainquery migrate` calls it until it returns 0.
func (s *Store) IndexLogHistory(ctx context.Context, chain chainquery.Chain, buckets int) (left uint64, err error) {
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
	counted, err := s.countHistoryLogs(ctx, b, id, buckets)
	if err != nil {
		return 0, err
	}
	from = max(from, counted)
	var first *int64
	if _, err := queryRow(ctx, b, qFirstBlockFrom, []any{id, 0}, &first); err != nil {
		return 0, err
	}
	if first != nil && *first < from {
		left = uint64(from - *first)
	}
	return left, b.Commit(ctx)
}

// qLogsFrom: chain → logs_from, the lowest history block whose logs are
// in log_postings. qSetLogsFrom: chain, logs_from. qLastBlockBelow: chain,
// number → the highest stored block below number, NULL when there is
// none. qDeleteLogPostings: chain, bucket → deletes the bucket's rows of
// log_postings (a backfill writes them anew).
const (
	qLogsFrom          = `SELECT logs_from FROM history WHERE chain = $1`
	qSetLogsFrom       = `UPDATE history SET logs_from = $2 WHERE chain = $1`
	qLastBlockBelow    = `SELECT max(number) FROM blocks WHERE chain = $1 AND number < $2`
	qDeleteLogPostings = `DELETE FROM log_postings WHERE chain = $1 AND bucket = $2`
)
