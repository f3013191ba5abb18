package solana_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// want is a change as the test recomputes it, in text form.
type want struct {
	account, owner, mint string
	amount               uint64
	tx                   int
}

// recompute derives the changes of a getBlock result from generic JSON, a
// second reading independent of the package's typed decoding.
func recompute(t *testing.T, raw []byte) []want {
	t.Helper()
	var b map[string]any
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	var out []want
	for i, tx := range b["transactions"].([]any) {
		meta := tx.(map[string]any)["meta"].(map[string]any)
		if meta["err"] != nil {
			continue
		}
		var keys []string
		msg := tx.(map[string]any)["transaction"].(map[string]any)["message"].(map[string]any)
		for _, k := range msg["accountKeys"].([]any) {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			} else {
				keys = append(keys, k.(map[string]any)["pubkey"].(string))
			}
		}
		if la, ok := meta["loadedAddresses"].(map[string]any); ok {
			for _, part := range []string{"writable", "readonly"} {
				for _, k := range la[part].([]any) {
					keys = append(keys, k.(string))
				}
			}
		}
		amounts := func(list string) map[int]map[string]any {
			m := map[int]map[string]any{}
			entries, _ := meta[list].([]any)
			for _, e := range entries {
				e := e.(map[string]any)
				m[int(e["accountIndex"].(float64))] = e
			}
			return m
		}
		pre, post := amounts("preTokenBalances"), amounts("postTokenBalances")
		amount := func(e map[string]any) uint64 {
			n, _ := strconv.ParseUint(e["uiTokenAmount"].(map[string]any)["amount"].(string), 10, 64)
			return n
		}
		owner := func(e map[string]any) string { s, _ := e["owner"].(string); return s }
		for idx, e := range post {
			if p, ok := pre[idx]; !ok || amount(p) != amount(e) {
				out = append(out, want{keys[idx], owner(e), e["mint"].(string), amount(e), i})
			}
		}
		for idx, e := range pre {
			if _, ok := post[idx]; !ok {
				out = append(out, want{keys[idx], owner(e), e["mint"].(string), 0, i})
			}
		}
	}
	return out
}

func check(t *testing.T, raw []byte, slot uint64) []*chainquery.TokenBalanceChange {
	t.Helper()
	b, err := solana.DecodeBlock(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := solana.NewExtractor().Changes(b, slot)
	if err != nil {
		t.Fatal(err)
	}
	exp := recompute(t, raw)
	set := map[want]int{}
	for _, w := range exp {
		set[w]++
	}
	for _, c := range got {
		owner := ""
		if c.Owner != nil {
			owner = c.Owner.String()
		}
		w := want{c.Account.String(), owner, c.Mint.String(), c.Amount, c.TxIndex}
		if set[w] == 0 {
			t.Errorf("unexpected change %+v", w)
		}
		set[w]--
		if c.Slot != slot || !c.BlockTime.Equal(b.Time()) {
			t.Errorf("slot/time %d %v", c.Slot, c.BlockTime)
		}
	}
	if len(got) != len(exp) {
		t.Errorf("%d changes, want %d", len(got), len(exp))
	}
	return got
}

// TestChangesTransactions extracts the recorded single transactions (json
// and jsonParsed, legacy and version 0 with loaded addresses, Token-2022),
// each wrapped in a one-transaction block.
func TestChangesTransactions(t *testing.T) {
	pattern := testdata(t, "getTransaction", "*.json")
	files, _ := filepath.Glob(pattern)
	if len(files) == 0 { // the data are there (testdata checked), but not these
		t.Fatalf("no getTransaction fixtures match %s", pattern)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if raw[0] == '[' { // a batch answer of one
				var batch []json.RawMessage
				if err := json.Unmarshal(raw, &batch); err != nil {
					t.Fatal(err)
				}
				raw = batch[0]
			}
			var resp struct {
				Result struct {
					Slot      uint64          `json:"slot"`
					BlockTime int64           `json:"blockTime"`
					Tx        json.RawMessage `json:"transaction"`
					Meta      json.RawMessage `json:"meta"`
				} `json:"result"`
			}
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Fatal(err)
			}
			r := resp.Result
			block := fmt.Sprintf(`{"blockTime":%d,"transactions":[{"transaction":%s,"meta":%s}]}`, r.BlockTime, r.Tx, r.Meta)
			check(t, []byte(block), r.Slot)
		})
	}
}

