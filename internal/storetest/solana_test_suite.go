package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

func testTokenBalances(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	at := func(acct chainquery.PublicKey, tm time.Time, meta bool) (*chainquery.TokenBalance, error) {
		return s.FindTokenBalance(ctx, chainquery.TokenBalanceFilter{Account: acct, At: tm, IncludeMetadata: meta})
	}
	grid := func(h, m int) time.Time { return time.Date(2025, 6, 1, h, m, 0, 0, time.UTC) }
	for _, c := range []struct {
		name   string
		acct   chainquery.PublicKey
		at     time.Time
		meta   bool
		amount uint64
		slot   uint64
		time   time.Time
	}{
		{"FirstChange", WalletAcct, grid(12, 0), false, 1_000_000, 250_000_000, SolanaT0},
		{"LastInSlotWins", WalletAcct, grid(12, 10), false, 12_956_933, 250_000_100, SolanaT1},
		{"Inclusive", WalletAcct, SolanaT1, false, 12_956_933, 250_000_100, SolanaT1},
		{"U64Max", WalletAcct, grid(12, 30), true, 18_446_744_073_709_551_615, 250_000_300, SolanaT2},
		{"AtCursor", WalletAcct, SolanaCursorTime, false, 18_446_744_073_709_551_615, 250_000_300, SolanaT2},
		{"Closed", ClosedAcct, grid(12, 10), false, 0, 250_000_100, SolanaT1},
		{"NoOwner", OrphanAcct, grid(12, 0), true, 5, 250_000_000, SolanaT0},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := at(c.acct, c.at, c.meta)
			must(t, err)
			if b.Amount != c.amount || b.Slot != c.slot || !b.LastUpdated.Equal(c.time) || !b.AsOf.Equal(c.at) || b.Account != c.acct {
				t.Fatalf("got %+v", b)
			}
		})
	}
	t.Run("Fields", func(t *testing.T) {
		b, err := at(WalletAcct, grid(12, 10), false)
		must(t, err)
		if b.Owner == nil || *b.Owner != Wallet || b.Mint != USDCMint || b.Decimals != 6 || b.Balance() != "12.956933" {
			t.Fatalf("got %+v", b)
		}
		if b.TokenName != nil || b.TokenSymbol != nil {
			t.Fatalf("metadata without include_metadata: %v %v", *b.TokenName, *b.TokenSymbol)
		}
	})
	t.Run("Metadata", func(t *testing.T) {
		b, err := at(WalletAcct, grid(12, 10), true)
		must(t, err)
		if b.TokenName == nil || *b.TokenName != "USD Coin" || b.TokenSymbol == nil || *b.TokenSymbol != "USDC" {
			t.Fatalf("got %+v", b)
		}
		b, err = at(OrphanAcct, grid(12, 0), true)
		must(t, err)
		if b.Owner != nil || b.TokenName != nil || b.TokenSymbol != nil {
			t.Fatalf("unknown mint or owner was filled in: %+v", b)
		}
	})
	t.Run("AddTokensKeepsKnown", func(t *testing.T) {
		must(t, s.AddTokens(ctx, []*chainquery.Token{
			{Mint: USDCMint, Name: "from chain", Symbol: "X", Decimals: 6},
			{Mint: UnknownMint, Name: "Unknown Token", Symbol: "UNK", Decimals: 0},
		}))
		b, err := at(WalletAcct, grid(12, 10), true)
		must(t, err)
		if *b.TokenName != "USD Coin" {
			t.Fatalf("AddTokens replaced a known entry: %s", *b.TokenName)
		}
		b, err = at(OrphanAcct, grid(12, 0), true)
		must(t, err)
		if b.TokenName == nil || *b.TokenName != "Unknown Token" {
			t.Fatalf("AddTokens did not add a new entry: %+v", b)
		}
		must(t, s.WriteTokens(ctx, []*chainquery.Token{{Mint: UnknownMint, Name: "Listed", Symbol: "LST"}}))
		b, err = at(OrphanAcct, grid(12, 0), true)
		must(t, err)
		if *b.TokenName != "Listed" {
			t.Fatalf("WriteTokens did not replace: %s", *b.TokenName)
		}
	})
	t.Run("ErrBeforeFirstChange", func(t *testing.T) {
		_, err := at(WalletAcct, grid(11, 50), false)
		wantCode(t, err, chainquery.ENOTFOUND)
	})
	t.Run("ErrUnknownAccount", func(t *testing.T) {
		_, err := at(UnknownAcct, grid(12, 30), false)
		wantCode(t, err, chainquery.ENOTFOUND)
	})
	t.Run("ErrLaterThanIndexed", func(t *testing.T) {
		_, err := at(WalletAcct, SolanaCursorTime.Add(10*time.Minute), false)
		wantCode(t, err, chainquery.ENOTFOUND)
		if msg := chainquery.ErrorMessage(err); msg != chainquery.ErrorMessage(chainquery.IndexedUpToError(SolanaCursorTime)) {
			t.Fatalf("detail = %q", msg)
		}
	})
	t.Run("Cursor", func(t *testing.T) {
		c, ok, err := s.SolanaCursor(ctx)
		must(t, err)
		if !ok || !sameCursor(c, SolanaCursor) {
			t.Fatalf("cursor %+v, %v; want %+v", c, ok, SolanaCursor)
		}
	})
	t.Run("LatestOwner", func(t *testing.T) {
		owner, ok, err := s.LatestOwner(ctx, WalletAcct)
		must(t, err)
		if !ok || owner != Wallet {
			t.Fatalf("owner %s, %v", owner, ok)
		}
		if _, ok, err := s.LatestOwner(ctx, OrphanAcct); err != nil || ok {
			t.Fatalf("an owner was invented for an account that never named one: %v, %v", ok, err)
		}
	})
	t.Run("CursorMoves", func(t *testing.T) {
		later := SolanaCursorTime.Add(time.Hour)
		next := chainquery.SolanaCursor{Slot: SolanaCursor.Slot + 9000, Blockhash: "2jTnThYqe92Sg83jeQMYfGdiWdePfzVeFSFJ6pmxpVZy", BlockTime: later}
		must(t, s.WriteSolana(ctx, &chainquery.SolanaWrite{Cursor: next}))
		b, err := at(WalletAcct, later, false)
		must(t, err)
		if b.Slot != 250_000_300 {
			t.Fatalf("got %+v", b)
		}
		c, ok, err := s.SolanaCursor(ctx)
		must(t, err)
		if !ok || !sameCursor(c, next) {
			t.Fatalf("cursor %+v, %v; want %+v", c, ok, next)
		}
		// A cursor whose hash is unknown reads back with an empty hash:
		// the blockhash is the new block's, never the old one's.
		unknown := chainquery.SolanaCursor{Slot: next.Slot + 1, BlockTime: later.Add(time.Second)}
		must(t, s.WriteSolana(ctx, &chainquery.SolanaWrite{Cursor: unknown}))
		if c, ok, err = s.SolanaCursor(ctx); err != nil || !ok || !sameCursor(c, unknown) {
			t.Fatalf("cursor %+v, %v, %v; want %+v", c, ok, err, unknown)
		}
	})
}

