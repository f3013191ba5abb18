package sqlite

import (
	"context"
	"database/sql"

	"github.com/chainquery/chainquery"
)

// WriteSolana stores a batch's token and SOL balance changes and moves the
// Solana cursor, in one transaction.
func (db *DB) WriteSolana(ctx context.Context, w *chainquery.SolanaWrite) error {
	if w.SOL != nil {
		if err := w.SOL.Check(); err != nil {
			return err
		}
	}
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
	for _, c := range w.Tokens {
		var owner any
		if c.Owner != nil {
			owner = c.Owner[:]
		}
		if _, err := stmt.ExecContext(ctx, c.Account[:], c.BlockTime.UnixMilli(), int64(c.Slot), c.TxIndex,
			owner, c.Mint[:], u64Arg(c.Amount), c.Decimals); err != nil {
			return wrap(err)
		}
	}
	var sol [4]any // the SOL range of a first cursor row: NULL without SOL changes
	if w.SOL != nil {
		if err := writeSOL(ctx, tx, w); err != nil {
			return wrap(err)
		}
		sol = [4]any{int64(w.SOL.First.Slot), w.SOL.First.BlockTime.UnixMilli(), int64(w.Cursor.Slot), w.Cursor.BlockTime.UnixMilli()}
	}
	var hash any // NULL when unknown, as in a cursor stored before hashes were
	if w.Cursor.Blockhash != "" {
		hash = w.Cursor.Blockhash
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO solana_cursor (id, slot, block_time, blockhash, sol_from, sol_from_time, sol_through, sol_through_time)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET slot = excluded.slot, block_time = excluded.block_time, blockhash = excluded.blockhash`,
		int64(w.Cursor.Slot), w.Cursor.BlockTime.UnixMilli(), hash, sol[0], sol[1], sol[2], sol[3]); err != nil {
		return wrap(err)
	}
	return wrap(tx.Commit())
}

// writeSOL stores w's SOL balance changes and moves the stored SOL range
// through w's cursor: extended when it ended at the stored cursor, started
// again at w.SOL.First otherwise. It runs before the cursor moves, so the
// cursor row it reads is the previous batch's; a first batch has none, and
// the cursor's insert records the range.
func writeSOL(ctx context.Context, tx *sql.Tx, w *chainquery.SolanaWrite) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO sol_balances (account, block_time, slot, lamports) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, c := range w.SOL.Changes {
		if _, err := stmt.ExecContext(ctx, c.Account[:], c.BlockTime.UnixMilli(), int64(c.Slot), int64(c.Lamports)); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE solana_cursor SET
			sol_from = CASE WHEN sol_through = slot THEN sol_from ELSE ?1 END,
			sol_from_time = CASE WHEN sol_through = slot THEN sol_from_time ELSE ?2 END,
			sol_through = ?3, sol_through_time = ?4
		WHERE id = 1`,
		int64(w.SOL.First.Slot), w.SOL.First.BlockTime.UnixMilli(), int64(w.Cursor.Slot), w.Cursor.BlockTime.UnixMilli())
	return err
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
