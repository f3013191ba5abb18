package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/chainquery/chainquery"
)

// FindTransactionLogs returns one page of the transaction's logs in
// log_index order and its log count. It returns ENOTFOUND if the
// transaction is not indexed (in f.BlockNumber, when given).
//
// Where the dialect has LogTransactionPage, one statement answers unless the
// page is empty, as in FindBlockReceipts; otherwise, and for an empty page,
// the transaction and then its page are read in one read transaction.
func (s *Store) FindTransactionLogs(ctx context.Context, f chainquery.LogFilter) ([]*chainquery.Log, int, error) {
	id, err := storeChainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	l := chainquery.Log{TransactionHash: f.TransactionHash}
	var count int
	var head, page scan
	head.counter(&l.BlockNumber).to(&l.TransactionIndex).fixed(l.TransactionFrom[:]).address(&l.TransactionTo).
		to(&count, &l.Timestamp)
	logScan(&page, &l)
	if s.Dialect.LogTransactionPage != nil {
		both := scan{dest: slices.Concat(head.dest, page.dest), post: slices.Concat(head.post, page.post)}
		q, args := s.Dialect.LogTransactionPage(id, f.TransactionHash, f.BlockNumber, f.Limit, f.Offset)
		if out, err := queryRows(ctx, s.Read, q, args, &both, &l); err != nil || len(out) > 0 {
			return out, count, err
		}
	}

	tx, err := s.ReadTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	q, args := s.Dialect.LogTransaction(id, f.TransactionHash, f.BlockNumber)
	r := s.reader(tx, id)
	if found, blocks, err := r.rowsThenRuns(ctx, Query{SQL: q, Args: args, Dest: head.dest}, f.TransactionHash, f.BlockNumber); err != nil {
		return nil, 0, err
	} else if !found {
		if out, count, err := r.historyLogPage(ctx, f, blocks); err != nil || out != nil {
			return out, count, err
		}
		where := ""
		if f.BlockNumber != nil {
			where = fmt.Sprintf(" in block %d", *f.BlockNumber)
		}
		return nil, 0, chainquery.Errorf(chainquery.ENOTFOUND, "transaction %s is not indexed on %s%s", f.TransactionHash.Hex(), f.Chain, where)
	}
	if err := head.done(); err != nil {
		return nil, 0, err
	}
	args = []any{id, int64(l.BlockNumber), l.TransactionIndex, f.Limit, f.Offset}
	out, err := queryRows(ctx, tx, qLogPage, args, &page, &l)
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// historyLogPage returns the page of f's logs when its transaction is in
// history, in one of the candidate blocks the hash index gave; nil when
// it is not there either.
func (r reader) historyLogPage(ctx context.Context, f chainquery.LogFilter, candidates []uint64) ([]*chainquery.Log, int, error) {
	t, logs, err := r.historyTxLogs(ctx, f.TransactionHash, candidates)
	if err != nil || t == nil {
		return nil, 0, err
	}
	out := []*chainquery.Log{}
	for _, l := range logs[min(f.Offset, len(logs)):min(f.Offset+f.Limit, len(logs))] {
		l.Timestamp, l.TransactionHash, l.TransactionFrom, l.TransactionTo = t.Timestamp, t.Hash, t.From, t.To
		if len(l.Topics) == 0 {
			l.Topics = nil // as rows give it
		}
		out = append(out, l)
	}
	return out, t.LogCount, nil
}

// FindBlockLogs returns one page of the block's logs and its log count
// (TransactionService): from rows, a count and a page of logs joined to
// their transactions; from history, the block's logs and transactions
// segments (or the cache).
func (s *Store) FindBlockLogs(ctx context.Context, f chainquery.BlockLogFilter) ([]*chainquery.Log, int, error) {
	tx, r, err := s.readChain(ctx, f.Chain)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	var timestamp int64
	var version, count int
	args := []any{r.chain, int64(f.BlockNumber)}
	if found, err := queryRow(ctx, tx, qBlockLogCount, args, &timestamp, &version, &count); err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", f.BlockNumber)
	}
	out := []*chainquery.Log{}
	if count == 0 {
		return r.historyBlockLogs(ctx, f, timestamp, version)
	}
	if f.Offset >= count {
		return out, count, nil
	}
	l := chainquery.Log{BlockNumber: f.BlockNumber, Timestamp: timestamp}
	sc := new(scan).to(&l.TransactionIndex).fixed(l.TransactionHash[:]).fixed(l.TransactionFrom[:]).address(&l.TransactionTo)
	logScan(sc, &l)
	out, err = queryRows(ctx, tx, s.Dialect.BlockLogPage, append(args, f.Limit, f.Offset), sc, &l)
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// historyBlockLogs returns the page of f's block's logs and their count
// from history: none when the block is not history (its rows hold no
// log).
func (r reader) historyBlockLogs(ctx context.Context, f chainquery.BlockLogFilter, timestamp int64, version int) ([]*chainquery.Log, int, error) {
	out := []*chainquery.Log{}
	logs, found, err := r.historyLogs(ctx, f.BlockNumber, version)
	if err != nil || !found || len(logs) == 0 {
		return out, 0, err
	}
	txs, found, err := r.historyTransactions(ctx, f.BlockNumber, version)
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

// historyTxLogs finds the transaction hash in history's candidate blocks
// as historyTxIn does and returns copies of it and its logs; tx is nil
// when history has no such transaction.
func (r reader) historyTxLogs(ctx context.Context, hash chainquery.Hash, candidates []uint64) (tx *chainquery.Transaction, logs []*chainquery.Log, err error) {
	tx, st, err := r.historyTxIn(ctx, hash, candidates)
	if err != nil || tx == nil {
		return nil, nil, err
	}
	all, found, err := r.historyLogs(ctx, tx.BlockNumber, st.version)
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

// qLogPage: chain, block number, tx_index, limit, offset → log_index,
// address, topic0 to topic3, data, in log_index order.
const qLogPage = `SELECT log_index, address, topic0, topic1, topic2, topic3, data
	FROM logs WHERE chain = $1 AND block_number = $2 AND tx_index = $3 ORDER BY log_index LIMIT $4 OFFSET $5`

// qBlockLogCount: chain, number → timestamp, version and the number of the
// block's log rows; no row when the block is missing.
const qBlockLogCount = `SELECT timestamp, version, (SELECT count(*) FROM logs WHERE chain = $1 AND block_number = $2)
	FROM blocks WHERE chain = $1 AND number = $2`
