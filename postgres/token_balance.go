package postgres

import (
	"context"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// WriteTokenBalances stores changes and moves the Solana cursor to cursor in
// one transaction. All changes go in one statement, whatever their number:
// arrays of the columns, unnested, upserted on the key.
func (db *DB) WriteTokenBalances(ctx context.Context, changes []*chainquery.TokenBalanceChange, cursor chainquery.SolanaCursor) error {
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
		var hash *string // NULL when unknown, as in a cursor stored before hashes were
		if cursor.Blockhash != "" {
			hash = &cursor.Blockhash
		}
		_, err := tx.Exec(ctx, `INSERT INTO solana_cursor (id, slot, block_time, blockhash) VALUES (1, $1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET slot = excluded.slot, block_time = excluded.block_time, blockhash = excluded.blockhash`,
			int64(cursor.Slot), cursor.BlockTime.UnixMilli(), hash)
		return err
	}))
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
