package sqlstore

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/chainquery/chainquery"
)

// FindOwnerBalances returns one page of the balances of the token accounts
// f.Owner owns at f.At, and how many there are (TokenBalanceService). The
// cursor, the count and the page are read in one snapshot.
func (s *SQLStore) FindOwnerBalances(ctx context.Context, f chainquery.OwnerBalancesFilter) ([]*chainquery.TokenBalance, int, error) {
	tx, err := s.ReadTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	var slot, upTo int64
	var hash *string
	if found, err := queryRow(ctx, tx, s.SQL.SolanaCursor, nil, &slot, &upTo, &hash); err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, chainquery.IndexedUpToError(time.Time{})
	} else if at := f.At.UnixMilli(); at > upTo {
		return nil, 0, chainquery.IndexedUpToError(time.UnixMilli(upTo))
	}
	// The page and the number of accounts in one statement; the number
	// alone when the page is empty.
	var count int
	args := []any{f.Owner[:], f.At.UnixMilli()}
	out := []*chainquery.TokenBalance{}
	owner := f.Owner
	b := chainquery.TokenBalance{AsOf: f.At, Owner: &owner}
	var amount *big.Int
	var blockTime int64
	var name, symbol *string
	var sc scan
	sc.to(&count).fixed(b.Account[:]).fixed(b.Mint[:]).to(s.ScanAmount(&amount), &b.Decimals, &blockTime).counter(&b.Slot).to(&name, &symbol)
	err = tx.Query(ctx, s.SQL.OwnerBalancePage, append(args, f.IncludeMetadata, f.Limit, f.Offset), sc.dest, sc.each(func() error {
		if amount == nil || !amount.IsUint64() {
			return fmt.Errorf("stored token amount %v is not a uint64", amount)
		}
		row := b
		row.Amount, row.LastUpdated = amount.Uint64(), time.UnixMilli(blockTime).UTC()
		if f.IncludeMetadata && name != nil {
			n, sym := *name, *symbol
			row.TokenName, row.TokenSymbol = &n, &sym
		}
		out = append(out, &row)
		return nil
	}))
	if err == nil && len(out) == 0 {
		_, err = queryRow(ctx, tx, s.SQL.OwnerBalanceCount, args, &count)
	}
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}
