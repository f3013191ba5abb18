package http_test

import (
	"math/big"

	"github.com/chainquery/chainquery"
)

// The ref* types are the reflective form of the large answers, exactly as
// the server encoded them with json.Marshal before the hand encoders
// replaced them: the reference the encoders' bytes are held to.

type refBlock struct {
	BlockNumber      uint64            `json:"block_number"`
	Timestamp        int64             `json:"timestamp"`
	Datetime         string            `json:"datetime"`
	BlockHash        string            `json:"block_hash"`
	BlockParentHash  string            `json:"block_parent_hash"`
	Version          int               `json:"version"`
	LogsBloom        *string           `json:"logs_bloom,omitempty"`
	TransactionsRoot string            `json:"transactions_root"`
	StateRoot        string            `json:"state_root"`
	ReceiptsRoot     string            `json:"receipts_root"`
	Miner            string            `json:"miner"`
	ExtraData        *string           `json:"extra_data,omitempty"`
	Size             uint64            `json:"size"`
	GasLimit         uint64            `json:"gas_limit"`
	GasUsed          uint64            `json:"gas_used"`
	TransactionCount int               `json:"transaction_count"`
	BaseFeePerGas    *big.Int          `json:"base_fee_per_gas"`
	Transactions     []*refTransaction `json:"transactions"`
}

