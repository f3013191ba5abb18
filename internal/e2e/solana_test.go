package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/internal/pgtest"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
	"github.com/chainquery/chainquery/sqlite"
)

// solanaStore is what the test needs of a store: all of it.
type solanaStore = chainquery.Store

// TestSolanaMainnetBlocks ingests the two complete mainnet blocks through a
// local RPC server and asks the real HTTP handler for every token account
// they touch, at a snapshot after each block, comparing with balances
// recomputed from the blocks' JSON in the simplest way.
func TestSolanaMainnetBlocks(t *testing.T) {
	stores := map[string]func(t *testing.T) solanaStore{
		"sqlite": func(t *testing.T) solanaStore {
			db, err := sqlite.Open(filepath.Join(t.TempDir(), "db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		"postgres": openSolanaPostgres,
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) { testSolanaMainnet(t, open(t)) })
	}
}

func testSolanaMainnet(t *testing.T, store solanaStore) {
	ctx := context.Background()
	node := solanatest.NewServer(t)
	var raws []json.RawMessage
	for _, b := range solanatest.FullBlocks {
		raw := solanatest.ReadBlock(t, b.File)
		node.AddBlock(b.Slot, raw)
		raws = append(raws, raw)
	}
	last := solanatest.FullBlocks[1]
	lastTime := blockTime(t, raws[1])
	// An empty block an hour later moves the cursor past the snapshot that
	// follows the last real block, as the next blocks of the chain would.
	tail := last.Slot + 9000
	node.AddBlock(tail, json.RawMessage(fmt.Sprintf(`{"blockTime":%d,"transactions":[]}`, lastTime.Unix()+3600)))

	f, err := os.Open(solanatest.Testdata(t, "tokenlist", "solana.tokenlist.subset.json"))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := solana.ReadTokenList(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteTokens(ctx, tokens); err != nil {
		t.Fatal(err)
	}
	known := map[string]*chainquery.Token{}
	for _, tk := range tokens {
		known[tk.Mint.String()] = tk
	}

	from := solanatest.FullBlocks[0].Slot
	e := &ingest.SolanaLoop{Store: store, Source: solana.NewSource(solana.NewClient(node.URL), nil), From: &from, Window: 500_000}
	if err := e.Run(ctx); err != nil {
		t.Fatal(err)
	}

	key, hash := chainquery.NewAPIKey()
	if err := store.CreateAPIKey(ctx, &chainquery.APIKey{Name: "solana", Hash: hash, Endpoints: chainquery.Endpoints}); err != nil {
		t.Fatal(err)
	}
	now := lastTime.Add(3 * time.Hour)
	api := httptest.NewServer(cqhttp.NewServer(cqhttp.Config{Store: store, Now: func() time.Time { return now }}).Handler())
	defer api.Close()

	// One snapshot between the blocks, one after both.
	firstTime := blockTime(t, raws[0])
	withMeta := 0
	for i, at := range []time.Time{gridAfter(firstTime), gridAfter(lastTime)} {
		exp := expectBalances(t, raws[:i+1], []uint64{solanatest.FullBlocks[0].Slot, last.Slot})
		found := 0
		for acct, w := range exp {
			path := "/api/v1/customer/solana/token-balances/token-account/" + acct +
				"?include_metadata=true&datetime_filter=" + url.QueryEscape(at.Format(time.RFC3339))
			status, got := getJSON(t, api.URL+path, key)
			if !w.changed {
				if status != http.StatusNotFound {
					t.Errorf("%s at %s: status %d for an account whose balance never changed", acct, at, status)
				}
				continue
			}
			if status != http.StatusOK {
				t.Errorf("%s at %s: status %d: %v", acct, at, status, got)
				continue
			}
			found++
			wantBal := chainquery.FormatUnits(w.amount, w.decimals)
			if got["balance_source"] != strconv.FormatUint(w.amount, 10) || got["balance"] != wantBal ||
				got["token_address"] != w.mint || got["token_account"] != acct ||
				got["block_slot_last_updated"] != strconv.FormatUint(w.slot, 10) ||
				got["datetime_last_updated"] != chainquery.FormatBalanceDatetime(w.time) ||
				got["as_of_datetime"] != chainquery.FormatBalanceDatetime(at) {
				t.Errorf("%s at %s: got %v, want %+v", acct, at, got, w)
			}
			if (w.owner == "" && got["account_owner"] != nil) || (w.owner != "" && got["account_owner"] != w.owner) {
				t.Errorf("%s: owner %v, want %q", acct, got["account_owner"], w.owner)
			}
			if tk := known[w.mint]; tk != nil {
				withMeta++
				if got["token_name"] != tk.Name || got["token_symbol"] != tk.Symbol {
					t.Errorf("%s: metadata %v %v, want %q %q", acct, got["token_name"], got["token_symbol"], tk.Name, tk.Symbol)
				}
			} else if got["token_name"] != nil || got["token_symbol"] != nil {
				t.Errorf("%s: metadata for a mint the registry does not know: %v", acct, got)
			}
		}
		t.Logf("snapshot %s: %d accounts touched, %d with a balance", at.Format(time.RFC3339), len(exp), found)
		if found < 20 {
			t.Fatalf("only %d accounts answered", found)
		}
	}
	if withMeta == 0 {
		t.Error("no answer carried registry metadata")
	}
	// Later than the cursor: 404 that says up to when.
	at := gridAfter(lastTime.Add(2 * time.Hour))
	now = at.Add(2 * time.Hour)
	for acct := range expectBalances(t, raws[:1], []uint64{from}) {
		status, got := getJSON(t, api.URL+"/api/v1/customer/solana/token-balances/token-account/"+acct+
			"?datetime_filter="+url.QueryEscape(at.Format(time.RFC3339)), key)
		if status != http.StatusNotFound {
			t.Errorf("after the cursor: status %d: %v", status, got)
		}
		break
	}
}

// expected is an account's balance after the blocks, recomputed.
type expected struct {
	amount         uint64
	decimals       int
	mint, owner    string // owner: the last one seen by the last change
	seenOwner      string
	slot           uint64
	time           time.Time
	changed        bool
	lastSeenAmount uint64
}

// expectBalances walks the blocks' successful transactions in order and
// keeps, per account, the last postTokenBalances entry (or 0 for an account
// in pre but not in post), noting where the amount actually moved.
func expectBalances(t *testing.T, raws []json.RawMessage, slots []uint64) map[string]*expected {
	out := map[string]*expected{}
	for bi, raw := range raws {
		var full struct {
			BlockTime    int64 `json:"blockTime"`
			Transactions []struct {
				Transaction struct {
					Message struct {
						AccountKeys []struct {
							Pubkey string `json:"pubkey"`
						} `json:"accountKeys"`
					} `json:"message"`
				} `json:"transaction"`
				Meta struct {
					Err  any       `json:"err"`
					Pre  []tbEntry `json:"preTokenBalances"`
					Post []tbEntry `json:"postTokenBalances"`
				} `json:"meta"`
			} `json:"transactions"`
		}
		if err := json.Unmarshal(raw, &full); err != nil {
			t.Fatal(err)
		}
		bt := time.Unix(full.BlockTime, 0).UTC()
		for _, tx := range full.Transactions {
			if tx.Meta.Err != nil {
				continue
			}
			keys := tx.Transaction.Message.AccountKeys
			inPost := map[int]bool{}
			for _, p := range tx.Meta.Post {
				inPost[p.Index] = true
				w := account(out, keys[p.Index].Pubkey)
				amount, _ := strconv.ParseUint(p.Amount.Amount, 10, 64)
				before := w.lastSeenAmount
				hadBefore := false
				for _, q := range tx.Meta.Pre {
					if q.Index == p.Index {
						hadBefore = true
						before, _ = strconv.ParseUint(q.Amount.Amount, 10, 64)
					}
				}
				for _, q := range tx.Meta.Pre {
					if q.Index == p.Index && q.Owner != "" {
						w.seenOwner = q.Owner
					}
				}
				if p.Owner != "" {
					w.seenOwner = p.Owner
				}
				w.lastSeenAmount = amount
				if !hadBefore || before != amount {
					w.amount, w.decimals, w.mint, w.slot, w.time, w.changed = amount, p.Amount.Decimals, p.Mint, slots[bi], bt, true
					w.owner = w.seenOwner
				}
			}
			for _, q := range tx.Meta.Pre {
				w := account(out, keys[q.Index].Pubkey)
				if q.Owner != "" {
					w.seenOwner = q.Owner
				}
				if !inPost[q.Index] {
					w.owner = w.seenOwner
					w.amount, w.decimals, w.mint, w.slot, w.time, w.changed = 0, q.Amount.Decimals, q.Mint, slots[bi], bt, true
					w.lastSeenAmount = 0
				}
			}
		}
	}
	return out
}

type tbEntry struct {
	Index  int    `json:"accountIndex"`
	Mint   string `json:"mint"`
	Owner  string `json:"owner"`
	Amount struct {
		Amount   string `json:"amount"`
		Decimals int    `json:"decimals"`
	} `json:"uiTokenAmount"`
}

func account(m map[string]*expected, k string) *expected {
	if m[k] == nil {
		m[k] = &expected{}
	}
	return m[k]
}

func blockTime(t *testing.T, raw json.RawMessage) time.Time {
	var b struct {
		BlockTime int64 `json:"blockTime"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	return time.Unix(b.BlockTime, 0).UTC()
}

// gridAfter returns the first point of the 10-minute grid after t.
func gridAfter(t time.Time) time.Time { return t.Truncate(10 * time.Minute).Add(10 * time.Minute) }

// getJSON returns the status and the body decoded with numbers as text.
func getJSON(t *testing.T, u, key string) (int, map[string]any) {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("apikey", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v: %s", u, err, raw)
	}
	for k, x := range v {
		if n, ok := x.(json.Number); ok {
			v[k] = n.String()
		}
	}
	return resp.StatusCode, v
}

// openSolanaPostgres opens a PostgreSQL store on a fresh database of the
// primary scripts/pg started (pgtest); without one it skips, or fails in CI.
func openSolanaPostgres(t *testing.T) solanaStore {
	_, dsn := pgtest.NewDatabase(t, pgtest.Admin(t))
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
