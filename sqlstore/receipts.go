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
func (s *Store) FindBlockReceipts(ctx context.Context, f chainquery.ReceiptFilter) ([]*chainquery.Receipt, int, error) {
	out, count, err := s.findBlockReceipts(ctx, f)
	if errors.Is(err, errHistoryMoved) {
		// The block's transactions moved from history back to rows
		// between two of its statements (a rewind below the boundary):
		// the rows answer now.
		return s.findBlockReceipts(ctx, f)
	}
	return out, count, err
}

func (s *Store) findBlockReceipts(ctx context.Context, f chainquery.ReceiptFilter) ([]*chainquery.Receipt, int, error) {
	id, err := storeChainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	r := chainquery.Receipt{BlockNumber: f.BlockNumber}
	var count int
	var sc scan
	sc.to(&r.Timestamp, &count).to(&r.TransactionIndex).fixed(r.TransactionHash[:]).counter(&r.CumulativeGasUsed).
		counter(&r.GasUsed).address(&r.ContractAddress).to(&r.Status, s.ScanAmount(&r.EffectiveGasPrice))
	out, err := queryRows(ctx, s.Read, qReceiptBlockPage, []any{id, int64(f.BlockNumber), f.Limit, f.Offset}, &sc, &r)
	if err != nil || len(out) > 0 {
		return out, count, err
	}
	var version int
	if found, err := queryRow(ctx, s.Read, qReceiptBlock, []any{id, int64(f.BlockNumber)}, &r.Timestamp, &count, &version); err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", f.BlockNumber)
	}
	if f.Offset >= count { // past the end
		return out, count, nil
	}
	// The block's transactions are history.
	txs, found, err := s.reader(s.Read, id).historyTransactions(ctx, f.BlockNumber, version)
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

// qReceiptBlockPage is qReceiptBlock and qReceiptPage in one statement:
// chain, number, limit, offset → qReceiptBlock's timestamp and
// transaction_count, then qReceiptPage's columns. No row when the block is
// missing or the page is empty: qReceiptBlock then tells which.
const qReceiptBlockPage = `SELECT b.timestamp, b.transaction_count, x.tx_index, x.hash, x.cumulative_gas_used, x.gas_used,
		x.contract_address, x.status, x.effective_gas_price
	FROM blocks b JOIN transactions x ON x.chain = b.chain AND x.block_number = b.number
	WHERE b.chain = $1 AND b.number = $2 ORDER BY x.tx_index LIMIT $3 OFFSET $4`

// qReceiptBlock: chain, number → timestamp, transaction_count, version.
// qReceiptPage: chain, number, limit, offset → tx_index, hash,
// cumulative_gas_used, gas_used, contract_address, status,
// effective_gas_price, in tx_index order.
const (
	qReceiptBlock = `SELECT timestamp, transaction_count, version FROM blocks WHERE chain = $1 AND number = $2`
	qReceiptPage  = `SELECT tx_index, hash, cumulative_gas_used, gas_used, contract_address, status, effective_gas_price
		FROM transactions WHERE chain = $1 AND block_number = $2 ORDER BY tx_index LIMIT $3 OFFSET $4`
)
