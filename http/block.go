package http

import (
	"math/big"
	"net/http"
	"net/url"

	"github.com/chainquery/chainquery"
)

// blockJSON is a Block as the interface shows it, fields in its order.
// logs_bloom and extra_data are left out when the chain does not supply
// them; transactions is null unless full transactions were asked for.
type blockJSON struct {
	BlockNumber      uint64             `json:"block_number"`
	Timestamp        int64              `json:"timestamp"`
	Datetime         string             `json:"datetime"`
	BlockHash        string             `json:"block_hash"`
	BlockParentHash  string             `json:"block_parent_hash"`
	Version          int                `json:"version"`
	LogsBloom        *string            `json:"logs_bloom,omitempty"`
	TransactionsRoot string             `json:"transactions_root"`
	StateRoot        string             `json:"state_root"`
	ReceiptsRoot     string             `json:"receipts_root"`
	Miner            string             `json:"miner"`
	ExtraData        *string            `json:"extra_data,omitempty"`
	Size             uint64             `json:"size"`
	GasLimit         uint64             `json:"gas_limit"`
	GasUsed          uint64             `json:"gas_used"`
	TransactionCount int                `json:"transaction_count"`
	BaseFeePerGas    *big.Int           `json:"base_fee_per_gas"`
	Transactions     []*transactionJSON `json:"transactions"`
}

// transactionJSON is a transaction of a block with full_transactions=true,
// fields in the order of decisions.md §5.
type transactionJSON struct {
	BlockNumber          uint64   `json:"block_number"`
	Timestamp            int64    `json:"timestamp"`
	Datetime             string   `json:"datetime"`
	TransactionHash      string   `json:"transaction_hash"`
	TransactionIndex     int      `json:"transaction_index"`
	FromAddress          string   `json:"from_address"`
	ToAddress            *string  `json:"to_address"`
	Value                string   `json:"value"`
	GasLimit             uint64   `json:"gas_limit"`
	GasPrice             *big.Int `json:"gas_price"`
	EffectiveGasPrice    *big.Int `json:"effective_gas_price"`
	MaxFeePerGas         *big.Int `json:"max_fee_per_gas"`
	MaxPriorityFeePerGas *big.Int `json:"max_priority_fee_per_gas"`
	GasUsed              uint64   `json:"gas_used"`
	CumulativeGasUsed    uint64   `json:"cumulative_gas_used"`
	Nonce                uint64   `json:"nonce"`
	Input                string   `json:"input"`
	TransactionType      int      `json:"transaction_type"`
	ContractAddress      *string  `json:"contract_address"`
	Status               bool     `json:"status"`
}

func newBlockJSON(b *chainquery.Block, full bool) blockJSON {
	out := blockJSON{
		BlockNumber:      b.Number,
		Timestamp:        b.Timestamp,
		Datetime:         chainquery.FormatDatetime(b.Timestamp),
		BlockHash:        b.Hash.Hex(),
		BlockParentHash:  b.ParentHash.Hex(),
		Version:          b.Version,
		TransactionsRoot: b.TransactionsRoot.Hex(),
		StateRoot:        b.StateRoot.Hex(),
		ReceiptsRoot:     b.ReceiptsRoot.Hex(),
		Miner:            b.Miner.Hex(),
		Size:             b.Size,
		GasLimit:         b.GasLimit,
		GasUsed:          b.GasUsed,
		TransactionCount: b.TransactionCount,
		BaseFeePerGas:    b.BaseFeePerGas,
	}
	if len(b.LogsBloom) > 0 {
		s := chainquery.Hex(b.LogsBloom)
		out.LogsBloom = &s
	}
	if b.HasExtraData {
		s := chainquery.Hex(b.ExtraData)
		out.ExtraData = &s
	}
	if full {
		// Non-nil even when empty: a block without transactions asked for
		// in full answers [], not null.
		out.Transactions = make([]*transactionJSON, len(b.Transactions))
		for i, t := range b.Transactions {
			out.Transactions[i] = newTransactionJSON(t)
		}
	}
	return out
}

func newTransactionJSON(t *chainquery.Transaction) *transactionJSON {
	return &transactionJSON{
		BlockNumber:          t.BlockNumber,
		Timestamp:            t.Timestamp,
		Datetime:             chainquery.FormatDatetime(t.Timestamp),
		TransactionHash:      t.Hash.Hex(),
		TransactionIndex:     t.Index,
		FromAddress:          t.From.Hex(),
		ToAddress:            addressPtr(t.To),
		Value:                chainquery.BigString(t.Value),
		GasLimit:             t.GasLimit,
		GasPrice:             t.GasPrice,
		EffectiveGasPrice:    t.EffectiveGasPrice,
		MaxFeePerGas:         t.MaxFeePerGas,
		MaxPriorityFeePerGas: t.MaxPriorityFeePerGas,
		GasUsed:              t.GasUsed,
		CumulativeGasUsed:    t.CumulativeGasUsed,
		Nonce:                t.Nonce,
		Input:                chainquery.Hex(t.Input),
		TransactionType:      t.Type,
		ContractAddress:      addressPtr(t.ContractAddress),
		Status:               t.Status,
	}
}

// requiredBlockNumber parses the block_number query parameter of Get Block
// and Get Block Receipts, where it is required (decisions.md §4).
func requiredBlockNumber(q url.Values) (uint64, error) {
	if !q.Has("block_number") {
		return 0, chainquery.Errorf(chainquery.EINVALID, "block_number is required")
	}
	return chainquery.ParseBlockNumber("block_number", q.Get("block_number"))
}

// handleBlock serves GET /api/v1/customer/{chain}/block.
func (s *Server) handleBlock(w http.ResponseWriter, r *http.Request) error {
	chain, err := chainquery.ParseChain(chainquery.EndpointGetBlock, r.PathValue("chain"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	number, err := requiredBlockNumber(q)
	if err != nil {
		return err
	}
	full := false
	if q.Has("full_transactions") {
		if full, err = chainquery.ParseBool("full_transactions", q.Get("full_transactions")); err != nil {
			return err
		}
	}
	b, err := s.store.FindBlock(r.Context(), chain, number, full)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newBlockJSON(b, full))
	return nil
}

// latestBlockJSON is the Get Latest Block response.
type latestBlockJSON struct {
	BlockNumber uint64 `json:"block_number"`
}

// handleLatestBlock serves GET /api/v1/customer/{chain}/blocks/latest.
func (s *Server) handleLatestBlock(w http.ResponseWriter, r *http.Request) error {
	chain, err := chainquery.ParseChain(chainquery.EndpointGetLatestBlock, r.PathValue("chain"))
	if err != nil {
		return err
	}
	n, err := s.store.LatestBlock(r.Context(), chain)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, latestBlockJSON{BlockNumber: n})
	return nil
}
