package postgres

import (
	"context"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// WriteSolana stores a batch's token and SOL balance changes and moves the
// Solana cursor, in one transaction. All changes of a table go in one
// statement, whatever their number: arrays of the columns, unnested,
// upserted on the key.
func (db *DB) WriteSolana(ctx context.Context, w *chainquery.SolanaWrite) error {
	if w.SOL != nil {
		if err := w.SOL.Check(); err != nil {
			return err
		}
	}
	changes, cursor := w.Tokens, w.Cursor
	// ON CONFLICT may touch a row once per statement, so a change written
	// twice in one call is sent once: the last one, as if written in turn.
	type key struct {
		account   chainquery.PublicKey
		blockTime int64
		slot      uint64
		txIndex   int
	}
	index := map[key]int{}
	var (
		accounts, owners, mints [][]byte
		times, slots            []int64
		txIndexes, decimals     []int32
		amounts                 []pgtype.Numeric
	)
	for _, c := range changes {
		var owner []byte
		if c.Owner != nil {
			owner = c.Owner[:]
		}
		k := key{c.Account, c.BlockTime.UnixMilli(), c.Slot, c.TxIndex}
		if i, ok := index[k]; ok {
			owners[i], mints[i], amounts[i], decimals[i] = owner, c.Mint[:], u64Arg(c.Amount), int32(c.Decimals)
			continue
		}
		index[k] = len(accounts)
		accounts, times, slots, txIndexes = append(accounts, c.Account[:]), append(times, k.blockTime), append(slots, int64(c.Slot)), append(txIndexes, int32(c.TxIndex))
		owners, mints, amounts, decimals = append(owners, owner), append(mints, c.Mint[:]), append(amounts, u64Arg(c.Amount)), append(decimals, int32(c.Decimals))
	}
	return wrap(pgx.BeginFunc(ctx, db.write, func(tx pgx.Tx) error {
		if len(accounts) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO token_balances (account, block_time, slot, tx_index, owner, mint, amount, decimals)
				SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::integer[], $5::bytea[], $6::bytea[], $7::numeric[], $8::integer[])
				ON CONFLICT (account, block_time, slot, tx_index) DO UPDATE SET
					owner = excluded.owner, mint = excluded.mint, amount = excluded.amount, decimals = excluded.decimals`,
				accounts, times, slots, txIndexes, owners, mints, amounts, decimals); err != nil {
				return err
			}
		}
		var sol [4]*int64 // the SOL range of a first cursor row: NULL without SOL changes
		if w.SOL != nil {
			if err := writeSOL(ctx, tx, w); err != nil {
				return err
			}
			sol = [4]*int64{ptr(int64(w.SOL.First.Slot)), ptr(w.SOL.First.BlockTime.UnixMilli()), ptr(int64(cursor.Slot)), ptr(cursor.BlockTime.UnixMilli())}
		}
		var hash *string // NULL when unknown, as in a cursor stored before hashes were
		if cursor.Blockhash != "" {
			hash = &cursor.Blockhash
		}
		_, err := tx.Exec(ctx, `INSERT INTO solana_cursor (id, slot, block_time, blockhash, sol_from, sol_from_time, sol_through, sol_through_time)
			VALUES (1, $1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (id) DO UPDATE SET slot = excluded.slot, block_time = excluded.block_time, blockhash = excluded.blockhash`,
			int64(cursor.Slot), cursor.BlockTime.UnixMilli(), hash, sol[0], sol[1], sol[2], sol[3])
		return err
	}))
}

func ptr[T any](v T) *T { return &v }

// writeSOL stores w's SOL balance changes in one statement and moves the
// stored SOL range through w's cursor: extended when it ended at the stored
// cursor, started again at w.SOL.First otherwise. It runs before the cursor
// moves, so the cursor row it reads is the previous batch's; a first batch
// has none, and the cursor's insert records the range.
func writeSOL(ctx context.Context, tx pgx.Tx, w *chainquery.SolanaWrite) error {
	// ON CONFLICT may touch a row once per statement: the last change of a
	// key wins, as if written in turn.
	type key struct {
		account   chainquery.PublicKey
		blockTime int64
		slot      uint64
	}
	index := map[key]int{}
	var accounts [][]byte
	var times, slots, lamports []int64
	for _, c := range w.SOL.Changes {
		k := key{c.Account, c.BlockTime.UnixMilli(), c.Slot}
		if i, ok := index[k]; ok {
			lamports[i] = int64(c.Lamports)
			continue
		}
		index[k] = len(accounts)
		accounts, times, slots, lamports = append(accounts, c.Account[:]), append(times, k.blockTime), append(slots, int64(c.Slot)), append(lamports, int64(c.Lamports))
	}
	if len(accounts) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO sol_balances (account, block_time, slot, lamports)
			SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::bigint[])
			ON CONFLICT (account, block_time, slot) DO UPDATE SET lamports = excluded.lamports`,
			accounts, times, slots, lamports); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `UPDATE solana_cursor SET
			sol_from = CASE WHEN sol_through = slot THEN sol_from ELSE $1 END,
			sol_from_time = CASE WHEN sol_through = slot THEN sol_from_time ELSE $2 END,
			sol_through = $3, sol_through_time = $4
		WHERE id = 1`,
		int64(w.SOL.First.Slot), w.SOL.First.BlockTime.UnixMilli(), int64(w.Cursor.Slot), w.Cursor.BlockTime.UnixMilli())
	return err
}

// WriteTokens inserts or replaces token registry entries.
func (db *DB) WriteTokens(ctx context.Context, tokens []*chainquery.Token) error {
	return db.writeTokens(ctx, `DO UPDATE SET name = excluded.name, symbol = excluded.symbol, decimals = excluded.decimals`, tokens)
}

// AddTokens inserts the entries of mints the registry does not know.
func (db *DB) AddTokens(ctx context.Context, tokens []*chainquery.Token) error {
	return db.writeTokens(ctx, `DO NOTHING`, tokens)
}

func (db *DB) writeTokens(ctx context.Context, onConflict string, tokens []*chainquery.Token) error {
	index := map[chainquery.PublicKey]int{}
	var (
		mints          [][]byte
		names, symbols []string
		decimals       []int32
	)
	for _, t := range tokens {
		if i, ok := index[t.Mint]; ok { // the last entry of a mint wins, as if written in turn
			names[i], symbols[i], decimals[i] = t.Name, t.Symbol, int32(t.Decimals)
			continue
		}
		index[t.Mint] = len(mints)
		mints, names, symbols, decimals = append(mints, t.Mint[:]), append(names, t.Name), append(symbols, t.Symbol), append(decimals, int32(t.Decimals))
	}
	if len(mints) == 0 {
		return nil
	}
	_, err := db.write.Exec(ctx, `INSERT INTO tokens (mint, name, symbol, decimals)
		SELECT * FROM unnest($1::bytea[], $2::text[], $3::text[], $4::integer[])
		ON CONFLICT (mint) `+onConflict,
		mints, names, symbols, decimals)
	return wrap(err)
}
