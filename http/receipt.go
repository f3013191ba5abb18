package http

import (
	"net/http"
	"strconv"

	"github.com/chainquery/chainquery"
)

// receiptList is the Get Block Receipts response: the block's number,
// offset, limit, the page (never null) and count.
type receiptList struct {
	number               uint64
	offset, limit, count int
	receipts             []*chainquery.Receipt
}

func (l *receiptList) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"block_number":`...)
	dst = strconv.AppendUint(dst, l.number, 10)
	return appendPage(append(dst, ','), l.offset, l.limit, l.count, l.receipts, appendReceipt)
}

// appendReceipt appends a Receipt as the interface shows it, fields in its
// order. effective_gas_price is a JSON integer, as (*big.Int).MarshalJSON
// writes it, so prices above 2^53 stay exact in the text (clients that
// parse numbers as doubles lose precision, but the interface says integer).
func appendReceipt(dst []byte, r *chainquery.Receipt) []byte {
	dst = appendTxHead(dst, r.BlockNumber, r.Timestamp, &r.TransactionHash, r.TransactionIndex)
	dst = append(dst, `,"cumulative_gas_used":`...)
	dst = strconv.AppendUint(dst, r.CumulativeGasUsed, 10)
	dst = append(dst, `,"gas_used":`...)
	dst = strconv.AppendUint(dst, r.GasUsed, 10)
	dst = append(dst, `,"contract_address":`...)
	dst = appendAddressOrNull(dst, r.ContractAddress)
	dst = append(dst, `,"status":`...)
	dst = appendBool(dst, r.Status)
	dst = append(dst, `,"effective_gas_price":`...)
	dst = appendBigOrNull(dst, r.EffectiveGasPrice)
	return append(dst, '}')
}

// handleBlockReceipts serves GET /api/v1/customer/{chain}/blocks/receipts.
func (s *Server) handleBlockReceipts(w http.ResponseWriter, r *http.Request) error {
	chain, number, page, err := blockPage(r, chainquery.EndpointGetBlockReceipts)
	if err != nil {
		return err
	}
	f := chainquery.ReceiptFilter{Chain: chain, BlockNumber: number, Page: page}
	bound := s.deepBound(r.Context(), chain)
	receipts, count, err := s.store.FindBlockReceipts(r.Context(), f)
	if err != nil {
		return err
	}
	s.writeAnswer(w, r, &receiptList{number: number, offset: f.Offset, limit: f.Limit, count: count, receipts: receipts},
		bound.answer(number))
	return nil
}

// receiptSchema is the schema of a receipt, field for field as
// appendReceipt writes it.
func receiptSchema() kv {
	return kv{"Receipt", object("A transaction receipt.", obj{
		{"block_number", nonNegInt},
		{"timestamp", integer},
		{"datetime", datetimeShape},
		{"transaction_hash", hashSchema},
		{"transaction_index", nonNegInt},
		{"cumulative_gas_used", nonNegInt},
		{"gas_used", nonNegInt},
		{"contract_address", addrOrNull},
		{"status", boolean},
		{"effective_gas_price", nonNegInt},
	})}
}
