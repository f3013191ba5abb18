package sqlstore

import (
	"context"
	"fmt"

	"github.com/chainquery/chainquery"
)

// The reads of one transaction by its hash (Get Transaction, its receipt,
// its traces) and of one block's logs: SQLStore's TransactionService. Each
// looks in the rows first and then in history, in one read transaction, as
// FindTransactionLogs does.

// FindTransaction returns the transaction hash names (TransactionService).
func (s *SQLStore) FindTransaction(ctx context.Context, f chainquery.TransactionFilter) (*chainquery.Transaction, error) {
	tx, id, err := s.chainTx(ctx, f.Chain)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	found, err := s.findTransaction(ctx, tx, id, f)
	return found.Transaction, err
}

// foundTx is a transaction findTransaction found, with its block's version
// and whether the block is history (else rows).
type foundTx struct {
	*chainquery.Transaction
	version int
	history bool
}

// findTransaction finds f's transaction in the rows, else in history;
// ENOTFOUND when it is in neither.
func (s *SQLStore) findTransaction(ctx context.Context, c StoreConn, chain int64, f chainquery.TransactionFilter) (foundTx, error) {
	var t chainquery.Transaction
	var version int
	sc := s.txScan(new(scan).counter(&t.BlockNumber).to(&t.Timestamp, &version), &t)
	q, args := s.SQL.Transaction(chain, f.TransactionHash, f.BlockNumber)
	if found, err := queryRow(ctx, c, q, args, sc.dest...); err != nil {
		return foundTx{}, err
	} else if found {
		return foundTx{&t, version, false}, sc.done()
	}
	h, st, err := s.historyTx(ctx, c, chain, f.TransactionHash, f.BlockNumber)
	if err != nil {
		return foundTx{}, err
	} else if h == nil {
		where := ""
		if f.BlockNumber != nil {
			where = fmt.Sprintf(" in block %d", *f.BlockNumber)
		}
		return foundTx{}, chainquery.Errorf(chainquery.ENOTFOUND, "transaction %s is not indexed on %s%s", f.TransactionHash.Hex(), f.Chain, where)
	}
	return foundTx{h, st.version, true}, nil
}

// FindTransactionTraces returns one page of the transaction's traces and
// their count (TransactionService). From rows, the count and the page are
// two statements on the primary key of traces; from history, the block's
// traces segment is decoded (or found in the cache) and the transaction's
// run of it paged.
func (s *SQLStore) FindTransactionTraces(ctx context.Context, f chainquery.TransactionFilter) ([]*chainquery.Trace, int, error) {
	tx, id, err := s.chainTx(ctx, f.Chain)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	found, err := s.findTransaction(ctx, tx, id, f)
	if err != nil {
		return nil, 0, err
	}
	t := found.Transaction
	if !f.MinTime.IsZero() && t.Timestamp < f.MinTime.Unix() {
		return []*chainquery.Trace{}, 0, nil // before the chain's trace history
	}
	if found.history {
		return s.historyTransactionTraces(ctx, tx, id, t, f.Page)
	}
	args := []any{id, int64(t.BlockNumber), t.Index}
	var count int
	if _, err := queryRow(ctx, tx, s.SQL.TransactionTraceCount, args, &count); err != nil {
		return nil, 0, err
	}
	out := []*chainquery.Trace{}
	if f.Offset >= count { // none past the end, and none for a block stored without traces
		return out, count, nil
	}
	var tr chainquery.Trace
	sc := s.traceRowScan(&tr)
	err = tx.Query(ctx, s.SQL.TransactionTraces, append(args, f.Limit, f.Offset), sc.dest, sc.each(func() error {
		row := tr
		row.Timestamp, row.Version = t.Timestamp, found.version
		row.TransactionHash, row.TransactionFrom, row.TransactionTo, row.TransactionStatus = t.Hash, t.From, t.To, t.Status
		out = append(out, &row)
		return nil
	}))
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// historyTransactionTraces returns the page of t's traces and their count
// from its history block's traces: none when the block was stored without
// traces.
func (s *SQLStore) historyTransactionTraces(ctx context.Context, c StoreConn, chain int64, t *chainquery.Transaction, page chainquery.Page) ([]*chainquery.Trace, int, error) {
	out := []*chainquery.Trace{}
	blocks, err := s.loadHistoryBlocks(ctx, c, chain, []uint64{t.BlockNumber})
	if err != nil {
		return nil, 0, err
	}
	hb := blocks[t.BlockNumber]
	first, ok := hb.first[t.Index]
	if !ok {
		return out, 0, nil
	}
	end := first
	for end < len(hb.traces) && hb.traces[end].TransactionIndex == t.Index {
		end++
	}
	run := hb.traces[first:end]
	for _, tr := range run[min(page.Offset, len(run)):min(page.Offset+page.Limit, len(run))] {
		row := *tr
		out = append(out, &row)
	}
	return out, len(run), nil
}

// FindBlockLogs returns one page of the block's logs and its log count
// (TransactionService): from rows, a count and a page of logs joined to
// their transactions; from history, the block's logs and transactions
// segments (or the cache).
func (s *SQLStore) FindBlockLogs(ctx context.Context, f chainquery.BlockLogFilter) ([]*chainquery.Log, int, error) {
	tx, id, err := s.chainTx(ctx, f.Chain)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	var timestamp int64
	var version, count int
	args := []any{id, int64(f.BlockNumber)}
	if found, err := queryRow(ctx, tx, s.SQL.BlockLogCount, args, &timestamp, &version, &count); err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", f.BlockNumber)
	}
	out := []*chainquery.Log{}
	if count == 0 {
		return s.historyBlockLogs(ctx, tx, id, f, timestamp, version)
	}
	if f.Offset >= count {
		return out, count, nil
	}
	l := chainquery.Log{BlockNumber: f.BlockNumber, Timestamp: timestamp}
	sc := new(scan).to(&l.TransactionIndex).fixed(l.TransactionHash[:]).fixed(l.TransactionFrom[:]).address(&l.TransactionTo)
	logScan(sc, &l)
	out, err = queryRows(ctx, tx, s.SQL.BlockLogPage, append(args, f.Limit, f.Offset), sc, &l)
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// historyBlockLogs returns the page of f's block's logs and their count
// from history: none when the block is not history (its rows hold no
// log).
func (s *SQLStore) historyBlockLogs(ctx context.Context, c StoreConn, chain int64, f chainquery.BlockLogFilter, timestamp int64, version int) ([]*chainquery.Log, int, error) {
	out := []*chainquery.Log{}
	logs, found, err := s.historyLogs(ctx, c, chain, f.BlockNumber, version)
	if err != nil || !found || len(logs) == 0 {
		return out, 0, err
	}
	txs, found, err := s.historyTransactions(ctx, c, chain, f.BlockNumber, version)
	if err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, errHistoryMoved
	}
	byIndex := make(map[int]*chainquery.Transaction, len(txs))
	for _, t := range txs {
		byIndex[t.Index] = t
	}
	for _, l := range logs[min(f.Offset, len(logs)):min(f.Offset+f.Limit, len(logs))] {
		t := byIndex[l.TransactionIndex]
		if t == nil {
			return nil, 0, fmt.Errorf("block %d: a log of transaction %d, which history does not hold", f.BlockNumber, l.TransactionIndex)
		}
		row := *l
		row.Timestamp, row.TransactionHash, row.TransactionFrom, row.TransactionTo = timestamp, t.Hash, t.From, t.To
		if len(row.Topics) == 0 {
			row.Topics = nil // as rows give it
		}
		out = append(out, &row)
	}
	return out, len(logs), nil
}
