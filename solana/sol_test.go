package solana_test

import (
	"encoding/json"
	"testing"

	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// TestSOLChangesBlocks checks SOLChanges on the two complete mainnet
// blocks against a second reading from generic JSON that works by sums:
// each account's balance is its first preBalance, then follows the
// transactions' postBalances, and the rewards paid at freeze (fees, rent
// handed out) add their lamports to it. That the result equals each such
// reward's postBalance is what shows those rewards come after the
// transactions, which SOLChanges relies on.
func TestSOLChangesBlocks(t *testing.T) {
	for _, tc := range []struct {
		file     string
		slot     uint64
		accounts int // accounts whose balance changed, as a Python reading of the file counts them
	}{
		{"mainnet_getBlock_110130000.full.json.gz", 110130000, 1393},
		{"mainnet_getBlock_110360000.full.json.gz", 110360000, 1371},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw := solanatest.ReadBlock(t, tc.file)
			b, err := solana.DecodeBlock(raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := solana.SOLChanges(b, tc.slot)
			if err != nil {
				t.Fatal(err)
			}
			want := sumBalances(t, raw)
			if len(got) != tc.accounts || len(want) != tc.accounts {
				t.Fatalf("%d changes, the sums %d, want %d", len(got), len(want), tc.accounts)
			}
			seen := map[string]bool{}
			for _, c := range got {
				k := c.Account.String()
				if seen[k] {
					t.Fatalf("account %s twice", k)
				}
				seen[k] = true
				if w, ok := want[k]; !ok || w != c.Lamports {
					t.Errorf("account %s: %d lamports, the sums say %d (known %v)", k, c.Lamports, w, ok)
				}
				if c.Slot != tc.slot || !c.BlockTime.Equal(b.Time()) {
					t.Errorf("account %s: slot %d at %v", k, c.Slot, c.BlockTime)
				}
			}
		})
	}
}

// sumBalances recomputes the block's end balances of the accounts that
// changed, from generic JSON.
func sumBalances(t *testing.T, raw []byte) map[string]uint64 {
	t.Helper()
	var env struct {
		Result struct { // the getBlock result, as ReadBlock gives it
			Transactions []struct {
				Transaction struct {
					Message struct {
						AccountKeys []json.RawMessage `json:"accountKeys"`
					} `json:"message"`
				} `json:"transaction"`
				Meta struct {
					PreBalances, PostBalances []uint64
					LoadedAddresses           *struct{ Writable, Readonly []string }
				} `json:"meta"`
			} `json:"transactions"`
			Rewards []struct {
				Pubkey      string
				Lamports    int64
				PostBalance uint64
				RewardType  string
			} `json:"rewards"`
		}
	}
	if err := json.Unmarshal(raw, &env.Result); err != nil {
		t.Fatal(err)
	}
	bal, changed := map[string]uint64{}, map[string]bool{}
	for i, tx := range env.Result.Transactions {
		var keys []string
		for _, k := range tx.Transaction.Message.AccountKeys {
			var s string
			var o struct{ Pubkey string }
			if json.Unmarshal(k, &s) != nil {
				if err := json.Unmarshal(k, &o); err != nil {
					t.Fatal(err)
				}
				s = o.Pubkey
			}
			keys = append(keys, s)
		}
		if la := tx.Meta.LoadedAddresses; la != nil {
			keys = append(append(keys, la.Writable...), la.Readonly...)
		}
		for j, k := range keys {
			pre, post := tx.Meta.PreBalances[j], tx.Meta.PostBalances[j]
			if b, ok := bal[k]; ok && b != pre {
				t.Fatalf("transaction %d: %s starts at %d, the one before left it at %d", i, k, pre, b)
			}
			bal[k] = post
			if pre != post {
				changed[k] = true
			}
		}
	}
	out := map[string]uint64{}
	for k := range changed {
		out[k] = bal[k]
	}
	for _, r := range env.Result.Rewards {
		if r.Lamports == 0 {
			continue
		}
		atFreeze := r.RewardType == "Fee" || (r.RewardType == "Rent" && r.Lamports > 0)
		if b, ok := out[r.Pubkey]; ok && atFreeze {
			if uint64(int64(b)+r.Lamports) != r.PostBalance {
				t.Fatalf("%s reward of %d to %s: postBalance %d, but the transactions left %d", r.RewardType, r.Lamports, r.Pubkey, r.PostBalance, b)
			}
		}
		if !changed[r.Pubkey] || atFreeze {
			out[r.Pubkey] = r.PostBalance
		}
	}
	return out
}
