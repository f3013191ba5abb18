package bench

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/sqlite"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The Solana token balances of the Token Balance by Account workloads. The
// Polygon-shaped chain has none, and no Solana node runs here: they are
// written through the store's own write side (WriteSolana, as the
// Solana ingester writes them) before the server starts, once per dataset.
const (
	TokenChanges = 1_000_000 // balance changes of a load run's dataset, over TokenDays
	TokenMints   = 1_000
	TokenDays    = 30
)

// Tokens says which token balances are seeded: Changes changes drawn from
// Seed, over Changes/20 token accounts.
type Tokens struct {
	Seed    uint64
	Changes int
}

func (t Tokens) accounts() int { return max(2, t.Changes/20) }

// TokenStart is when the first seeded change happens (slot TokenSlot).
var TokenStart = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

const (
	tokenSlot   = 340_000_000
	slotsPerDay = 216_000 // 400 ms slots
	tokenBatch  = 20_000
)

// tokenKey is the deterministic public key of kind and i.
func tokenKey(kind string, i int) chainquery.PublicKey {
	return chainquery.PublicKey(sha256.Sum256(fmt.Appendf(nil, "cqbench %s %d", kind, i)))
}

// Write writes the seeded token balances, SOL balances and registry into
// the store of dsn, unless it holds them already, and returns the number of
// token balance changes written. Accounts are drawn from a Zipf
// distribution, so a few change thousands of times and most a few times.
// Each change also changes its owner's SOL balance (the owner paid the
// fee), as SOL Balance by Account reads it. A store seeded before SOL
// balances were gets its SOL balances alone.
func (t Tokens) Write(ctx context.Context, dsn string) (int, error) {
	s, err := openStore(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	withTokens := true
	if _, ok, err := s.SolanaCursor(ctx); err != nil {
		return 0, err
	} else if ok {
		if t.hasSOL(ctx, s) {
			return 0, nil
		}
		withTokens = false
	}
	if withTokens {
		var tokens []*chainquery.Token
		for m := range TokenMints {
			tokens = append(tokens, &chainquery.Token{Mint: tokenKey("mint", m), Name: fmt.Sprintf("Bench Token %d", m),
				Symbol: fmt.Sprintf("BT%d", m), Decimals: m % 10})
		}
		if err := s.WriteTokens(ctx, tokens); err != nil {
			return 0, err
		}
	}
	w := &chainquery.SolanaWrite{}
	err = t.each(func(i int, c *chainquery.TokenBalanceChange) error {
		if w.SOL == nil {
			w.SOL = &chainquery.SOLChanges{First: chainquery.SolanaCursor{Slot: c.Slot, BlockTime: c.BlockTime}}
		}
		if withTokens {
			w.Tokens = append(w.Tokens, c)
		}
		w.SOL.Changes = append(w.SOL.Changes, solChange(c))
		if len(w.SOL.Changes) == tokenBatch || i == t.Changes-1 {
			w.Cursor = chainquery.SolanaCursor{Slot: c.Slot, BlockTime: c.BlockTime}
			if err := s.WriteSolana(ctx, w); err != nil {
				return err
			}
			w = &chainquery.SolanaWrite{}
		}
		return nil
	})
	if !withTokens {
		return 0, err
	}
	return t.Changes, err
}

// errStop ends a walk of the seeded changes early.
var errStop = errors.New("stop")

// solChange is the change of c's owner's SOL balance that c goes with.
func solChange(c *chainquery.TokenBalanceChange) *chainquery.SOLBalanceChange {
	return &chainquery.SOLBalanceChange{Account: *c.Owner, Slot: c.Slot, BlockTime: c.BlockTime,
		Lamports: 1_000_000_000 + c.Amount%(1<<30)}
}

// hasSOL says whether s holds the seeded SOL balances: the first change's.
func (t Tokens) hasSOL(ctx context.Context, s chainquery.Store) bool {
	var first *chainquery.TokenBalanceChange
	t.each(func(i int, c *chainquery.TokenBalanceChange) error {
		if i == 0 {
			first = c
		}
		return errStop
	})
	_, err := s.FindSOLBalance(ctx, chainquery.SOLBalanceFilter{Account: *first.Owner, At: first.BlockTime})
	return err == nil
}

// each calls f with each seeded change in slot order.
func (t Tokens) each(f func(i int, c *chainquery.TokenBalanceChange) error) error {
	r := rand.New(rand.NewPCG(t.Seed, 7))
	zipf := rand.NewZipf(r, 1.1, 1, uint64(t.accounts()-1))
	slots := make([]uint64, t.Changes)
	for i := range slots {
		slots[i] = tokenSlot + r.Uint64N(TokenDays*slotsPerDay)
	}
	slices.Sort(slots)
	for i, slot := range slots {
		a := tokenAccount(int(zipf.Uint64()))
		owner := tokenKey("owner", a.index/tokensPerOwner)
		c := &chainquery.TokenBalanceChange{Account: a.key, Owner: &owner, Mint: a.mint,
			Amount: r.Uint64N(1 << 40), Decimals: a.decimals, Slot: slot, TxIndex: i % 1000, BlockTime: slotTime(slot)}
		if err := f(i, c); err != nil {
			return err
		}
	}
	return nil
}

type seededAccount struct {
	index    int
	key      chainquery.PublicKey
	mint     chainquery.PublicKey
	decimals int
}

// tokensPerOwner is how many seeded token accounts each owner holds: those
// of consecutive Zipf ranks, so that busy accounts share busy owners.
const tokensPerOwner = 8

// tokenAccount is the seeded token account of Zipf rank i+1.
func tokenAccount(i int) seededAccount {
	m := i % TokenMints
	return seededAccount{index: i, key: tokenKey("account", i), mint: tokenKey("mint", m), decimals: m % 10}
}

func slotTime(slot uint64) time.Time {
	return TokenStart.Add(time.Duration(slot-tokenSlot) * 400 * time.Millisecond)
}

// targets returns n Token Balance by Account requests: each the account of
// a seeded change, at the first time of the 10-minute grid at or after the
// change, so that every answer is a balance.
func (t Tokens) targets(n int, metadata bool) []vegeta.Target {
	return t.pick(n, 8, func(c *chainquery.TokenBalanceChange, at string) string {
		url := fmt.Sprintf("/api/v1/customer/solana/token-balances/token-account/%s?datetime_filter=%s", c.Account, at)
		if metadata {
			url += "&include_metadata=true"
		}
		return url
	})
}

// solTargets returns n SOL Balance by Account requests: each the owner of a
// seeded change, at the first time of the 10-minute grid at or after it.
func (t Tokens) solTargets(n int) []vegeta.Target {
	return t.pick(n, 10, func(c *chainquery.TokenBalanceChange, at string) string {
		return fmt.Sprintf("/api/v1/customer/solana/sol-balances/account/%s?datetime_filter=%s", c.Owner, at)
	})
}

// ownerTargets returns n Token Balances by Owner requests (limit 50, with
// metadata): each the owner of a seeded change, at the first time of the
// 10-minute grid at or after the change.
func (t Tokens) ownerTargets(n int) []vegeta.Target {
	return t.pick(n, 9, func(c *chainquery.TokenBalanceChange, at string) string {
		return fmt.Sprintf("/api/v1/customer/solana/token-balances/owner/%s?datetime_filter=%s&include_metadata=true&limit=50", c.Owner, at)
	})
}

// pick returns the GETs that url makes of n seeded changes drawn with
// stream, each at the first time of the 10-minute grid at or after it.
func (t Tokens) pick(n int, stream uint64, url func(c *chainquery.TokenBalanceChange, at string) string) []vegeta.Target {
	r := rand.New(rand.NewPCG(t.Seed, stream))
	picked := map[int]bool{}
	for len(picked) < min(n, t.Changes) {
		picked[r.IntN(t.Changes)] = true
	}
	var out []vegeta.Target
	t.each(func(i int, c *chainquery.TokenBalanceChange) error {
		if picked[i] {
			at := c.BlockTime.Truncate(10 * time.Minute).Add(10 * time.Minute)
			out = append(out, vegeta.Target{Method: http.MethodGet, URL: url(c, at.Format(time.RFC3339))})
		}
		return nil
	})
	return out
}

// openStore opens the store of a --db DSN, as chainquery does.
func openStore(ctx context.Context, dsn string) (chainquery.Store, error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		return sqlite.Open(path)
	}
	return postgres.Open(ctx, dsn, postgres.Options{})
}
