package chainquery

import (
	"context"
	"math/big"
)

// Receipt is the part of a transaction's receipt that Get Block Receipts serves.
type Receipt struct {
	BlockNumber       uint64
	Timestamp         int64
	TransactionHash   Hash
	TransactionIndex  int
	CumulativeGasUsed uint64
	GasUsed           uint64
	ContractAddress   *Address
	Status            bool
	EffectiveGasPrice *big.Int
}

// ReceiptFilter selects the receipts of one block, one page at a time.
type ReceiptFilter struct {
	Chain       Chain
	BlockNumber uint64
	Page
}

// ReceiptService is what the API reads of receipts.
type ReceiptService interface {
	// FindBlockReceipts returns one page of the block's receipts in
	// transaction_index order and the block's receipt count. It returns
	// ENOTFOUND if the block is not indexed.
	FindBlockReceipts(ctx context.Context, f ReceiptFilter) ([]*Receipt, int, error)
}
