package postgres

import (
	"context"

	"github.com/chainquery/chainquery"
)

// FindBlockReceipts returns one page of the block's receipts in
// transaction_index order and the block's receipt count. It returns
// ENOTFOUND if the block is not indexed.
func (db *DB) FindBlockReceipts(ctx context.Context, f chainquery.ReceiptFilter) ([]*chainquery.Receipt, int, error) {
	id, err := chainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	tx, err := db.readTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer rollback(tx)

	var ts int64
	var count int
	if err := tx.QueryRow(ctx, qReceiptBlock, id, gasArg(f.BlockNumber)).Scan(&ts, &count); err != nil {
		return nil, 0, notFound(err, "block %d is not indexed", f.BlockNumber)
	}
	rows, err := tx.Query(ctx, qReceiptPage, id, gasArg(f.BlockNumber), f.Limit, f.Offset)
	if err != nil {
		return nil, 0, wrap(err)
	}
	defer rows.Close()
	out := []*chainquery.Receipt{}
	for rows.Next() {
		r := &chainquery.Receipt{BlockNumber: f.BlockNumber, Timestamp: ts}
		if err := rows.Scan(&r.TransactionIndex, fixedCol(r.TransactionHash[:]), gasCol{&r.CumulativeGasUsed},
			gasCol{&r.GasUsed}, addrPtrCol{&r.ContractAddress}, &r.Status, bigCol{&r.EffectiveGasPrice}); err != nil {
			return nil, 0, wrap(err)
		}
		out = append(out, r)
	}
	return out, count, wrap(rows.Err())
}
