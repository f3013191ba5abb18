package storetest

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
)

// Load writes the whole fixture into s through its write side.
func Load(tb testing.TB, s chainquery.Store) {
	tb.Helper()
	ctx := context.Background()
	for _, chain := range []chainquery.Chain{chainquery.Polygon, chainquery.Ethereum} {
		if err := s.WriteBlocks(ctx, chain, Blocks()[chain]); err != nil {
			tb.Fatalf("write %s fixture: %v", chain, err)
		}
	}
	sol := &chainquery.SOLChanges{First: SOLFirst, Changes: SOLChanges()}
	if err := s.WriteSolana(ctx, &chainquery.SolanaWrite{Tokens: TokenBalanceChanges(), SOL: sol, Cursor: SolanaCursor}); err != nil {
		tb.Fatalf("write token balances: %v", err)
	}
	if err := s.WriteTokens(ctx, Tokens()); err != nil {
		tb.Fatalf("write tokens: %v", err)
	}
}

// Run runs the conformance suite against the store that open returns; open
// must return a fresh, empty store for each call.
func Run(t *testing.T, open func(testing.TB) chainquery.Store) {
	loaded := func(t *testing.T) chainquery.Store {
		s := open(t)
		Load(t, s)
		return s
	}
	t.Run("Blocks", func(t *testing.T) { testBlocks(t, loaded(t)) })
	t.Run("Receipts", func(t *testing.T) { testReceipts(t, loaded(t)) })
	t.Run("Logs", func(t *testing.T) { testLogs(t, loaded(t)) })
	t.Run("Traces", func(t *testing.T) { testTraces(t, loaded(t)) })
	t.Run("Transactions", func(t *testing.T) { testTransactions(t, loaded(t)) })
	t.Run("LogFilter", func(t *testing.T) { testLogFilter(t, loaded(t)) })
	t.Run("Reorg", func(t *testing.T) { testReorg(t, loaded(t)) })
	t.Run("Rewrites", func(t *testing.T) { testRewrites(t, open) })
	t.Run("TraceCounts", func(t *testing.T) { testTraceCounts(t, open(t)) })
	t.Run("LogCounts", func(t *testing.T) { testLogCounts(t, open(t)) })
	t.Run("TokenBalances", func(t *testing.T) { testTokenBalances(t, loaded(t)) })
	t.Run("OwnerBalances", func(t *testing.T) { testOwnerBalances(t, loaded(t)) })
	t.Run("TokenBalancesEmpty", func(t *testing.T) { testTokenBalancesEmpty(t, open(t)) })
	t.Run("SOLBalances", func(t *testing.T) { testSOLBalances(t, open(t)) })
	t.Run("APIKeys", func(t *testing.T) { testAPIKeys(t, open(t)) })
	t.Run("APIKeyLimits", func(t *testing.T) { testAPIKeyLimits(t, open(t)) })
	t.Run("IndexStatus", func(t *testing.T) { testIndexStatus(t, open) })
	// The same reads and rewinds with every fixture block kept as history
	// (sqlstore's layout of deep blocks) instead of rows: the answers
	// must not change, and a rewind or a write below the boundary must
	// turn history back into rows first.
	frozen := func(t *testing.T) chainquery.Store {
		s := loaded(t)
		Freeze(t, s)
		return s
	}
	t.Run("History", func(t *testing.T) {
		t.Run("Blocks", func(t *testing.T) { testBlocks(t, frozen(t)) })
		t.Run("Receipts", func(t *testing.T) { testReceipts(t, frozen(t)) })
		t.Run("Logs", func(t *testing.T) { testLogs(t, frozen(t)) })
		t.Run("Traces", func(t *testing.T) { testTraces(t, frozen(t)) })
		t.Run("Transactions", func(t *testing.T) { testTransactions(t, frozen(t)) })
		t.Run("LogFilter", func(t *testing.T) { testLogFilter(t, frozen(t)) })
		t.Run("Reorg", func(t *testing.T) { testReorg(t, frozen(t)) })
		t.Run("SameAnswers", func(t *testing.T) { CheckHistory(t, open) })
	})
	t.Run("MigrationsCurrent", func(t *testing.T) {
		// A store opened by Open has applied every migration it has.
		pending, err := open(t).PendingMigrations(context.Background())
		if err != nil || len(pending) > 0 {
			t.Fatalf("pending migrations %v, %v; want none", pending, err)
		}
	})
}

// HistoryFreezer is a store that keeps deep blocks as history
// (sqlstore.Store.FreezeHistory).
type HistoryFreezer interface {
	FreezeHistory(ctx context.Context, chain chainquery.Chain, below uint64) error
}

// Freeze turns every stored block of s into history; it fails the test if
// s keeps no history.
func Freeze(tb testing.TB, s chainquery.Store) {
	tb.Helper()
	f, ok := s.(HistoryFreezer)
	if !ok {
		tb.Fatalf("%T keeps no history", s)
	}
	ctx := context.Background()
	for _, chain := range chainquery.EVMChains {
		head, err := s.HeadBlock(ctx, chain)
		if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
			continue
		} else if err != nil {
			tb.Fatal(err)
		}
		if err := f.FreezeHistory(ctx, chain, head+1); err != nil {
			tb.Fatalf("freeze %s: %v", chain, err)
		}
	}
}

// wantCode fails unless err carries the chainquery error code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := chainquery.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// must fails on a non-nil error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