// sameCursor reports whether a and b name the same block at the same time.
func sameCursor(a, b chainquery.SolanaCursor) bool {
	return a.Slot == b.Slot && a.Blockhash == b.Blockhash && a.BlockTime.Equal(b.BlockTime)
}

func testOwnerBalances(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	grid := func(h, m int) time.Time { return time.Date(2025, 6, 1, h, m, 0, 0, time.UTC) }
	of := func(owner chainquery.PublicKey, at time.Time, meta bool, offset, limit int) ([]*chainquery.TokenBalance, int, error) {
		return s.FindOwnerBalances(ctx, chainquery.OwnerBalancesFilter{Owner: owner, At: at, IncludeMetadata: meta, Page: chainquery.Page{Offset: offset, Limit: limit}})
	}
	// brief is each balance as account=amount@slot, in the order given.
	brief := func(bs []*chainquery.TokenBalance) string {
		var out []string
		for _, b := range bs {
			out = append(out, fmt.Sprintf("%x=%d@%d", b.Account[31], b.Amount, b.Slot))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		name  string
		owner chainquery.PublicKey
		at    time.Time
		want  string
	}{
		{"BeforeAny", Wallet, grid(11, 50), ""},
		{"First", Wallet, grid(12, 0), "4=1000000@250000000 6=7@250000000 8=3@250000000"},
		// MovedAcct is NewOwner's from SolanaT1; ClosedAcct stays, at 0.
		{"AfterTheMove", Wallet, grid(12, 10), "4=12956933@250000100 6=0@250000100"},
		{"NewOwner", NewOwner, grid(12, 10), "8=3@250000100"},
		// Its last change names no owner: the one named before holds.
		{"OwnerNotNamed", NewOwner, SolanaCursorTime, "8=2@250000300"},
		{"WalletAtCursor", Wallet, SolanaCursorTime, "4=18446744073709551615@250000300 6=0@250000100"},
		{"UnknownOwner", Key(0x0a, 10), grid(12, 10), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, count, err := of(c.owner, c.at, false, 0, 10)
			must(t, err)
			if brief(got) != c.want || count != len(got) || got == nil {
				t.Fatalf("got %q (count %d), want %q", brief(got), count, c.want)
			}
			for _, b := range got {
				if *b.Owner != c.owner || !b.AsOf.Equal(c.at) || b.TokenName != nil {
					t.Fatalf("balance %+v", b)
				}
			}
		})
	}
	t.Run("SameAsByAccount", func(t *testing.T) {
		got, _, err := of(Wallet, grid(12, 30), true, 0, 10)
		must(t, err)
		for _, b := range got {
			one, err := s.FindTokenBalance(ctx, chainquery.TokenBalanceFilter{Account: b.Account, At: grid(12, 30), IncludeMetadata: true})
			must(t, err)
			sameJSON(t, "balance of "+b.Account.String(), b, one)
		}
	})
	t.Run("Page", func(t *testing.T) {
		got, count, err := of(Wallet, grid(12, 0), false, 1, 1)
		must(t, err)
		if brief(got) != "6=7@250000000" || count != 3 {
			t.Fatalf("got %q, count %d", brief(got), count)
		}
		got, count, err = of(Wallet, grid(12, 0), false, 3, 10)
		must(t, err)
		if got == nil || len(got) != 0 || count != 3 {
			t.Fatalf("past the end: %#v, count %d", got, count)
		}
	})
	t.Run("ErrLaterThanIndexed", func(t *testing.T) {
		_, _, err := of(Wallet, SolanaCursorTime.Add(10*time.Minute), false, 0, 10)
		wantCode(t, err, chainquery.ENOTFOUND)
	})
}

