package chainquery

import (
	"context"
	"math/big"
)

// Block is an indexed EVM block header with the counts the API serves.
type Block struct {
	Chain            Chain
	Number           uint64
	Hash             Hash
	ParentHash       Hash
	Timestamp        int64 // unix seconds
	Version          int   // 0, then +1 each time a reorg rewrites this height
	LogsBloom        []byte
	TransactionsRoot Hash
	StateRoot        Hash
	ReceiptsRoot     Hash
	Miner            Address
	ExtraData        []byte
	HasExtraData     bool // the node supplied extraData (it may be empty)
	Size             uint64
	GasLimit         uint64
	GasUsed          uint64
	TransactionCount int
	BaseFeePerGas    *big.Int // nil before EIP-1559 or where the chain has none
	TraceCount       int      // traces stored for this block; keeps Filter Traces counts cheap

	// Transactions is filled by FindBlock only when full transactions are
	// asked for, in transaction_index order.
	Transactions []*Transaction
}

// Transaction is an EVM transaction together with its receipt: the two are
// one-to-one, so they are stored and served as one record.
type Transaction struct {
	BlockNumber          uint64
	Timestamp            int64 // of the block; filled on reads
	Hash                 Hash
	Index                int
	From                 Address
	To                   *Address // nil for a contract creation
	Value                *big.Int
	GasLimit             uint64
	GasPrice             *big.Int
	EffectiveGasPrice    *big.Int
	MaxFeePerGas         *big.Int // nil where the transaction type has none
	MaxPriorityFeePerGas *big.Int // nil where the transaction type has none
	GasUsed              uint64
	CumulativeGasUsed    uint64
	Nonce                uint64
	Input                []byte
	Type                 int
	ContractAddress      *Address // nil unless the transaction created a contract
	Status               bool
	LogCount             int // logs the receipt holds; keeps Get Transaction Logs counts cheap
}

// BlockService is what the API reads of blocks.
type BlockService interface {
	// FindBlock returns the block at number; with full set, its transactions
	// too. It returns ENOTFOUND if the block is not indexed.
	FindBlock(ctx context.Context, chain Chain, number uint64, full bool) (*Block, error)

	// LatestBlock returns the highest indexed block number of chain. It
	// returns ENOTFOUND if nothing is indexed for chain.
	LatestBlock(ctx context.Context, chain Chain) (uint64, error)

	// Rewrites reports what was rewritten of chain's stored blocks: a
	// rewind, or a block written at a height that held one or was rewound.
	// mark is the chain's rewrite mark now, which grows with each rewrite
	// and is 0 before the first; lowest is the lowest height the rewrites
	// after since reached, NoRewrite when there were none. The API reads it
	// to drop the answers it keeps about blocks that changed.
	Rewrites(ctx context.Context, chain Chain, since uint64) (mark, lowest uint64, err error)

	// BlockAtTime returns the number of chain's first stored block stamped
	// at or after the unix second ts when after is set, else of its last
	// stored block stamped at or before ts; ok is false when there is none.
	// These are the two seeks that turn a datetime range into a block range
	// (TraceFilter.BlockRange): exports walk such a range by blocks.
	BlockAtTime(ctx context.Context, chain Chain, ts int64, after bool) (number uint64, ok bool, err error)
}

// NoRewrite is the lowest height of Rewrites when nothing was rewritten.
const NoRewrite = ^uint64(0)
