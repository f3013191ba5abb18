package chainquery

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// TokenBalanceChange is the balance of an SPL token account after one
// transaction that changed it.
type TokenBalanceChange struct {
	Account   PublicKey
	Owner     *PublicKey // nil where the node did not say and no earlier row did
	Mint      PublicKey
	Amount    uint64 // raw, in the token's smallest unit
	Decimals  int
	Slot      uint64
	TxIndex   int // position of the transaction in its block: the last one in a slot wins
	BlockTime time.Time
}

// Token is a token registry entry.
type Token struct {
	Mint     PublicKey
	Name     string
	Symbol   string
	Decimals int
}

// TokenBalance is the answer of Token Balance by Account.
type TokenBalance struct {
	AsOf        time.Time
	Owner       *PublicKey
	Mint        PublicKey
	Account     PublicKey
	TokenName   *string // filled only with include_metadata, when the registry knows the mint
	TokenSymbol *string
	Amount      uint64
	Decimals    int
	LastUpdated time.Time
	Slot        uint64
}

// Balance returns Amount / 10^Decimals as an exact decimal without trailing
// zeros ("12.956933", "0.5", "12"), fit to be written as a JSON number.
func (b *TokenBalance) Balance() string { return FormatUnits(b.Amount, b.Decimals) }

// FormatUnits writes amount / 10^decimals exactly, trimming trailing zeros.
func FormatUnits(amount uint64, decimals int) string {
	s := strconv.FormatUint(amount, 10)
	if decimals <= 0 {
		return s
	}
	if len(s) <= decimals {
		s = strings.Repeat("0", decimals-len(s)+1) + s
	}
	whole, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// TokenBalanceFilter asks for an account's balance at a snapshot time.
type TokenBalanceFilter struct {
	Account         PublicKey
	At              time.Time
	IncludeMetadata bool
}

// OwnerBalancesFilter asks for every token balance of an owner at a
// snapshot time, one page at a time.
type OwnerBalancesFilter struct {
	Owner           PublicKey
	At              time.Time
	IncludeMetadata bool
	Page
}

// TokenBalanceService is what the API reads of Solana token balances.
type TokenBalanceService interface {
	// FindTokenBalance returns the account's latest balance change at or
	// before f.At, with the registry's name and symbol when
	// f.IncludeMetadata is set. It returns ENOTFOUND if there is none, or if
	// f.At is later than what has been indexed (the message says up to when).
	FindTokenBalance(ctx context.Context, f TokenBalanceFilter) (*TokenBalance, error)

	// FindOwnerBalances returns one page of the balances at f.At of the
	// token accounts f.Owner owns then, ordered by the accounts' keys
	// (bytewise), and how many there are. An account is the owner's when
	// its latest change at or before f.At that names an owner names f.Owner;
	// its balance is FindTokenBalance's, zero included. It returns ENOTFOUND
	// if f.At is later than what has been indexed, as FindTokenBalance
	// does; an owner with no account is an empty page.
	FindOwnerBalances(ctx context.Context, f OwnerBalancesFilter) ([]*TokenBalance, int, error)
}

// SolanaCursor is how far Solana token balances are stored: the last block
// written. A resumed ingester starts after Slot once the node's block at Slot
// has Blockhash, and the snapshot query answers "indexed up to" BlockTime.
type SolanaCursor struct {
	Slot      uint64
	Blockhash string    // base58; empty when unknown (a cursor stored before blockhashes were recorded)
	BlockTime time.Time // the block's time
}

// TokenBalanceWriter is what the Solana ingester writes.
type TokenBalanceWriter interface {
	// WriteSolana stores a batch's token balance changes and SOL balance
	// changes and moves the Solana cursor to w.Cursor, in one transaction.
	// Writing a change that is already stored (same account, slot and, for
	// tokens, TxIndex) replaces it. A batch with SOL changes extends the
	// stored SOL range when the range ended at the stored cursor, and starts
	// a new one at w.SOL.First otherwise (a first batch, or one after
	// batches written without SOL changes: the gap is never answered).
	WriteSolana(ctx context.Context, w *SolanaWrite) error

	// WriteTokens inserts or replaces token registry entries (an imported
	// token list: the operator's word wins).
	WriteTokens(ctx context.Context, tokens []*Token) error

	// AddTokens inserts the entries of mints the registry does not know and
	// leaves known ones alone (what the ingester reads from the chain never
	// overrides an imported token list).
	AddTokens(ctx context.Context, tokens []*Token) error

	// SolanaCursor returns the cursor WriteSolana last recorded, ok
	// false when none: where a restarted ingester resumes, after checking
	// its blockhash against the node.
	SolanaCursor(ctx context.Context) (cursor SolanaCursor, ok bool, err error)

	// LatestOwner returns the owner of account's latest stored change that
	// names one, ok false when none does: changes whose node answer has no
	// owner keep the account's known owner rather than inventing one.
	LatestOwner(ctx context.Context, account PublicKey) (owner PublicKey, ok bool, err error)
}

// IndexedUpToError returns the ENOTFOUND answer for a snapshot later than
// the ingested history, which is indexed up to t (zero when nothing is).
func IndexedUpToError(t time.Time) error {
	if t.IsZero() {
		return Errorf(ENOTFOUND, "no token balances are indexed yet")
	}
	return Errorf(ENOTFOUND, "datetime_filter is later than the indexed history: token balances are indexed up to %s UTC", FormatBalanceDatetime(t))
}

// NoBalanceError returns the ENOTFOUND answer for an account with no balance
// at or before the snapshot.
func NoBalanceError(account PublicKey) error {
	return Errorf(ENOTFOUND, "no balance is indexed for token account %s at or before datetime_filter", account)
}
