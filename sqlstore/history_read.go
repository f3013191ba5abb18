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
// number, with their BlockNumber set; found is false when the block is not
// history.
func (s *SQLStore) historyTransactions(ctx context.Context, c StoreConn, chain int64, number uint64) (txs []*chainquery.Transaction, found bool, err error) {
	seg, err := s.historySegment(ctx, c, chain, number, segmentTransactions)
	if err != nil || seg == nil {
		return nil, false, err
	}
	txs, err = history.DecodeTransactions(seg, number)
	return txs, err == nil, err
}

// historyTxLogs finds the transaction hash in history (in block only, when
// given; else the highest block holding it) and returns it with its block's
// timestamp and logs; tx is nil when history has no such transaction.
func (s *SQLStore) historyTxLogs(ctx context.Context, c StoreConn, chain int64, hash chainquery.Hash, block *uint64) (tx *chainquery.Transaction, timestamp int64, logs []*chainquery.Log, err error) {
	var candidates []uint64
	var n int64
	err = c.Query(ctx, s.SQL.HistoryTxBlocks, []any{chain, HashPrefix(hash)}, []any{&n}, func() error {
		if block == nil || *block == uint64(n) {
			candidates = append(candidates, uint64(n))
		}
		return nil
	})
	if err != nil {
		return nil, 0, nil, err
	}
	for _, number := range candidates {
		txs, found, err := s.historyTransactions(ctx, c, chain, number)
		if err != nil {
			return nil, 0, nil, err
		}
		i := slices.IndexFunc(txs, func(t *chainquery.Transaction) bool { return t.Hash == hash })
		if !found || i < 0 {
			continue
		}
		stamp, err := s.blockStamps(ctx, c, chain, number, number)
		if err != nil {
			return nil, 0, nil, err
		}
		seg, err := s.historySegment(ctx, c, chain, number, segmentLogs)
		if err != nil || seg == nil {
			return nil, 0, nil, err
		}
		all, err := history.DecodeLogs(seg, number)
		if err != nil {
			return nil, 0, nil, err
		}
		for _, l := range all {
			if l.TransactionIndex == txs[i].Index {
				logs = append(logs, l)
			}
		}
		return txs[i], stamp[number].timestamp, logs, nil
	}
	return nil, 0, nil, nil
}

// stamp is what a read of history takes from a block's header.
type stamp struct {
	timestamp int64
	version   int
}

// blockStamps returns the timestamp and version of the blocks from lo to
// hi, by number.
func (s *SQLStore) blockStamps(ctx context.Context, c StoreConn, chain int64, lo, hi uint64) (map[uint64]stamp, error) {
	out := map[uint64]stamp{}
	var n int64
	var st stamp
	err := c.Query(ctx, s.SQL.BlockStamps, []any{chain, int64(lo), int64(hi)}, []any{&n, &st.timestamp, &st.version}, func() error {
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

// loadHistoryBlocks decodes the traces and transactions of the history
// blocks numbers, in one statement, and fills each trace's block and
// transaction fields.
func (s *SQLStore) loadHistoryBlocks(ctx context.Context, c StoreConn, chain int64, numbers []uint64) (map[uint64]*historyBlock, error) {
	type parts struct {
		st     stamp
		txs    []*chainquery.Transaction
		traces []*chainquery.Trace
	}
	if len(numbers) == 0 {
		return nil, nil
	}
	got := make(map[uint64]*parts, len(numbers))
	var n int64
	var kind int
	var data []byte
	var st stamp
	q, args := s.SQL.HistoryBlocks(chain, numbers)
	err := c.Query(ctx, q, args, []any{&n, &st.timestamp, &st.version, &kind, &data}, func() error {
		number := uint64(n)
		p := got[number]
		if p == nil {
			p = &parts{st: st}
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
	out := make(map[uint64]*historyBlock, len(numbers))
	for _, number := range numbers {
		p := got[number]
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
			t.Timestamp, t.Version = p.st.timestamp, p.st.version
			if len(t.TraceAddress) == 0 {
				t.TraceAddress = nil // as rows give it
			}
			t.TransactionHash, t.TransactionFrom, t.TransactionTo, t.TransactionStatus = x.Hash, x.From, x.To, x.Status
		}
		out[number] = hb
	}
	return out, nil
}

// errHistoryMoved is the error of a read that found a block neither in
// rows nor in history: a thaw or a rewind changed it between two
// statements that are not in one snapshot.
var errHistoryMoved = errors.New("a block moved between rows and history during the read; try again")

// historyMatches returns, in chain order, the postings of the plan's
// address filter in its range (which must lie in history): at most need
// of them when need >= 0, stopping there; with need < 0, every one.
func (s *SQLStore) historyMatches(ctx context.Context, c StoreConn, p *TracePlan, need int) ([]history.Posting, error) {
	first, last := p.Lo/TraceCountBlocks, p.Hi/TraceCountBlocks
	inRange := func(ps []history.Posting) []history.Posting {
		lo := slices.IndexFunc(ps, func(q history.Posting) bool { return q.Block >= uint64(p.Lo) })
		if lo < 0 {
			return nil
		}
		hi := slices.IndexFunc(ps[lo:], func(q history.Posting) bool { return q.Block > uint64(p.Hi) })
		if hi < 0 {
			return ps[lo:]
		}
		return ps[lo : lo+hi]
	}
	// lists reads the lists of addrs in dir, bucket by bucket, and hands
	// each bucket's to flush; flush returns errFound to stop.
	lists := func(dir int, addrs [][]byte, flush func(bucket int64, ls [][]history.Posting) error) error {
		q, args := s.SQL.HistoryPostings(p.Chain, dir, addrs, first, last)
		var bucket, cur int64 = 0, -1
		var addr, data []byte
		var pending [][]history.Posting
		err := c.Query(ctx, q, args, []any{&bucket, &addr, &data}, func() error {
			if bucket != cur && pending != nil {
				if err := flush(cur, pending); err != nil {
					return err
				}
				pending = nil
			}
			cur = bucket
			ps, err := history.DecodePostings(data)
			pending = append(pending, ps)
			return err
		})
		if err == nil && pending != nil {
			err = flush(cur, pending)
		}
		return err
	}
	var out []history.Posting
	if len(p.Also) == 0 {
		dir := p.Dir()
		err := lists(dir, p.Walk, func(_ int64, ls [][]history.Posting) error {
			out = append(out, inRange(history.Match(ls, nil))...)
			if need >= 0 && len(out) >= need {
				return errFound
			}
			return nil
		})
		if err != nil && !errors.Is(err, errFound) {
			return nil, err
		}
		if need >= 0 && len(out) > need {
			out = out[:need]
		}
		return out, nil
	}
	// A from+to filter: both sides' lists, matched bucket by bucket.
	fromAddrs, toAddrs := p.Walk, p.Also
	if !p.FromIndex {
		fromAddrs, toAddrs = p.Also, p.Walk
	}
	froms := map[int64][][]history.Posting{}
	err := lists(CountFrom, fromAddrs, func(b int64, ls [][]history.Posting) error { froms[b] = ls; return nil })
	if err != nil {
		return nil, err
	}
	err = lists(CountTo, toAddrs, func(b int64, ls [][]history.Posting) error {
		if f := froms[b]; f != nil {
			out = append(out, inRange(history.Match(f, ls))...)
		}
		if need >= 0 && len(out) >= need {
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, err
	}
	if need >= 0 && len(out) > need {
		out = out[:need]
	}
	return out, nil
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
					out = append(out, t)
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
		out = append(out, hb.traces[i])
	}
	return out, total, nil
}
