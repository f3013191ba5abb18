package chainquery

import (
	"context"
	"fmt"
	"math"
	"time"
)

// SOLDecimals is the decimals of SOL: a balance is lamports / 10^9.
const SOLDecimals = 9

// SOLBalanceChange is an account's SOL balance at the end of a block that
// changed it. One row per account and block, not per transaction: every
// transaction of a block shares the block's time, so a snapshot at any time
// sees only the block's last balance, and a block of 2021 had ~3,500-4,500
// balance changes of ~1,350 accounts (docs/solana.md, "SOL balances").
type SOLBalanceChange struct {
	Account   PublicKey
	Slot      uint64
	BlockTime time.Time
	Lamports  uint64
}

// SOLChanges are the SOL balance changes of a batch of blocks. A batch
// written with them holds every change of its blocks from First on: the
// store answers SOL balances only over the blocks whose changes it holds
// without a gap.
type SOLChanges struct {
	First   SolanaCursor // the batch's first block: slot and time
	Changes []*SOLBalanceChange
}

// Check returns an error for a change a store cannot keep: stores keep
// lamports as signed 64-bit integers, and all of SOL's supply is ~6*10^17
// lamports, so a larger balance is a misread and must stop the ingester.
func (c *SOLChanges) Check() error {
	for _, x := range c.Changes {
		if x.Lamports > math.MaxInt64 {
			return fmt.Errorf("account %s at slot %d: a balance of %d lamports is more than all the SOL there is", x.Account, x.Slot, x.Lamports)
		}
	}
	return nil
}

// SolanaWrite is one batch of the Solana ingester, written in one
// transaction: its token balance changes, its SOL balance changes when the
// ingester reads them (nil otherwise), and the cursor after its last block.
type SolanaWrite struct {
	Tokens []*TokenBalanceChange
	SOL    *SOLChanges
	Cursor SolanaCursor
}

// SOLBalance is the answer of SOL Balance by Account.
type SOLBalance struct {
	Account     PublicKey
	Lamports    uint64
	LastUpdated time.Time
	Slot        uint64
}

// Balance returns the balance in SOL as an exact decimal.
func (b *SOLBalance) Balance() string { return FormatUnits(b.Lamports, SOLDecimals) }

// SOLBalanceFilter asks for an account's SOL balance at a snapshot time.
type SOLBalanceFilter struct {
	Account PublicKey
	At      time.Time
}

// SOLRange is the stretch of blocks whose SOL balance changes a store holds
// without a gap: ok false when it holds none.
type SOLRange struct {
	FromSlot, ThroughSlot uint64
	From, Through         time.Time // the blocks' times
}

// SOLBalanceService is what the API reads of SOL balances.
type SOLBalanceService interface {
	// FindSOLBalance returns the account's balance after its latest change
	// at or before f.At within the stored range. It returns ENOTFOUND when
	// f.At is outside that range (the message says which it is), or when
	// the account did not change within it up to f.At: its balance before
	// the range is not known.
	FindSOLBalance(ctx context.Context, f SOLBalanceFilter) (*SOLBalance, error)
}

// SOLNotFound returns the ENOTFOUND answer of FindSOLBalance for a snapshot
// at at, when the store holds the changes of r (ok false: none) and found no
// change of account at or before at.
func SOLNotFound(account PublicKey, at time.Time, r SOLRange, ok bool) error {
	switch {
	case !ok:
		return Errorf(ENOTFOUND, "no SOL balances are indexed yet")
	case at.After(r.Through):
		return Errorf(ENOTFOUND, "datetime_filter is later than the indexed history: SOL balances are indexed up to %s UTC", FormatBalanceDatetime(r.Through))
	case at.Before(r.From):
		return Errorf(ENOTFOUND, "datetime_filter is earlier than the indexed history: SOL balances are indexed from %s UTC", FormatBalanceDatetime(r.From))
	}
	return Errorf(ENOTFOUND, "the SOL balance of account %s did not change between %s UTC, where SOL balances are indexed from, and datetime_filter, so it is not known",
		account, FormatBalanceDatetime(r.From))
}