func testTokenBalancesEmpty(t *testing.T, s chainquery.Store) {
	_, err := s.FindTokenBalance(context.Background(), chainquery.TokenBalanceFilter{Account: WalletAcct, At: SolanaT2})
	wantCode(t, err, chainquery.ENOTFOUND)
	_, _, err = s.FindOwnerBalances(context.Background(), chainquery.OwnerBalancesFilter{Owner: Wallet, At: SolanaT2, Page: chainquery.Page{Limit: 10}})
	wantCode(t, err, chainquery.ENOTFOUND)
	if _, ok, err := s.SolanaCursor(context.Background()); err != nil || ok {
		t.Fatalf("cursor of an empty store: %v, %v", ok, err)
	}
}

func testAPIKeys(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	key, hash := chainquery.NewAPIKey()
	k := &chainquery.APIKey{Name: "alice", Hash: hash, Endpoints: []chainquery.Endpoint{chainquery.EndpointGetBlock, chainquery.EndpointFilterTraces}}
	must(t, s.CreateAPIKey(ctx, k))
	t.Run("Find", func(t *testing.T) {
		got, err := s.FindAPIKeyByHash(ctx, chainquery.HashAPIKey(key))
		must(t, err)
		if got.Name != "alice" || !got.Matches(chainquery.HashAPIKey(key)) || !got.Allows(chainquery.EndpointFilterTraces) || got.Allows(chainquery.EndpointGetLatestBlock) {
			t.Fatalf("got %+v", got)
		}
		if !got.CreatedAt.Equal(k.CreatedAt) {
			t.Fatalf("created %v, want %v", got.CreatedAt, k.CreatedAt)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		_, h := chainquery.NewAPIKey()
		wantCode(t, s.CreateAPIKey(ctx, &chainquery.APIKey{Name: "alice", Hash: h}), chainquery.ECONFLICT)
	})
	t.Run("List", func(t *testing.T) {
		_, h := chainquery.NewAPIKey()
		must(t, s.CreateAPIKey(ctx, &chainquery.APIKey{Name: "aaron", Hash: h, Endpoints: chainquery.Endpoints}))
		got, err := s.ListAPIKeys(ctx)
		must(t, err)
		if len(got) != 2 || got[0].Name != "aaron" || got[1].Name != "alice" || len(got[0].Endpoints) != len(chainquery.Endpoints) {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("Revoke", func(t *testing.T) {
		must(t, s.RevokeAPIKey(ctx, "alice"))
		_, err := s.FindAPIKeyByHash(ctx, hash)
		wantCode(t, err, chainquery.ENOTFOUND)
		wantCode(t, s.RevokeAPIKey(ctx, "alice"), chainquery.ENOTFOUND)
	})
	t.Run("ErrUnknownHash", func(t *testing.T) {
		_, err := s.FindAPIKeyByHash(ctx, chainquery.HashAPIKey("cq_nope"))
		wantCode(t, err, chainquery.ENOTFOUND)
	})
}
