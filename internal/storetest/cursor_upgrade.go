package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// OldCursor is the Solana cursor of a database made before the cursor
// recorded a blockhash. A store's test makes such a database (its first
// migration alone, with this cursor), opens the store on it and calls
// CheckCursorUpgrade.
var OldCursor = chainquery.SolanaCursor{Slot: 250_000_400, BlockTime: time.Date(2025, 6, 1, 13, 0, 0, 0, time.UTC)}

// CheckCursorUpgrade checks a store opened on a database holding OldCursor
// without a blockhash: the migration keeps the cursor, with an empty
// blockhash, and the next write records one.
func CheckCursorUpgrade(t *testing.T, s chainquery.TokenBalanceWriter) {
	t.Helper()
	ctx := context.Background()
	c, ok, err := s.SolanaCursor(ctx)
	if err != nil || !ok || !sameCursor(c, OldCursor) {
		t.Fatalf("upgraded cursor %+v, %v, %v; want %+v", c, ok, err, OldCursor)
	}
	next := chainquery.SolanaCursor{Slot: OldCursor.Slot + 1, Blockhash: "7FRPQq2kvN5NWudpiHstcpQnxEDFeDBJN54sU1TeTF9t", BlockTime: OldCursor.BlockTime.Add(time.Second)}
	if err := s.WriteSolana(ctx, &chainquery.SolanaWrite{Cursor: next}); err != nil {
		t.Fatal(err)
	}
	if c, ok, err = s.SolanaCursor(ctx); err != nil || !ok || !sameCursor(c, next) {
		t.Fatalf("cursor %+v, %v, %v; want %+v", c, ok, err, next)
	}
}
