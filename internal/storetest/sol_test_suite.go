package storetest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// testSOLBalances writes SOL balance changes in batches, as the Solana
// ingester does, into an empty store: a gap-free range, then batches
// without SOL changes (a gap), then SOL changes again, and reads each
// account at snapshot times around every change and edge.
func testSOLBalances(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tm := func(slot uint64) time.Time { return t0.Add(time.Duration(slot-100) * 400 * time.Millisecond) }
	cur := func(slot uint64) chainquery.SolanaCursor {
		return chainquery.SolanaCursor{Slot: slot, BlockTime: tm(slot)}
	}
	a, b, c := Key(9, 1), Key(9, 2), Key(9, 3)
	ch := func(k chainquery.PublicKey, slot, lamports uint64) *chainquery.SOLBalanceChange {
		return &chainquery.SOLBalanceChange{Account: k, Slot: slot, BlockTime: tm(slot), Lamports: lamports}
	}
	write := func(t *testing.T, first, last uint64, changes ...*chainquery.SOLBalanceChange) {
		t.Helper()
		must(t, s.WriteSolana(ctx, &chainquery.SolanaWrite{SOL: &chainquery.SOLChanges{First: cur(first), Changes: changes}, Cursor: cur(last)}))
	}
	find := func(k chainquery.PublicKey, at time.Time) (*chainquery.SOLBalance, error) {
		return s.FindSOLBalance(ctx, chainquery.SOLBalanceFilter{Account: k, At: at})
	}
	want := func(t *testing.T, k chainquery.PublicKey, at time.Time, slot, lamports uint64) {
		t.Helper()
		got, err := find(k, at)
		must(t, err)
		if got.Account != k || got.Slot != slot || got.Lamports != lamports || !got.LastUpdated.Equal(tm(slot)) {
			t.Fatalf("%s at %v: %+v; want slot %d, %d lamports", k, at, got, slot, lamports)
		}
	}
	wantErr := func(t *testing.T, k chainquery.PublicKey, at time.Time, r chainquery.SOLRange, ok bool) {
		t.Helper()
		got, err := find(k, at)
		wantCode(t, err, chainquery.ENOTFOUND)
		if w := chainquery.ErrorMessage(chainquery.SOLNotFound(k, at, r, ok)); chainquery.ErrorMessage(err) != w {
			t.Fatalf("%s at %v: %v, %q; want %q", k, at, got, chainquery.ErrorMessage(err), w)
		}
	}
	rng := func(from, through uint64) chainquery.SOLRange {
		return chainquery.SOLRange{FromSlot: from, ThroughSlot: through, From: tm(from), Through: tm(through)}
	}

	t.Run("Empty", func(t *testing.T) { wantErr(t, a, tm(100), chainquery.SOLRange{}, false) })
	// Batches of SOL changes, the first starting the range at its first
	// block; two changes of one key in a batch: the last wins.
	write(t, 100, 103, ch(a, 100, 5_000_000_000), ch(b, 101, 1), ch(a, 102, 4_999_995_000), ch(b, 101, 7))
	write(t, 104, 110, ch(a, 106, math.MaxInt64), ch(c, 110, 0))
	t.Run("Range", func(t *testing.T) {
		want(t, a, tm(100), 100, 5_000_000_000)
		want(t, a, tm(102).Add(-time.Millisecond), 100, 5_000_000_000)
		want(t, a, tm(102), 102, 4_999_995_000)
		want(t, b, tm(105), 101, 7)
		want(t, a, tm(110), 106, math.MaxInt64)
		want(t, c, tm(110), 110, 0) // a closed account's zero is a balance
		wantErr(t, a, tm(100).Add(-time.Millisecond), rng(100, 110), true)
		wantErr(t, a, tm(110).Add(time.Millisecond), rng(100, 110), true)
		wantErr(t, c, tm(109), rng(100, 110), true) // did not change in the range up to then
		wantErr(t, Key(9, 4), tm(105), rng(100, 110), true)
	})
	// Batches without SOL changes move the cursor and not the range.
	must(t, s.WriteSolana(ctx, &chainquery.SolanaWrite{Cursor: cur(120)}))
	t.Run("WithoutSOL", func(t *testing.T) {
		want(t, a, tm(110), 106, math.MaxInt64)
		wantErr(t, a, tm(115), rng(100, 110), true)
	})
	// SOL changes again: the range starts over after the gap, and what
	// was stored before it is never answered.
	write(t, 121, 125, ch(b, 122, 9))
	t.Run("AfterGap", func(t *testing.T) {
		want(t, b, tm(125), 122, 9)
		wantErr(t, a, tm(123), rng(121, 125), true)
		wantErr(t, b, tm(121), rng(121, 125), true)
		wantErr(t, a, tm(110), rng(121, 125), true)
	})
	t.Run("Rewrite", func(t *testing.T) {
		write(t, 126, 126, ch(b, 126, 10))
		write(t, 127, 127, ch(b, 126, 11)) // the same key again replaces it
		want(t, b, tm(127), 126, 11)
	})
	t.Run("ErrTooLarge", func(t *testing.T) {
		err := s.WriteSolana(ctx, &chainquery.SolanaWrite{SOL: &chainquery.SOLChanges{First: cur(128), Changes: []*chainquery.SOLBalanceChange{ch(c, 128, math.MaxInt64+1)}}, Cursor: cur(128)})
		if err == nil {
			t.Fatal("a balance above 2^63-1 lamports was stored")
		}
		if got, ok, err := s.SolanaCursor(ctx); err != nil || !ok || got.Slot != 127 {
			t.Fatalf("the cursor moved with a refused batch: %+v, %v, %v", got, ok, err)
		}
	})
}
