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
func (s *Store) FindOwnerBalances(ctx context.Context, f chainquery.OwnerBalancesFilter) ([]*chainquery.TokenBalance, int, error) {
	tx, err := s.ReadTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	var slot, upTo int64
	var hash *string
	if found, err := queryRow(ctx, tx, qSolanaCursor, nil, &slot, &upTo, &hash); err != nil {
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
	err = tx.Query(ctx, s.Dialect.OwnerBalancePage, append(args, f.IncludeMetadata, f.Limit, f.Offset), sc.dest, sc.each(func() error {
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
		_, err = queryRow(ctx, tx, s.Dialect.OwnerBalanceCount, args, &count)
	}
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// FindTokenBalance returns the account's latest balance change at or before
// f.At. It returns ENOTFOUND if f.At is later than the indexed history or if
// the account has no change at or before f.At.
func (s *Store) FindTokenBalance(ctx context.Context, f chainquery.TokenBalanceFilter) (*chainquery.TokenBalance, error) {
	b := &chainquery.TokenBalance{AsOf: f.At, Account: f.Account}
	var upTo, blockTime int64
	var found bool
	var owner []byte
	var amount *big.Int
	var name, symbol *string
	var sc scan
	sc.to(&upTo, &found, &owner).fixed(b.Mint[:]).to(s.ScanAmount(&amount), &b.Decimals, &blockTime).
		counter(&b.Slot).to(&name, &symbol)
	args := []any{f.Account[:], f.At.UnixMilli(), f.IncludeMetadata}
	if ok, err := queryRow(ctx, s.Read, s.Dialect.TokenBalance, args, sc.dest...); err != nil {
		return nil, err
	} else if !ok {
		return nil, chainquery.IndexedUpToError(time.Time{})
	} else if f.At.UnixMilli() > upTo {
		return nil, chainquery.IndexedUpToError(time.UnixMilli(upTo))
	} else if !found {
		return nil, chainquery.NoBalanceError(f.Account)
	}
	if err := sc.done(); err != nil {
		return nil, err
	}
	if amount == nil || !amount.IsUint64() {
		return nil, fmt.Errorf("stored token amount %v is not a uint64", amount)
	}
	b.Amount, b.LastUpdated = amount.Uint64(), time.UnixMilli(blockTime).UTC()
	if owner != nil {
		b.Owner = new(chainquery.PublicKey)
		if err := fixedBytes(b.Owner[:], owner); err != nil {
			return nil, err
		}
	}
	if f.IncludeMetadata && name != nil {
		b.TokenName, b.TokenSymbol = name, symbol
	}
	return b, nil
}

// LatestOwner returns the owner of account's latest change that names one,
// read on the primary for the same reason.
func (s *Store) LatestOwner(ctx context.Context, account chainquery.PublicKey) (chainquery.PublicKey, bool, error) {
	var owner chainquery.PublicKey
	var sc scan
	sc.fixed(owner[:])
	if found, err := queryRow(ctx, s.Primary, qLatestOwner, []any{account[:]}, sc.dest...); err != nil || !found {
		return chainquery.PublicKey{}, false, err
	}
	if err := sc.done(); err != nil {
		return chainquery.PublicKey{}, false, err
	}
	return owner, true, nil
}

// qLatestOwner: account → the owner of its latest change that names one:
// the primary key walked backwards from the account's latest change.
const qLatestOwner = `SELECT owner FROM token_balances WHERE account = $1 AND owner IS NOT NULL
	ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1`
