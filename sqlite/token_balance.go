package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/chainquery/chainquery"
)

// FindTokenBalance returns the account's latest balance change at or before
// f.At. It returns ENOTFOUND if f.At is later than the indexed history or if
// the account has no change at or before f.At.
func (db *DB) FindTokenBalance(ctx context.Context, f chainquery.TokenBalanceFilter) (*chainquery.TokenBalance, error) {
	tx, err := db.rdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap(err)
	}
	defer tx.Rollback()

	var upTo int64
	err = tx.QueryRowContext(ctx, `SELECT block_time FROM solana_cursor WHERE id = 1`).Scan(&upTo)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, chainquery.ErrIndexedUpTo(time.Time{})
	} else if err != nil {
		return nil, wrap(err)
	} else if f.At.UnixMilli() > upTo {
		return nil, chainquery.ErrIndexedUpTo(time.UnixMilli(upTo))
	}

	b := &chainquery.TokenBalance{AsOf: f.At, Account: f.Account}
	var owner []byte
	var blockTime int64
	err = tx.QueryRowContext(ctx, qTokenBalance,
		f.Account[:], f.At.UnixMilli()).Scan(&owner, fixedCol(b.Mint[:]), u64Col{&b.Amount}, &b.Decimals, &blockTime, gasCol{&b.Slot})
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, chainquery.ErrNoBalance(f.Account)
		}
		return nil, wrap(err)
	}
	b.LastUpdated = time.UnixMilli(blockTime).UTC()
	if owner != nil {
		b.Owner = new(chainquery.PublicKey)
		if err := fixedCol(b.Owner[:]).Scan(owner); err != nil {
			return nil, err
		}
	}
	if f.IncludeMetadata {
		var name, symbol string
		err := tx.QueryRowContext(ctx, `SELECT name, symbol FROM tokens WHERE mint = ?`, b.Mint[:]).Scan(&name, &symbol)
		if err == nil {
			b.TokenName, b.TokenSymbol = &name, &symbol
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, wrap(err)
		}
	}
	return b, nil
}

// WriteTokenBalances stores changes and moves the Solana cursor to cursor in
// one transaction.
func (db *DB) WriteTokenBalances(ctx context.Context, changes []*chainquery.TokenBalanceChange, cursor chainquery.SolanaCursor) error {
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO token_balances
		(account, block_time, slot, tx_index, owner, mint, amount, decimals) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return wrap(err)
	}
	defer stmt.Close()
	for _, c := range changes {
		var owner any
		if c.Owner != nil {
			owner = c.Owner[:]
		}
		if _, err := stmt.ExecContext(ctx, c.Account[:], c.BlockTime.UnixMilli(), int64(c.Slot), c.TxIndex,
			owner, c.Mint[:], u64Arg(c.Amount), c.Decimals); err != nil {
			return wrap(err)
		}
	}
	var hash any // NULL when unknown, as in a cursor stored before hashes were
	if cursor.Blockhash != "" {
		hash = cursor.Blockhash
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO solana_cursor (id, slot, block_time, blockhash) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET slot = excluded.slot, block_time = excluded.block_time, blockhash = excluded.blockhash`,
		int64(cursor.Slot), cursor.BlockTime.UnixMilli(), hash); err != nil {
		return wrap(err)
	}
	return wrap(tx.Commit())
}

// WriteTokens inserts or replaces token registry entries.
func (db *DB) WriteTokens(ctx context.Context, tokens []*chainquery.Token) error {
	return db.writeTokens(ctx, `INSERT OR REPLACE`, tokens)
}

// AddTokens inserts the entries of mints the registry does not know.
func (db *DB) AddTokens(ctx context.Context, tokens []*chainquery.Token) error {
	return db.writeTokens(ctx, `INSERT OR IGNORE`, tokens)
}

func (db *DB) writeTokens(ctx context.Context, insert string, tokens []*chainquery.Token) error {
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback()
	for _, t := range tokens {
		if _, err := tx.ExecContext(ctx, insert+` INTO tokens (mint, name, symbol, decimals) VALUES (?, ?, ?, ?)`,
			t.Mint[:], t.Name, t.Symbol, t.Decimals); err != nil {
			return wrap(err)
		}
	}
	return wrap(tx.Commit())
}

// SolanaCursor returns the cursor WriteTokenBalances last recorded, with an
// empty Blockhash when it was stored before hashes were.
func (db *DB) SolanaCursor(ctx context.Context) (chainquery.SolanaCursor, bool, error) {
	var slot, blockTime int64
	var hash sql.NullString
	err := db.wdb.QueryRowContext(ctx, `SELECT slot, block_time, blockhash FROM solana_cursor WHERE id = 1`).Scan(&slot, &blockTime, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return chainquery.SolanaCursor{}, false, nil
	} else if err != nil {
		return chainquery.SolanaCursor{}, false, wrap(err)
	}
	return chainquery.SolanaCursor{Slot: uint64(slot), Blockhash: hash.String, BlockTime: time.UnixMilli(blockTime).UTC()}, true, nil
}

// LatestOwner returns the owner of account's latest change that names one.
func (db *DB) LatestOwner(ctx context.Context, account chainquery.PublicKey) (chainquery.PublicKey, bool, error) {
	var owner chainquery.PublicKey
	err := db.rdb.QueryRowContext(ctx, qLatestOwner, account[:]).Scan(fixedCol(owner[:]))
	if errors.Is(err, sql.ErrNoRows) {
		return owner, false, nil
	} else if err != nil {
		return owner, false, wrap(err)
	}
	return owner, true, nil
}
