package sqlstore

import (
	"context"
	"time"

	"github.com/chainquery/chainquery"
)

// FindSOLBalance returns the account's balance after its latest change at
// or before f.At within the stored SOL range (chainquery.SOLBalanceService).
// One statement reads the range and the change, as FindTokenBalance does.
func (s *Store) FindSOLBalance(ctx context.Context, f chainquery.SOLBalanceFilter) (*chainquery.SOLBalance, error) {
	b := &chainquery.SOLBalance{Account: f.Account}
	var fromSlot, from, throughSlot, through *int64
	var found bool
	var blockTime, lamports int64
	var sc scan
	sc.to(&fromSlot, &from, &throughSlot, &through, &found, &blockTime).counter(&b.Slot).to(&lamports)
	ok, err := queryRow(ctx, s.Read, s.Dialect.SOLBalance, []any{f.Account[:], f.At.UnixMilli()}, sc.dest...)
	if err != nil {
		return nil, err
	}
	var r chainquery.SOLRange
	if ok = ok && fromSlot != nil && from != nil && throughSlot != nil && through != nil; ok {
		r = chainquery.SOLRange{FromSlot: uint64(*fromSlot), ThroughSlot: uint64(*throughSlot),
			From: time.UnixMilli(*from).UTC(), Through: time.UnixMilli(*through).UTC()}
	}
	if !ok || !found || f.At.After(r.Through) || f.At.Before(r.From) {
		return nil, chainquery.SOLNotFound(f.Account, f.At, r, ok)
	}
	if err := sc.done(); err != nil {
		return nil, err
	}
	b.Lamports, b.LastUpdated = uint64(lamports), time.UnixMilli(blockTime).UTC()
	return b, nil
}
