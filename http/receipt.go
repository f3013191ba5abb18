package http

import (
	"math/big"
	"net/http"

	"github.com/chainquery/chainquery"
)

// receiptList is the Get Block Receipts response.
type receiptList struct {
	BlockNumber uint64        `json:"block_number"`
	Offset      int           `json:"offset"`
	Limit       int           `json:"limit"`
	Result      []receiptJSON `json:"result"`
	Count       int           `json:"count"`
}

// receiptJSON is a Receipt as the interface shows it, fields in its order.
// effective_gas_price is a JSON integer: *big.Int marshals as a number, so
// prices above 2^53 stay exact in the text (clients that parse numbers as
// doubles lose precision, but the interface says integer).
type receiptJSON struct {
	BlockNumber       uint64   `json:"block_number"`
	Timestamp         int64    `json:"timestamp"`
	Datetime          string   `json:"datetime"`
	TransactionHash   string   `json:"transaction_hash"`
	TransactionIndex  int      `json:"transaction_index"`
	CumulativeGasUsed uint64   `json:"cumulative_gas_used"`
	GasUsed           uint64   `json:"gas_used"`
	ContractAddress   *string  `json:"contract_address"`
	Status            bool     `json:"status"`
	EffectiveGasPrice *big.Int `json:"effective_gas_price"`
}

func newReceiptJSON(r *chainquery.Receipt) receiptJSON {
	return receiptJSON{
		BlockNumber:       r.BlockNumber,
		Timestamp:         r.Timestamp,
		Datetime:          chainquery.FormatDatetime(r.Timestamp),
		TransactionHash:   r.TransactionHash.Hex(),
		TransactionIndex:  r.TransactionIndex,
		CumulativeGasUsed: r.CumulativeGasUsed,
		GasUsed:           r.GasUsed,
		ContractAddress:   addressPtr(r.ContractAddress),
		Status:            r.Status,
		EffectiveGasPrice: r.EffectiveGasPrice,
	}
}

// handleBlockReceipts serves GET /api/v1/customer/{chain}/blocks/receipts.
func (s *Server) handleBlockReceipts(w http.ResponseWriter, r *http.Request) error {
	chain, err := chainquery.ParseChain(chainquery.EndpointGetBlockReceipts, r.PathValue("chain"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	number, err := requiredBlockNumber(q)
	if err != nil {
		return err
	}
	f := chainquery.ReceiptFilter{Chain: chain, BlockNumber: number}
	if f.Page, err = parsePage(q); err != nil {
		return err
	}
	receipts, count, err := s.store.FindBlockReceipts(r.Context(), f)
	if err != nil {
		return err
	}
	out := receiptList{
		BlockNumber: number,
		Offset:      f.Offset,
		Limit:       f.Limit,
		Result:      make([]receiptJSON, len(receipts)),
		Count:       count,
	}
	for i, rc := range receipts {
		out.Result[i] = newReceiptJSON(rc)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
