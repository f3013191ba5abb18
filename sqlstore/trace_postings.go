package sqlstore

import (
	"context"
	"errors"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// historyLists reads the posting lists of addrs in direction dir over the
// buckets of the plan's range from their pages, bucket by bucket, and
// hands each bucket's lists, undecoded, to each; each returns errFound to stop, which
// historyLists does not return.
func (s *Store) historyLists(ctx context.Context, c Conn, p *TracePlan, dir int, addrs [][]byte, each func(bucket int64, lists [][]byte) error) error {
	first, last := p.Lo/TraceCountBlocks, p.Hi/TraceCountBlocks
	if cached, ok := p.lists.get(dir, addrs, first, last); ok {
		for b := first; b <= last; b++ {
			if ls := cached[b]; ls != nil {
				if err := each(b, ls); errors.Is(err, errFound) {
					return nil
				} else if err != nil {
					return err
				}
			}
		}
		return nil
	}
	read := map[int64][][]byte{}
	var cur int64 = -1
	visit := func(bucket int64, found []history.PageEntry) error {
		cur = bucket
		lists := make([][]byte, len(found))
		for i, e := range found {
			lists[i] = e.List
		}
		read[bucket] = lists
		return each(bucket, lists)
	}
	// The rest of a stretch of the key first (and at least the buckets a
	// listCache keeps: a 100-block range's two in one statement), then
	// twice as many each time: a page over all of a long history most
	// often ends in its first bucket, and a statement naming its every
	// stretch (12,000 over 1,200,000 heights) cost more than the rest of
	// the request.
	var err error
	for lo, width := first, int64(TracePageEpoch); lo <= last && err == nil; width = min(2*width, maxPageWalk) {
		hi := min(last, max(lo/TracePageEpoch*TracePageEpoch+width-1, lo+listCacheBuckets-1))
		err = s.readPagesKept(ctx, c, p, dir, addrs, lo, hi, visit)
		lo = hi + 1
	}
	done := last // the buckets read whole: every one, unless each stopped the walk at cur
	if errors.Is(err, errFound) {
		done = cur
	}
	if err == nil || errors.Is(err, errFound) {
		p.lists.put(dir, addrs, first, done, read)
	}
	if errors.Is(err, errFound) {
		return nil
	}
	return err
}

// maxPageWalk is the most buckets of pages one statement of historyLists
// reads: a hundred stretches of trace_pages_key.
const maxPageWalk = 100 * TracePageEpoch

// listCache keeps the posting lists one request has read, by bucket, for
// the request's later walks of the same addresses: the count's walks of
// the partial buckets at the range's ends read the lists the page then
// starts in, which a request otherwise read three times. Only short stretches are kept, so that a walk over a
// long range holds no more than one bucket's lists at a time.
type listCache struct {
	key    string
	lo, hi int64 // the buckets read whole; none when hi < lo
	lists  map[int64][][]byte

	// The epochs' totals of the walks keyed epochKey over the epochs eLo
	// to eHi (epochs, those not zero): the count and the walk that places
	// the page read them once.
	epochKey string
	eLo, eHi int64
	epochs   map[int64]int64
}

// epochSums calls each, in epoch order, with the total of p's walks in
// each epoch from first to last that has some (epochSums), read once a
// request for the widest stretch asked first.
func (c *listCache) epochSums(ctx context.Context, tx Conn, p *TracePlan, first, last int64, each func(epoch, n int64) error) error {
	if c == nil {
		return epochSums(ctx, tx, p.Chain, p.Dir(), p.Walk, history.AddrBytes, first, last, each)
	}
	if key := listKey(p.Dir(), p.Walk); c.epochKey != key || first < c.eLo || last > c.eHi {
		sums, err := readEpochSums(ctx, tx, p.Chain, p.Dir(), p.Walk, history.AddrBytes, first, last)
		if err != nil {
			return err
		}
		c.epochKey, c.eLo, c.eHi, c.epochs = key, first, last, sums
	}
	return eachEpoch(c.epochs, first, last, each)
}

// listCacheBuckets is the longest stretch of buckets a listCache keeps.
const listCacheBuckets = 4

func listKey(dir int, addrs [][]byte) string {
	var b []byte
	b = append(b, byte(dir))
	for _, a := range addrs {
		b = append(b, a...)
	}
	return string(b)
}

// get returns the lists of buckets first to last when they were all read.
func (c *listCache) get(dir int, addrs [][]byte, first, last int64) (map[int64][][]byte, bool) {
	if c == nil || c.key != listKey(dir, addrs) || first < c.lo || last > c.hi {
		return nil, false
	}
	return c.lists, true
}

// put keeps the lists of buckets first to last, all read, joined to what it
// holds when the stretches touch.
func (c *listCache) put(dir int, addrs [][]byte, first, last int64, lists map[int64][][]byte) {
	if c == nil || last < first {
		return
	}
	key := listKey(dir, addrs)
	if c.key == key && c.hi >= c.lo && first <= c.hi+1 && last >= c.lo-1 && max(last, c.hi)-min(first, c.lo) < listCacheBuckets {
		for b, ls := range lists {
			c.lists[b] = ls
		}
		c.lo, c.hi = min(first, c.lo), max(last, c.hi)
		return
	}
	if last-first >= listCacheBuckets {
		return
	}
	c.key, c.lo, c.hi, c.lists = key, first, last, lists
}

// inRange returns the postings of list, in chain order, in the plan's
// range, at most need of them when need >= 0, reading no further.
func inRange(p *TracePlan, list []byte, need int, out []history.Posting) ([]history.Posting, error) {
	r := history.NewPostingReader(list)
	r.SkipBefore(uint64(p.Lo))
	for q, ok := r.Next(); ok && (need < 0 || len(out) < need); q, ok = r.Next() {
		if q.Block > uint64(p.Hi) {
			break
		}
		if q.Block >= uint64(p.Lo) {
			out = append(out, q)
		}
	}
	return out, r.Err()
}

// historyCount returns the number of the plan's matches in its range,
// which must lie in history: a single address's lists, or several's of one
// direction (which never share a trace), are counted by their runs'
// headers, decoding only the runs at the range's ends.
func (s *Store) historyCount(ctx context.Context, c Conn, p *TracePlan) (int, error) {
	if len(p.Also) > 0 {
		ms, err := s.historyMatches(ctx, c, p, -1)
		return len(ms), err
	}
	count := 0
	err := s.historyLists(ctx, c, p, p.Dir(), p.Walk, func(_ int64, lists [][]byte) error {
		for _, list := range lists {
			n, err := history.CountPostings(list, uint64(p.Lo), uint64(p.Hi))
			if err != nil {
				return err
			}
			count += n
		}
		return nil
	})
	return count, err
}

// historyMatches returns, in chain order, the postings of the plan's
// address filter in its range (which must lie in history): at most need
// of them when need >= 0, stopping there; with need < 0, every one.
func (s *Store) historyMatches(ctx context.Context, c Conn, p *TracePlan, need int) ([]history.Posting, error) {
	var out []history.Posting
	decoded := func(lists [][]byte) ([][]history.Posting, error) {
		ls := make([][]history.Posting, len(lists))
		for i, list := range lists {
			var err error
			if ls[i], err = inRange(p, list, -1, nil); err != nil {
				return nil, err
			}
		}
		return ls, nil
	}
	enough := func() error {
		if need >= 0 && len(out) >= need {
			out = out[:need]
			return errFound
		}
		return nil
	}
	if len(p.Also) == 0 {
		err := s.historyLists(ctx, c, p, p.Dir(), p.Walk, func(_ int64, lists [][]byte) error {
			var err error
			if len(lists) == 1 { // one address: its list in order, read as far as needed
				out, err = inRange(p, lists[0], need, out)
			} else {
				var ls [][]history.Posting
				if ls, err = decoded(lists); err == nil {
					out = append(out, history.Match(ls, nil)...)
				}
			}
			if err != nil {
				return err
			}
			return enough()
		})
		return out, err
	}
	// A from+to filter: both sides' lists, matched bucket by bucket.
	fromAddrs, toAddrs := p.Walk, p.Also
	if !p.FromIndex {
		fromAddrs, toAddrs = p.Also, p.Walk
	}
	froms := map[int64][][]history.Posting{}
	err := s.historyLists(ctx, c, p, CountFrom, fromAddrs, func(b int64, lists [][]byte) error {
		var err error
		froms[b], err = decoded(lists)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = s.historyLists(ctx, c, p, CountTo, toAddrs, func(b int64, lists [][]byte) error {
		if f := froms[b]; f != nil {
			ls, err := decoded(lists)
			if err != nil {
				return err
			}
			out = append(out, history.Match(f, ls)...)
		}
		return enough()
	})
	return out, err
}

// historyTracePage returns the page of the plan, whose range lies in
// history, and the number of matches in its range when the range holds
// fewer than offset+limit of them (else -1): what a page that goes on
// into the rows must skip.
func (s *Store) historyTracePage(ctx context.Context, c Conn, p *TracePlan) ([]*chainquery.Trace, int, error) {
	if len(p.Walk) == 0 {
		return s.historyTracePageAll(ctx, c, p)
	}
	need := p.Page.Offset + p.Page.Limit
	matches, err := s.historyMatches(ctx, c, p, need)
	if err != nil {
		return nil, 0, err
	}
	total := -1
	if len(matches) < need {
		total = len(matches)
	}
	page := history.Page(matches, p.Page.Offset, p.Page.Limit)
	var numbers []uint64
	for _, m := range page {
		if len(numbers) == 0 || numbers[len(numbers)-1] != m.Block {
			numbers = append(numbers, m.Block)
		}
	}
	blocks, err := s.reader(c, p.Chain).loadHistoryBlocks(ctx, numbers)
	if err != nil {
		return nil, 0, err
	}
	out := []*chainquery.Trace{}
	for _, m := range page {
		hb := blocks[m.Block]
		first, ok := hb.first[int(m.Tx)]
		i := first + int(m.Pos)
		if !ok || i >= len(hb.traces) || hb.traces[i].TransactionIndex != int(m.Tx) {
			return nil, 0, history.ErrCorrupt
		}
		row := *hb.traces[i]
		out = append(out, &row)
	}
	return out, total, nil
}

// historyTracePageAll is historyTracePage without addresses, every trace:
// the blocks in order by their trace counts, decoded only where the page
// is.
func (s *Store) historyTracePageAll(ctx context.Context, c Conn, p *TracePlan) ([]*chainquery.Trace, int, error) {
	need := p.Page.Offset + p.Page.Limit
	var n int64
	var count int
	var blocks []uint64
	seen, offset := 0, p.Page.Offset
	err := c.Query(ctx, qBlockTraceCounts, []any{p.Chain, p.Lo, p.Hi}, []any{&n, &count}, func() error {
		seen += count
		if len(blocks) == 0 && count <= offset {
			offset -= count
			return nil
		}
		if count > 0 {
			blocks = append(blocks, uint64(n))
		}
		if seen >= need {
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, 0, err
	}
	loaded, err := s.reader(c, p.Chain).loadHistoryBlocks(ctx, blocks)
	if err != nil {
		return nil, 0, err
	}
	out := []*chainquery.Trace{}
	for _, number := range blocks {
		for _, t := range loaded[number].traces {
			if offset > 0 {
				offset--
				continue
			}
			if len(out) < p.Page.Limit {
				row := *t
				out = append(out, &row)
			}
		}
	}
	if seen < need {
		return out, seen, nil
	}
	return out, -1, nil
}
