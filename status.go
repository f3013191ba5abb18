package chainquery

import "context"

// IndexStatus is what a store holds: how far each chain is indexed. GET
// /api/v1/customer/status serves it, so that a client can tell which blocks
// and times the other endpoints can answer for.
type IndexStatus struct {
	// Chains are the EVM chains of which blocks are stored, in the order of
	// EVMChains; a chain with none is left out.
	Chains []*ChainStatus

	// Solana is the cursor of the token balances, nil when none are
	// indexed: balances are complete up to its slot and time.
	Solana *SolanaCursor
}

// ChainStatus is the indexed range of one EVM chain.
type ChainStatus struct {
	Chain      Chain
	FirstBlock uint64 // the lowest stored block
	LastBlock  uint64 // the highest: Get Latest Block's answer
	LastTime   int64  // LastBlock's timestamp, unix seconds

	// BlockTime is the mean time between the last stored blocks, in
	// seconds, over up to TraceCountBlocks (100) of them: a lag in blocks
	// times it is the lag in seconds, as /readyz's --ready-max-lag counts
	// it. 0 when a single block is stored.
	BlockTime float64

	// TracesFrom is the lowest stored block holding a trace, nil when no
	// stored block holds one (traces off, or not ingested yet);
	// TracesFromTime is its timestamp. Traces are decided from the data:
	// blocks stored with traces off, or without calls, hold none.
	TracesFrom     *uint64
	TracesFromTime int64
}

// StatusService reads the indexed ranges of a store.
type StatusService interface {
	// IndexStatus returns what the store holds of each chain. It reads
	// what the API reads (a replica, where the store has one).
	IndexStatus(ctx context.Context) (*IndexStatus, error)
}