// TestChangesBlocks extracts the trimmed and complete recorded blocks.
func TestChangesBlocks(t *testing.T) {
	for _, tc := range []struct {
		file string
		slot uint64
		min  int
	}{
		{"chainstorage_block_100000000.trimmed.json", 100000000, 1},
		{"chainstorage_block_154808473_versioned_tx.trimmed.json", 154808473, 1},
		{"chainstorage_block_241043141.trimmed.json", 241043141, 0},
		{"mainnet_getBlock_110130000.full.json.gz", 110130000, 50},
		{"mainnet_getBlock_110360000.full.json.gz", 110360000, 20},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw := solanatest.ReadBlock(t, tc.file)
			if got := check(t, raw, tc.slot); len(got) < tc.min {
				t.Fatalf("only %d changes", len(got))
			}
		})
	}
}

// synthetic builds a block of transactions from (err, pre, post) triples
// over fixed keys, for the cases the recorded data lacks.
func synthetic(blockTime int64, txs ...string) []byte {
	s := fmt.Sprintf(`{"blockTime":%d,"transactions":[`, blockTime)
	for i, tx := range txs {
		if i > 0 {
			s += ","
		}
		s += `{"transaction":{"message":{"accountKeys":["` + acctA + `","` + acctB + `"]}},"meta":` + tx + `}`
	}
	return []byte(s + "]}")
}

const (
	acctA = "4fYNw3dojWmQ4dXtSGE9epjRGy9pFSx62YypT7avPYvA"
	acctB = "Bxw6mCzh4vb3bwL7K29AHZxJHzQsgNHYVMq2Ru1GZHMC"
	mintU = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	ownrW = "BNxtGx5mGZ4ZQA4b4RLoU47Kv4LmhxFsnk6LEJBFmUMR"
)

func bal(idx int, amount, owner string) string {
	o := ""
	if owner != "" {
		o = `"owner":"` + owner + `",`
	}
	return fmt.Sprintf(`{"accountIndex":%d,"mint":"%s",%s"uiTokenAmount":{"amount":"%s","decimals":6}}`, idx, mintU, o, amount)
}

func meta(err string, pre, post []string) string {
	j := func(l []string) string {
		s := "["
		for i, e := range l {
			if i > 0 {
				s += ","
			}
			s += e
		}
		return s + "]"
	}
	return fmt.Sprintf(`{"err":%s,"preTokenBalances":%s,"postTokenBalances":%s}`, err, j(pre), j(post))
}

// TestChangesSynthetic covers a failed transaction, two changes to one
// account in one block, a closed account, an unchanged one and an owner
// carried from an earlier block.
func TestChangesSynthetic(t *testing.T) {
	e := solana.NewExtractor()
	b1, _ := solana.DecodeBlock(synthetic(1000,
		meta("null", nil, []string{bal(0, "5", ownrW)}),                                                 // A created with 5
		meta(`{"InstructionError":[0,"Custom"]}`, []string{bal(0, "5", "")}, []string{bal(0, "9", "")}), // failed
		meta("null", []string{bal(0, "5", ownrW)}, []string{bal(0, "7", ownrW)}),                        // A 5 -> 7
		meta("null", []string{bal(1, "3", "")}, []string{bal(1, "3", "")}),                              // B unchanged
	))
	got, err := e.Changes(b1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Amount != 5 || got[0].TxIndex != 0 || got[1].Amount != 7 || got[1].TxIndex != 2 {
		t.Fatalf("block 1: %+v", got)
	}
	// Block 2: the node no longer says the owner; A is closed, B changes.
	b2, _ := solana.DecodeBlock(synthetic(2000,
		meta("null", []string{bal(0, "7", ""), bal(1, "3", "")}, []string{bal(1, "4", "")}),
	))
	got, err = e.Changes(b2, 12)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("block 2: %d changes", len(got))
	}
	byAcct := map[string]*chainquery.TokenBalanceChange{}
	for _, c := range got {
		byAcct[c.Account.String()] = c
	}
	if a := byAcct[acctA]; a == nil || a.Amount != 0 || a.Owner == nil || a.Owner.String() != ownrW {
		t.Fatalf("closed A: %+v", a)
	}
	if b := byAcct[acctB]; b == nil || b.Amount != 4 || b.Owner != nil {
		t.Fatalf("B (owner never said): %+v", b)
	}
	if _, err := solana.DecodeBlock([]byte("null")); err != solana.ErrNoBlock {
		t.Fatalf("null block: %v", err)
	}
}