type refTransaction struct {
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

func newRefBlock(b *chainquery.Block, full bool) refBlock {
	out := refBlock{
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
		out.Transactions = make([]*refTransaction, len(b.Transactions))
		for i, t := range b.Transactions {
			out.Transactions[i] = &refTransaction{
				BlockNumber:          t.BlockNumber,
				Timestamp:            t.Timestamp,
				Datetime:             chainquery.FormatDatetime(t.Timestamp),
				TransactionHash:      t.Hash.Hex(),
				TransactionIndex:     t.Index,
				FromAddress:          t.From.Hex(),
				ToAddress:            refAddress(t.To),
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
				ContractAddress:      refAddress(t.ContractAddress),
				Status:               t.Status,
			}
		}
	}
	return out
}

type refTraceList struct {
	Offset int        `json:"offset"`
	Limit  int        `json:"limit"`
	Result []refTrace `json:"result"`
	Count  int        `json:"count"`
}

type refTrace struct {
	BlockNumber       uint64  `json:"block_number"`
	Timestamp         int64   `json:"timestamp"`
	Datetime          string  `json:"datetime"`
	TransactionHash   string  `json:"transaction_hash"`
	TransactionIndex  int     `json:"transaction_index"`
	TraceAddress      string  `json:"trace_address"`
	TransactionFrom   string  `json:"transaction_from"`
	TransactionTo     *string `json:"transaction_to"`
	TransactionStatus bool    `json:"transaction_status"`
	CallType          string  `json:"call_type"`
	FromAddress       string  `json:"from_address"`
	ToAddress         *string `json:"to_address"`
	Gas               uint64  `json:"gas"`
	GasUsed           uint64  `json:"gas_used"`
	GasRefund         uint64  `json:"gas_refund"`
	Value             string  `json:"value"`
	Subtraces         int     `json:"subtraces"`
	Type              string  `json:"type"`
	Input             string  `json:"input"`
	Output            string  `json:"output"`
	Error             *string `json:"error"`
	FunctionSignature string  `json:"function_signature"`
	Version           int     `json:"version"`
}

func newRefTraceList(offset, limit, count int, traces []*chainquery.Trace) refTraceList {
	out := refTraceList{Offset: offset, Limit: limit, Result: make([]refTrace, len(traces)), Count: count}
	for i, t := range traces {
		out.Result[i] = refTrace{
			BlockNumber:       t.BlockNumber,
			Timestamp:         t.Timestamp,
			Datetime:          chainquery.FormatDatetime(t.Timestamp),
			TransactionHash:   t.TransactionHash.Hex(),
			TransactionIndex:  t.TransactionIndex,
			TraceAddress:      chainquery.FormatTraceAddress(t.TraceAddress),
			TransactionFrom:   t.TransactionFrom.Hex(),
			TransactionTo:     refAddress(t.TransactionTo),
			TransactionStatus: t.TransactionStatus,
			CallType:          t.CallType,
			FromAddress:       t.From.Hex(),
			ToAddress:         refAddress(t.To),
			Gas:               t.Gas,
			GasUsed:           t.GasUsed,
			GasRefund:         t.GasRefund(),
			Value:             chainquery.BigString(t.Value),
			Subtraces:         t.Subtraces,
			Type:              t.Type,
			Input:             chainquery.Hex(t.Input),
			Output:            chainquery.Hex(t.Output),
			FunctionSignature: chainquery.Hex(chainquery.FunctionSignature(t.Input)),
			Version:           t.Version,
		}
		if t.Error != "" {
			out.Result[i].Error = &t.Error
		}
	}
	return out
}

type refLogList struct {
	TransactionHash string   `json:"transaction_hash"`
	Offset          int      `json:"offset"`
	Limit           int      `json:"limit"`
	Result          []refLog `json:"result"`
	Count           int      `json:"count"`
}

type refLog struct {
	BlockNumber      uint64   `json:"block_number"`
	Timestamp        int64    `json:"timestamp"`
	Datetime         string   `json:"datetime"`
	TransactionHash  string   `json:"transaction_hash"`
	TransactionIndex int      `json:"transaction_index"`
	TransactionFrom  string   `json:"transaction_from"`
	TransactionTo    *string  `json:"transaction_to"`
	LogIndex         int      `json:"log_index"`
	Address          string   `json:"address"`
	Data             string   `json:"data"`
	Topics           []string `json:"topics"`
	Topic1           *string  `json:"topic1"`
	Topic2           *string  `json:"topic2"`
	Topic3           *string  `json:"topic3"`
	Topic4           *string  `json:"topic4"`
}

func newRefLogList(hash chainquery.Hash, offset, limit, count int, logs []*chainquery.Log) refLogList {
	out := refLogList{TransactionHash: hash.Hex(), Offset: offset, Limit: limit, Result: make([]refLog, len(logs)), Count: count}
	for i, l := range logs {
		r := refLog{
			BlockNumber:      l.BlockNumber,
			Timestamp:        l.Timestamp,
			Datetime:         chainquery.FormatDatetime(l.Timestamp),
			TransactionHash:  l.TransactionHash.Hex(),
			TransactionIndex: l.TransactionIndex,
			TransactionFrom:  l.TransactionFrom.Hex(),
			TransactionTo:    refAddress(l.TransactionTo),
			LogIndex:         l.LogIndex,
			Address:          l.Address.Hex(),
			Data:             chainquery.Hex(l.Data),
			Topics:           make([]string, len(l.Topics)),
		}
		for j, t := range l.Topics {
			r.Topics[j] = t.Hex()
		}
		for j, dst := range []**string{&r.Topic1, &r.Topic2, &r.Topic3, &r.Topic4} {
			if j < len(r.Topics) {
				*dst = &r.Topics[j]
			}
		}
		out.Result[i] = r
	}
	return out
}

type refReceiptList struct {
	BlockNumber uint64       `json:"block_number"`
	Offset      int          `json:"offset"`
	Limit       int          `json:"limit"`
	Result      []refReceipt `json:"result"`
	Count       int          `json:"count"`
}

type refReceipt struct {
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

func newRefReceiptList(number uint64, offset, limit, count int, receipts []*chainquery.Receipt) refReceiptList {
	out := refReceiptList{BlockNumber: number, Offset: offset, Limit: limit, Result: make([]refReceipt, len(receipts)), Count: count}
	for i, r := range receipts {
		out.Result[i] = refReceipt{
			BlockNumber:       r.BlockNumber,
			Timestamp:         r.Timestamp,
			Datetime:          chainquery.FormatDatetime(r.Timestamp),
			TransactionHash:   r.TransactionHash.Hex(),
			TransactionIndex:  r.TransactionIndex,
			CumulativeGasUsed: r.CumulativeGasUsed,
			GasUsed:           r.GasUsed,
			ContractAddress:   refAddress(r.ContractAddress),
			Status:            r.Status,
			EffectiveGasPrice: r.EffectiveGasPrice,
		}
	}
	return out
}

func refAddress(a *chainquery.Address) *string {
	if a == nil {
		return nil
	}
	s := a.Hex()
	return &s
}
