package sqlstore

import (
	"context"
	"errors"
	"slices"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// The reads of history (history.go): the same answers as the rows give,
// from the segments and the posting lists.

// historySegment returns the segment of kind of the history block number,
// or nil when the block has none (it is not history).
func (s *SQLStore) historySegment(ctx context.Context, c StoreConn, chain int64, number uint64, kind int) ([]byte, error) {
	var data []byte
	found, err := queryRow(ctx, c, s.SQL.HistorySegment, []any{chain, int64(number), kind}, &data)
	if err != nil || !found {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// historyTransactions returns the transactions of the history block
// number at version, shared (callers copy what they change); found is
// false when the block is not history.
func (s *SQLStore) historyTransactions(ctx context.Context, c StoreConn, chain int64, number uint64, version int) ([]*chainquery.Transaction, bool, error) {
	return cachedSegment(ctx, s, c, decodedKey{chain, number, version, segmentTransactions}, history.DecodeTransactions, txsSize)
}

// historyLogs returns the logs of the history block number at version,
// shared as historyTransactions' are.
func (s *SQLStore) historyLogs(ctx context.Context, c StoreConn, chain int64, number uint64, version int) ([]*chainquery.Log, bool, error) {
	return cachedSegment(ctx, s, c, decodedKey{chain, number, version, segmentLogs}, history.DecodeLogs, logsSize)
}

// cachedSegment returns the decoded segment k names: from the cache, else
// read, decoded with decode and kept. found is false when the block has no
// such segment (it is not history).
func cachedSegment[T any](ctx context.Context, s *SQLStore, c StoreConn, k decodedKey, decode func([]byte, uint64) (T, error), size func(T) int64) (v T, found bool, err error) {
	if cached, ok := s.decoded.get(k); ok {
		return cached.(T), true, nil
	}
	seg, err := s.historySegment(ctx, c, k.chain, k.number, k.kind)
	if err != nil || seg == nil {
		return v, false, err
	}
	if v, err = decode(seg, k.number); err != nil {
		return v, false, err
	}
	s.decoded.put(k, v, size(v))
	return v, true, nil
}

// historyTx finds the transaction hash in history (in block only, when
// given; else the highest block holding it) and returns a copy of it, its
// Timestamp set, with its block's stamp; tx is nil when history has no
// such transaction.
func (s *SQLStore) historyTx(ctx context.Context, c StoreConn, chain int64, hash chainquery.Hash, block *uint64) (tx *chainquery.Transaction, st stamp, err error) {
	var candidates []uint64
	var n int64
	err = c.Query(ctx, s.SQL.HistoryTxBlocks, []any{chain, HashPrefix(hash)}, []any{&n}, func() error {
		if block == nil || *block == uint64(n) {
			candidates = append(candidates, uint64(n))
		}
		return nil
	})
	if err != nil || len(candidates) == 0 {
		return nil, st, err
	}
	stamps, err := s.historyStamps(ctx, c, chain, candidates)
	if err != nil {
		return nil, st, err
	}
	for _, number := range candidates {
		st, ok := stamps[number]
		if !ok {
			continue
		}
		txs, found, err := s.historyTransactions(ctx, c, chain, number, st.version)
		if err != nil {
			return nil, st, err
		}
		i := slices.IndexFunc(txs, func(t *chainquery.Transaction) bool { return t.Hash == hash })
		if !found || i < 0 {
			continue
		}
		t := *txs[i]
		t.Timestamp = st.timestamp
		return &t, st, nil
	}
	return nil, st, nil
}

// historyTxLogs finds the transaction hash in history as historyTx does
// and returns copies of it and its logs; tx is nil when history has no
// such transaction.
func (s *SQLStore) historyTxLogs(ctx context.Context, c StoreConn, chain int64, hash chainquery.Hash, block *uint64) (tx *chainquery.Transaction, logs []*chainquery.Log, err error) {
	tx, st, err := s.historyTx(ctx, c, chain, hash, block)
	if err != nil || tx == nil {
		return nil, nil, err
	}
	all, found, err := s.historyLogs(ctx, c, chain, tx.BlockNumber, st.version)
	if err != nil || !found {
		return nil, nil, err
	}
	for _, l := range all {
		if l.TransactionIndex == tx.Index {
			row := *l
			logs = append(logs, &row)
		}
	}
	return tx, logs, nil
}

// stamp is what a read of history takes from a block's header.
type stamp struct {
	timestamp int64
	version   int
}

// historyStamps returns the timestamp and version of the stored blocks
// among numbers, by number.
func (s *SQLStore) historyStamps(ctx context.Context, c StoreConn, chain int64, numbers []uint64) (map[uint64]stamp, error) {
	out := make(map[uint64]stamp, len(numbers))
	var n int64
	var st stamp
	q, args := s.SQL.HistoryStamps(chain, numbers)
	err := c.Query(ctx, q, args, []any{&n, &st.timestamp, &st.version}, func() error {
		out[uint64(n)] = st
		return nil
	})
	return out, err
}

// historyBlock is a history block's traces as a page of Filter Traces
// needs them: each filled with its block's and transaction's fields.
type historyBlock struct {
	traces []*chainquery.Trace
	first  map[int]int // the index in traces of each transaction's first trace
}

// loadHistoryBlocks returns the traces of the history blocks numbers,
// shared (callers copy what they return), each with its block's and
// transaction's fields: from the cache, else decoded from their segments,
// read in one statement.
func (s *SQLStore) loadHistoryBlocks(ctx context.Context, c StoreConn, chain int64, numbers []uint64) (map[uint64]*historyBlock, error) {
	if len(numbers) == 0 {
		return nil, nil
	}
	stamps, err := s.historyStamps(ctx, c, chain, numbers)
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]*historyBlock, len(numbers))
	var missing []uint64
	for _, number := range numbers {
		st, ok := stamps[number]
		if !ok {
			return nil, errHistoryMoved
		}
		if v, ok := s.decoded.get(decodedKey{chain, number, st.version, segmentTraces}); ok {
			out[number] = v.(*historyBlock)
		} else {
			missing = append(missing, number)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	type parts struct {
		txs    []*chainquery.Transaction
		traces []*chainquery.Trace
	}
	got := make(map[uint64]*parts, len(missing))
	var n int64
	var kind int
	var data []byte
	var st stamp
	q, args := s.SQL.HistoryBlocks(chain, missing)
	err = c.Query(ctx, q, args, []any{&n, &st.timestamp, &st.version, &kind, &data}, func() error {
		number := uint64(n)
		if st != stamps[number] {
			return errHistoryMoved
		}
		p := got[number]
		if p == nil {
			p = &parts{}
			got[number] = p
		}
		var err error
		switch kind {
		case segmentTransactions:
			p.txs, err = history.DecodeTransactions(data, number)
		case segmentTraces:
			p.traces, err = history.DecodeTraces(data, number)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, number := range missing {
		p, st := got[number], stamps[number]
		if p == nil || p.txs == nil && len(p.traces) > 0 {
			return nil, errHistoryMoved
		}
		byIndex := make(map[int]*chainquery.Transaction, len(p.txs))
		for _, t := range p.txs {
			byIndex[t.Index] = t
		}
		hb := &historyBlock{traces: p.traces, first: map[int]int{}}
		for i, t := range p.traces {
			x := byIndex[t.TransactionIndex]
			if x == nil {
				return nil, history.ErrCorrupt
			}
			if _, ok := hb.first[t.TransactionIndex]; !ok {
				hb.first[t.TransactionIndex] = i
			}
			t.Timestamp, t.Version = st.timestamp, st.version
			if len(t.TraceAddress) == 0 {
				t.TraceAddress = nil // as rows give it
			}
			t.TransactionHash, t.TransactionFrom, t.TransactionTo, t.TransactionStatus = x.Hash, x.From, x.To, x.Status
		}
		s.decoded.put(decodedKey{chain, number, st.version, segmentTraces}, hb, tracesSize(hb.traces))
		out[number] = hb
	}
	return out, nil
}

// errHistoryMoved is the error of a read that found a block neither in
// rows nor in history: a thaw or a rewind changed it between two
// statements that are not in one snapshot.
var errHistoryMoved = errors.New("a block moved between rows and history during the read; try again")

// historyLists reads the posting lists of addrs in direction dir over the
// buckets of the plan's range, bucket by bucket, and hands each bucket's
// lists, undecoded, to each; each returns errFound to stop, which
// historyLists does not return.
func (s *SQLStore) historyLists(ctx context.Context, c StoreConn, p *TracePlan, dir int, addrs [][]byte, each func(bucket int64, lists [][]byte) error) error {
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
	q, args := s.SQL.HistoryPostings(p.Chain, dir, addrs, first, last)
	var bucket, cur int64 = 0, -1
	var addr, data []byte
	var pending [][]byte
	read := map[int64][][]byte{}
	err := c.Query(ctx, q, args, []any{&bucket, &addr, &data}, func() error {
		if bucket != cur && pending != nil {
			read[cur] = pending
			if err := each(cur, pending); err != nil {
				return err
			}
			pending = nil
		}
		cur = bucket
		pending = append(pending, data)
		return nil
	})
	done := last // the buckets read whole: every one, unless each stopped the walk at cur
	if err == nil && pending != nil {
		read[cur] = pending
		err = each(cur, pending)
	} else if errors.Is(err, errFound) {
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

// listCache keeps the posting lists one request has read, by bucket, for
// the request's later walks of the same addresses: the count's walks of
// the partial buckets at the range's ends read the lists the page then
// starts in (a hot contract's are ~20 KB a bucket, read three times a
// request before). Only short stretches are kept, so that a walk over a
// long range holds no more than one bucket's lists at a time.
type listCache struct {
	key    string
	lo, hi int64 // the buckets read whole; none when hi < lo
	lists  map[int64][][]byte
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
func (s *SQLStore) historyCount(ctx context.Context, c StoreConn, p *TracePlan) (int, error) {
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
func (s *SQLStore) historyMatches(ctx context.Context, c StoreConn, p *TracePlan, need int) ([]history.Posting, error) {
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
func (s *SQLStore) historyTracePage(ctx context.Context, c StoreConn, p *TracePlan) ([]*chainquery.Trace, int, error) {
	need := p.Page.Offset + p.Page.Limit
	out := []*chainquery.Trace{}
	if len(p.Walk) == 0 {
		// Every trace: the blocks in order by their trace counts, decoded
		// only where the page is.
		var n int64
		var count int
		var blocks []uint64
		seen, offset := 0, p.Page.Offset
		err := c.Query(ctx, s.SQL.BlockTraceCounts, []any{p.Chain, p.Lo, p.Hi}, []any{&n, &count}, func() error {
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
		loaded, err := s.loadHistoryBlocks(ctx, c, p.Chain, blocks)
		if err != nil {
			return nil, 0, err
		}
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
	blocks, err := s.loadHistoryBlocks(ctx, c, p.Chain, numbers)
	if err != nil {
		return nil, 0, err
	}
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
