package sqlstore

import (
	"context"
	"errors"

	"github.com/chainquery/chainquery"
)

// FindBlockReceipts returns one page of the block's receipts in
// transaction_index order and the block's receipt count. It returns
// ENOTFOUND if the block is not indexed.
//
// The block and its page come from one statement, so no read transaction
// is needed (on PostgreSQL a transaction costs two more round trips); only
// an empty page asks again which of "no such block" and "past the end" it
// is.
func (s *SQLStore) FindBlockReceipts(ctx context.Context, f chainquery.ReceiptFilter) ([]*chainquery.Receipt, int, error) {
	out, count, err := s.findBlockReceipts(ctx, f)
	if errors.Is(err, errHistoryMoved) {
		// The block's transactions moved from history back to rows
		// between two of its statements (a rewind below the boundary):
		// the rows answer now.
		return s.findBlockReceipts(ctx, f)
	}
	return out, count, err
}

func (s *SQLStore) findBlockReceipts(ctx context.Context, f chainquery.ReceiptFilter) ([]*chainquery.Receipt, int, error) {
	id, err := storeChainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	r := chainquery.Receipt{BlockNumber: f.BlockNumber}
	var count int
	var sc scan
	sc.to(&r.Timestamp, &count).to(&r.TransactionIndex).fixed(r.TransactionHash[:]).counter(&r.CumulativeGasUsed).
		counter(&r.GasUsed).address(&r.ContractAddress).to(&r.Status, s.ScanAmount(&r.EffectiveGasPrice))
	out, err := queryRows(ctx, s.Read, s.SQL.ReceiptBlockPage, []any{id, int64(f.BlockNumber), f.Limit, f.Offset}, &sc, &r)
	if err != nil || len(out) > 0 {
		return out, count, err
	}
	var version int
	if found, err := queryRow(ctx, s.Read, s.SQL.ReceiptBlock, []any{id, int64(f.BlockNumber)}, &r.Timestamp, &count, &version); err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", f.BlockNumber)
	}
	if f.Offset >= count { // past the end
		return out, count, nil
	}
	// The block's transactions are history.
	txs, found, err := s.historyTransactions(ctx, s.Read, id, f.BlockNumber, version)
	if err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, errHistoryMoved
	}
	for _, t := range txs[min(f.Offset, len(txs)):min(f.Offset+f.Limit, len(txs))] {
		rc := t.Receipt()
		rc.BlockNumber, rc.Timestamp = f.BlockNumber, r.Timestamp
		out = append(out, rc)
	}
	return out, count, nil
}
