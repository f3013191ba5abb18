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
	if err := s.WriteTokenBalances(ctx, TokenBalanceChanges(), SolanaCursor); err != nil {
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
	t.Run("Reorg", func(t *testing.T) { testReorg(t, loaded(t)) })
	t.Run("Rewrites", func(t *testing.T) { testRewrites(t, open) })
	t.Run("TraceCounts", func(t *testing.T) { testTraceCounts(t, open(t)) })
	t.Run("TokenBalances", func(t *testing.T) { testTokenBalances(t, loaded(t)) })
	t.Run("TokenBalancesEmpty", func(t *testing.T) { testTokenBalancesEmpty(t, open(t)) })
	t.Run("APIKeys", func(t *testing.T) { testAPIKeys(t, open(t)) })
	t.Run("APIKeyLimits", func(t *testing.T) { testAPIKeyLimits(t, open(t)) })
	t.Run("IndexStatus", func(t *testing.T) { testIndexStatus(t, open) })
	t.Run("MigrationsCurrent", func(t *testing.T) {
		// A store opened by Open has applied every migration it has.
		pending, err := open(t).PendingMigrations(context.Background())
		if err != nil || len(pending) > 0 {
			t.Fatalf("pending migrations %v, %v; want none", pending, err)
		}
	})
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
