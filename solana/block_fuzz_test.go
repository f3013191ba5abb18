package solana_test

import (
	"testing"

	"github.com/chainquery/chainquery/solana"
)

// FuzzDecodeBlock feeds arbitrary getBlock answers to the block decoder and
// the token balance extraction: no answer may panic (an ingester would stop
// on that slot forever); errors are fine.
func FuzzDecodeBlock(f *testing.F) {
	const (
		a    = "4fYNw3dojWmQ4dXtSGE9epjRGy9pFSx62YypT7avPYvA"
		b    = "8HGyAAB1yoM1ttS7pXjHMa3dukTFGQggnFFH3hJZgzQh"
		mint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	)
	bal := func(idx, amount string) string {
		return `{"accountIndex":` + idx + `,"mint":"` + mint + `","owner":"` + a + `","uiTokenAmount":{"amount":"` + amount + `","decimals":6}}`
	}
	for _, s := range []string{
		`{"blockhash":"` + a + `","blockTime":1700000000,"transactions":[{"transaction":{"message":{"accountKeys":["` + a + `","` + b + `"]}},"meta":{"err":null,"preTokenBalances":[` + bal("1", "5") + `],"postTokenBalances":[` + bal("1", "7") + `]}}]}`,
		`{"blockTime":1,"transactions":[{"version":0,"transaction":{"message":{"accountKeys":[{"pubkey":"` + a + `","writable":true}]}},"meta":{"err":null,"loadedAddresses":{"writable":["` + b + `"],"readonly":[]},"preTokenBalances":[],"postTokenBalances":[` + bal("1", "18446744073709551615") + `]}}]}`,
		`{"blockTime":null,"transactions":[{"meta":null}]}`,
		`{"transactions":[{"transaction":{"message":{"accountKeys":[]}},"meta":{"err":null,"postTokenBalances":[` + bal("9", "1") + `]}}]}`,
		`null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		blk, err := solana.DecodeBlock([]byte(raw))
		if err != nil {
			return
		}
		solana.NewExtractor().Changes(blk, 1)
	})
}
