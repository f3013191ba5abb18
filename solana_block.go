package chainquery

import "time"

// SolanaBlock is one Solana block as the Solana ingester stores it: the
// token balance changes of its successful transactions, and what the cursor
// records of it. A Solana source decodes it from the node's getBlock answer.
type SolanaBlock struct {
	Slot      uint64
	Blockhash string    // base58, as the node answered it
	Time      time.Time // the block's time; zero when the node recorded none (very old slots)

	// Changes are the block's token balance changes in block order. Nodes
	// before 2022 left owners out of their answers; a change whose entry
	// names no owner has the owner that the block's earlier entries named
	// for its account, and a nil Owner when none did: carrying an owner from
	// earlier blocks (or from the store) is the ingester's part, since only
	// it sees the blocks in slot order.
	Changes []*TokenBalanceChange

	// SOL are the block's SOL balance changes, when the source was asked
	// for them (nil otherwise; empty when none changed).
	SOL []*SOLBalanceChange

	// Owners maps each token account whose entries in the block name an
	// owner to the last owner named: what the ingester carries to the
	// changes of later blocks that name none.
	Owners map[PublicKey]PublicKey
}
