package postgres

import (
	"context"
	"fmt"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
)

// FindTransactionLogs returns one page of the transaction's logs in log_index
// order and its log count. It returns ENOTFOUND if the transaction is not
// indexed (in f.BlockNumber, when given).
func (db *DB) FindTransactionLogs(ctx context.Context, f chainquery.LogFilter) ([]*chainquery.Log, int, error) {
	id, err := chainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	tx, err := db.readTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer rollback(tx)

	var (
		blockNumber uint64
		txIndex     int
		from        chainquery.Address
		to          *chainquery.Address
		count       int
		ts          int64
		row         pgx.Row
		where       string
	)
	if f.BlockNumber != nil {
		row = tx.QueryRow(ctx, qLogTransactionInBlock, id, f.TransactionHash[:], gasArg(*f.BlockNumber))
		where = fmt.Sprintf(" in block %d", *f.BlockNumber)
	} else {
		row = tx.QueryRow(ctx, qLogTransaction, id, f.TransactionHash[:])
	}
	if err := row.Scan(gasCol{&blockNumber}, &txIndex, fixedCol(from[:]), addrPtrCol{&to}, &count, &ts); err != nil {
		return nil, 0, notFound(err, "transaction %s is not indexed on %s%s", f.TransactionHash.Hex(), f.Chain, where)
	}

	rows, err := tx.Query(ctx, qLogPage, id, gasArg(blockNumber), txIndex, f.Limit, f.Offset)
	if err != nil {
		return nil, 0, wrap(err)
	}
	defer rows.Close()
	out := []*chainquery.Log{}
	for rows.Next() {
		l := &chainquery.Log{BlockNumber: blockNumber, Timestamp: ts, TransactionHash: f.TransactionHash,
			TransactionIndex: txIndex, TransactionFrom: from, TransactionTo: to}
		var topics [4][]byte
		if err := rows.Scan(&l.LogIndex, fixedCol(l.Address[:]), &topics[0], &topics[1], &topics[2], &topics[3], bytesCol{&l.Data}); err != nil {
			return nil, 0, wrap(err)
		}
		for _, t := range topics {
			if t == nil {
				break
			}
			var h chainquery.Hash
			if err := fixedCol(h[:]).ScanBytes(t); err != nil {
				return nil, 0, err
			}
			l.Topics = append(l.Topics, h)
		}
		out = append(out, l)
	}
	return out, count, wrap(rows.Err())
}
