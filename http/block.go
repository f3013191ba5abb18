package http

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/chainquery/chainquery"
)

// blockAnswer is the Get Block response: the fields of a Block in the order
// of the interface. logs_bloom and extra_data are left out when the chain
// does not supply them; transactions is null unless full transactions were
// asked for, and [] for a block without any.
type blockAnswer struct {
	b    *chainquery.Block
	full bool
}

func (a *blockAnswer) appendJSON(dst []byte) []byte {
	b := a.b
	dst = append(dst, `{"block_number":`...)
	dst = strconv.AppendUint(dst, b.Number, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, b.Timestamp, 10)
	dst = append(dst, `,"datetime":`...)
	dst = appendDatetime(dst, b.Timestamp)
	dst = append(dst, `,"block_hash":`...)
	dst = appendQuotedHex(dst, b.Hash[:])
	dst = append(dst, `,"block_parent_hash":`...)
	dst = appendQuotedHex(dst, b.ParentHash[:])
	dst = append(dst, `,"version":`...)
	dst = appendInt(dst, b.Version)
	if len(b.LogsBloom) > 0 {
		dst = append(dst, `,"logs_bloom":`...)
		dst = appendQuotedHex(dst, b.LogsBloom)
	}
	dst = append(dst, `,"transactions_root":`...)
	dst = appendQuotedHex(dst, b.TransactionsRoot[:])
	dst = append(dst, `,"state_root":`...)
	dst = appendQuotedHex(dst, b.StateRoot[:])
	dst = append(dst, `,"receipts_root":`...)
	dst = appendQuotedHex(dst, b.ReceiptsRoot[:])
	dst = append(dst, `,"miner":`...)
	dst = appendQuotedHex(dst, b.Miner[:])
	if b.HasExtraData {
		dst = append(dst, `,"extra_data":`...)
		dst = appendQuotedHex(dst, b.ExtraData)
	}
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendUint(dst, b.Size, 10)
	dst = append(dst, `,"gas_limit":`...)
	dst = strconv.AppendUint(dst, b.GasLimit, 10)
	dst = append(dst, `,"gas_used":`...)
	dst = strconv.AppendUint(dst, b.GasUsed, 10)
	dst = append(dst, `,"transaction_count":`...)
	dst = appendInt(dst, b.TransactionCount)
	dst = append(dst, `,"base_fee_per_gas":`...)
	dst = appendBigOrNull(dst, b.BaseFeePerGas)
	dst = append(dst, `,"transactions":`...)
	if !a.full {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, t := range b.Transactions {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendTransaction(dst, t)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendTransaction appends a transaction of a block with
// full_transactions=true, fields in the order docs/api.md lists (Get Block).
func appendTransaction(dst []byte, t *chainquery.Transaction) []byte {
	dst = appendTxHead(dst, t.BlockNumber, t.Timestamp, &t.Hash, t.Index)
	dst = append(dst, `,"from_address":`...)
	dst = appendQuotedHex(dst, t.From[:])
	dst = append(dst, `,"to_address":`...)
	dst = appendAddressOrNull(dst, t.To)
	dst = append(dst, `,"value":`...)
	dst = appendBigString(dst, t.Value)
	dst = append(dst, `,"gas_limit":`...)
	dst = strconv.AppendUint(dst, t.GasLimit, 10)
	dst = append(dst, `,"gas_price":`...)
	dst = appendBigOrNull(dst, t.GasPrice)
	dst = append(dst, `,"effective_gas_price":`...)
	dst = appendBigOrNull(dst, t.EffectiveGasPrice)
	dst = append(dst, `,"max_fee_per_gas":`...)
	dst = appendBigOrNull(dst, t.MaxFeePerGas)
	dst = append(dst, `,"max_priority_fee_per_gas":`...)
	dst = appendBigOrNull(dst, t.MaxPriorityFeePerGas)
	dst = append(dst, `,"gas_used":`...)
	dst = strconv.AppendUint(dst, t.GasUsed, 10)
	dst = append(dst, `,"cumulative_gas_used":`...)
	dst = strconv.AppendUint(dst, t.CumulativeGasUsed, 10)
	dst = append(dst, `,"nonce":`...)
	dst = strconv.AppendUint(dst, t.Nonce, 10)
	dst = append(dst, `,"input":`...)
	dst = appendQuotedHex(dst, t.Input)
	dst = append(dst, `,"transaction_type":`...)
	dst = appendInt(dst, t.Type)
	dst = append(dst, `,"contract_address":`...)
	dst = appendAddressOrNull(dst, t.ContractAddress)
	dst = append(dst, `,"status":`...)
	dst = appendBool(dst, t.Status)
	return append(dst, '}')
}

// requiredBlockNumber parses the block_number query parameter of Get Block
// and Get Block Receipts, where it is required (docs/api.md).
func requiredBlockNumber(q url.Values) (uint64, error) {
	if !q.Has("block_number") {
		return 0, chainquery.Errorf(chainquery.EINVALID, "block_number is required")
	}
	return chainquery.ParseBlockNumber("block_number", q.Get("block_number"))
}

// handleBlock serves GET /api/v1/customer/{chain}/block.
func (s *Server) handleBlock(w http.ResponseWriter, r *http.Request) error {
	chain, err := s.tracedChain(r.Context(), chainquery.EndpointGetBlock, r.PathValue("chain"))
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
	bound := s.deepBound(r.Context(), chain)
	b, err := s.store.FindBlock(r.Context(), chain, number, full)
	if err != nil {
		return err
	}
	s.writeAnswer(w, r, &blockAnswer{b: b, full: full}, bound.answer(number))
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

// blockPage reads what names a page of one block's items: the chain (as
// endpoint serves it), the required block_number, limit and offset.
func blockPage(r *http.Request, endpoint chainquery.Endpoint) (chain chainquery.Chain, number uint64, page chainquery.Page, err error) {
	if chain, err = chainquery.ParseChain(endpoint, r.PathValue("chain")); err != nil {
		return
	}
	q := r.URL.Query()
	if number, err = requiredBlockNumber(q); err != nil {
		return
	}
	page, err = parsePage(q)
	return
}

// blockSchema is the schema of a block, field for field as
// blockAnswer writes it.
func blockSchema() kv {
	return kv{"Block", object("A block header.", obj{
		{"block_number", nonNegInt},
		{"timestamp", integer},
		{"datetime", datetimeShape},
		{"block_hash", hashSchema},
		{"block_parent_hash", hashSchema},
		{"version", nonNegInt},
		{"logs_bloom", obj{{"type", "string"}, {"description", "Absent when the chain does not supply it."}}},
		{"transactions_root", hashSchema},
		{"state_root", hashSchema},
		{"receipts_root", hashSchema},
		{"miner", addressSchema},
		{"extra_data", obj{{"type", "string"}, {"description", "Absent when the chain does not supply it."}}},
		{"size", nonNegInt},
		{"gas_limit", nonNegInt},
		{"gas_used", nonNegInt},
		{"transaction_count", nonNegInt},
		{"base_fee_per_gas", nullable("integer", "Wei; null before EIP-1559 or where the chain has none.")},
		{"transactions", obj{{"type", []string{"array", "null"}}, {"items", ref("Transaction")},
			{"description", "The block's transactions when full_transactions is true; null otherwise."}}},
	}, "logs_bloom", "extra_data")}
}

// transactionSchema is the schema of a transaction, field for field as
// appendTransaction writes it.
func transactionSchema() kv {
	return kv{"Transaction", object("A transaction with its receipt, as in Get Block with full_transactions=true.", obj{
		{"block_number", nonNegInt},
		{"timestamp", integer},
		{"datetime", datetimeShape},
		{"transaction_hash", hashSchema},
		{"transaction_index", nonNegInt},
		{"from_address", addressSchema},
		{"to_address", nullable("string", "null for a contract creation.")},
		{"value", weiString},
		{"gas_limit", nonNegInt},
		{"gas_price", nullable("integer", "Wei.")},
		{"effective_gas_price", nullable("integer", "Wei.")},
		{"max_fee_per_gas", nullable("integer", "Wei; null where the transaction type has none.")},
		{"max_priority_fee_per_gas", nullable("integer", "Wei; null where the transaction type has none.")},
		{"gas_used", nonNegInt},
		{"cumulative_gas_used", nonNegInt},
		{"nonce", nonNegInt},
		{"input", hexSchema},
		{"transaction_type", nonNegInt},
		{"contract_address", addrOrNull},
		{"status", boolean},
	})}
}
