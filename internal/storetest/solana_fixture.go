package storetest

import (
	"time"

	"github.com/chainquery/chainquery"
)

// Key returns a deterministic test Solana address.
func Key(tag, n byte) chainquery.PublicKey {
	var k chainquery.PublicKey
	k[0], k[1], k[31] = tag, 0x5a, n
	return k
}

// Named Solana addresses of the fixture.
var (
	USDCMint    = mustKey("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v") // in the registry
	UnknownMint = Key(0x02, 2)                                            // not in the registry
	Wallet      = Key(0x03, 3)
	WalletAcct  = Key(0x04, 4) // USDC account of Wallet: several changes
	OrphanAcct  = Key(0x05, 5) // UnknownMint account whose owner was never said
	ClosedAcct  = Key(0x06, 6) // dropped to 0
	UnknownAcct = Key(0x07, 7) // never seen
	MovedAcct   = Key(0x08, 8) // Wallet's until SolanaT1, then NewOwner's
	NewOwner    = Key(0x09, 9)
)

func mustKey(s string) chainquery.PublicKey {
	k, err := chainquery.ParsePublicKey("key", s)
	if err != nil {
		panic(err)
	}
	return k
}

// Solana fixture times: every change lands between two 10-minute grid points.
var (
	SolanaT0         = time.Date(2025, 6, 1, 11, 55, 0, 0, time.UTC) // first change of WalletAcct
	SolanaT1         = time.Date(2025, 6, 1, 12, 5, 30, 0, time.UTC) // two changes in one slot
	SolanaT2         = time.Date(2025, 6, 1, 12, 25, 0, 0, time.UTC) // last change
	SolanaCursorTime = time.Date(2025, 6, 1, 13, 0, 0, 0, time.UTC)
)

// SolanaCursor is where the fixture's Solana cursor stands: a block after
// the last change.
var SolanaCursor = chainquery.SolanaCursor{
	Slot:      250_000_400,
	Blockhash: "7FRPQq2kvN5NWudpiHstcpQnxEDFeDBJN54sU1TeTF9t",
	BlockTime: SolanaCursorTime,
}

// TokenBalanceChanges returns the Solana fixture.
func TokenBalanceChanges() []*chainquery.TokenBalanceChange {
	w, o := Wallet, NewOwner
	return []*chainquery.TokenBalanceChange{
		{Account: WalletAcct, Owner: &w, Mint: USDCMint, Amount: 1_000_000, Decimals: 6, Slot: 250_000_000, TxIndex: 12, BlockTime: SolanaT0},
		// Two changes to one account in one slot: the later transaction wins.
		{Account: WalletAcct, Owner: &w, Mint: USDCMint, Amount: 5_000_000, Decimals: 6, Slot: 250_000_100, TxIndex: 3, BlockTime: SolanaT1},
		{Account: WalletAcct, Owner: &w, Mint: USDCMint, Amount: 12_956_933, Decimals: 6, Slot: 250_000_100, TxIndex: 7, BlockTime: SolanaT1},
		{Account: WalletAcct, Owner: &w, Mint: USDCMint, Amount: 18_446_744_073_709_551_615, Decimals: 6, Slot: 250_000_300, TxIndex: 0, BlockTime: SolanaT2},
		{Account: OrphanAcct, Owner: nil, Mint: UnknownMint, Amount: 5, Decimals: 0, Slot: 250_000_000, TxIndex: 1, BlockTime: SolanaT0},
		{Account: ClosedAcct, Owner: &w, Mint: USDCMint, Amount: 7, Decimals: 6, Slot: 250_000_000, TxIndex: 2, BlockTime: SolanaT0},
		{Account: ClosedAcct, Owner: &w, Mint: USDCMint, Amount: 0, Decimals: 6, Slot: 250_000_100, TxIndex: 9, BlockTime: SolanaT1},
		// An account handed to another owner (SetAuthority), then changed
		// without a node answer naming its owner: still NewOwner's.
		{Account: MovedAcct, Owner: &w, Mint: UnknownMint, Amount: 3, Decimals: 0, Slot: 250_000_000, TxIndex: 4, BlockTime: SolanaT0},
		{Account: MovedAcct, Owner: &o, Mint: UnknownMint, Amount: 3, Decimals: 0, Slot: 250_000_100, TxIndex: 5, BlockTime: SolanaT1},
		{Account: MovedAcct, Owner: nil, Mint: UnknownMint, Amount: 2, Decimals: 0, Slot: 250_000_300, TxIndex: 1, BlockTime: SolanaT2},
	}
}

// SOLFirst is the first block of the fixture's SOL range, which runs to
// SolanaCursor: the block of the first token balance change.
var SOLFirst = chainquery.SolanaCursor{Slot: 250_000_000, BlockTime: SolanaT0}

// SOLChanges returns the fixture's SOL balance changes: the wallet's, in
// the blocks of its token account's changes.
func SOLChanges() []*chainquery.SOLBalanceChange {
	return []*chainquery.SOLBalanceChange{
		{Account: Wallet, Slot: 250_000_000, BlockTime: SolanaT0, Lamports: 2_500_000_000},
		{Account: Wallet, Slot: 250_000_100, BlockTime: SolanaT1, Lamports: 1_234_567_890},
		{Account: WalletAcct, Slot: 250_000_100, BlockTime: SolanaT1, Lamports: 2_039_280}, // the token account's rent deposit
	}
}

// Tokens returns the token registry fixture.
func Tokens() []*chainquery.Token {
	return []*chainquery.Token{{Mint: USDCMint, Name: "USD Coin", Symbol: "USDC", Decimals: 6}}
}
