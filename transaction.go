package chainquery

import (
	"context"
	"time"
)

// TransactionFilter names one transaction by its hash, for Get Transaction,
// Get Transaction Receipt and Get Transaction Traces; Page is the page of
// its traces.
type TransactionFilter struct {
	Chain           Chain
	TransactionHash Hash
	BlockNumber     *uint64 // narrows the lookup when given

	// MinTime is the start of the chain's trace history, as in
	// TraceFilter: a transaction of a block stamped before it has no
	// traces served. Zero means no bound.
	MinTime time.Time

	Page
}

// BlockLogFilter selects the logs of one block, one page at a time.
type BlockLogFilter struct {
	Chain       Chain
	BlockNumber uint64
	Page
}

// TransactionService is what the API reads of one transaction, and of all
// the logs of one block, without a filter over many blocks.
type TransactionService interface {
	// FindTransaction returns the transaction, with its receipt's fields
	// and its block's timestamp. A hash names one transaction; should a
	// chain ever hold it twice, the highest block wins unless f names the
	// block. It returns ENOTFOUND if the transaction is not indexed (in
	// the given block, when one is given).
	FindTransaction(ctx context.Context, f TransactionFilter) (*Transaction, error)

	// FindTransactionTraces returns one page of the transaction's traces
	// in Filter Traces' order (depth-first by trace_address) and their
	// count: 0 where the chain's blocks are stored without traces, or
	// before f.MinTime. It returns ENOTFOUND as FindTransaction does.
	FindTransactionTraces(ctx context.Context, f TransactionFilter) ([]*Trace, int, error)

	// FindBlockLogs returns one page of the block's logs in log_index
	// order and the block's log count. It returns ENOTFOUND if the block is
	// not indexed.
	FindBlockLogs(ctx context.Context, f BlockLogFilter) ([]*Log, int, error)
}

// Receipt returns the receipt of t, as Get Block Receipts serves it.
func (t *Transaction) Receipt() *Receipt {
	return &Receipt{BlockNumber: t.BlockNumber, Timestamp: t.Timestamp, TransactionHash: t.Hash,
		TransactionIndex: t.Index, CumulativeGasUsed: t.CumulativeGasUsed, GasUsed: t.GasUsed,
		ContractAddress: t.ContractAddress, Status: t.Status, EffectiveGasPrice: t.EffectiveGasPrice}
}
