package sqlite

import (
	"context"

	"github.com/chainquery/chainquery"
)

// WriteTokenBalances stores changes and moves the Solana cursor to cursor in
// one transaction.
func (db *DB) WriteTokenBalances(ctx context.Context, changes []*chainquery.TokenBalanceChange, cursor chainquery.SolanaCursor) error {
	tx, err := db.write.BeginTx(ctx, nil)
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
	tx, err := db.write.BeginTx(ctx, nil)
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
