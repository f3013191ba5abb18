package sqlstore

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
)

// SolanaCursor returns the cursor WriteTokenBalances last recorded, with an
// empty Blockhash when it was stored before hashes were. It reads the
// primary: a resuming ingester must not trust a lagging replica.
func (s *Store) SolanaCursor(ctx context.Context) (chainquery.SolanaCursor, bool, error) {
	var c chainquery.SolanaCursor
	var blockTime int64
	var hash *string
	var sc scan
	sc.counter(&c.Slot).to(&blockTime, &hash)
	if found, err := queryRow(ctx, s.Primary, qSolanaCursor, nil, sc.dest...); err != nil || !found {
		return chainquery.SolanaCursor{}, false, err
	}
	if err := sc.done(); err != nil {
		return chainquery.SolanaCursor{}, false, err
	}
	c.BlockTime = time.UnixMilli(blockTime).UTC()
	if hash != nil {
		c.Blockhash = *hash
	}
	return c, true, nil
}

// qSolanaCursor: → slot, block_time, blockhash (NULL when unknown).
const qSolanaCursor = `SELECT slot, block_time, blockhash FROM solana_cursor WHERE id = 1`

// WriteSolana stores a batch's token and SOL balance changes and moves the
// Solana cursor, in one transaction (TokenBalanceWriter). A change written
// twice in one batch is stored once: the last one, as if written in turn.
func (s *Store) WriteSolana(ctx context.Context, w *chainquery.SolanaWrite) error {
	if w.SOL != nil {
		if err := w.SOL.Check(); err != nil {
			return err
		}
	}
	tx, err := s.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	tokens := Table{Name: "token_balances", Columns: []string{"account", "block_time", "slot", "tx_index", "owner", "mint", "amount", "decimals"}}
	for _, c := range w.Tokens {
		var owner any
		if c.Owner != nil {
			owner = c.Owner[:]
		}
		tokens.Values = append(tokens.Values, c.Account[:], c.BlockTime.UnixMilli(), int64(c.Slot), c.TxIndex,
			owner, c.Mint[:], s.AmountArg(new(big.Int).SetUint64(c.Amount)), c.Decimals)
	}
	if err := upsert(ctx, tx, &tokens, 4, true); err != nil {
		return err
	}
	var sol [4]any // the SOL range of a first cursor row: NULL without SOL changes
	if w.SOL != nil {
		if err := writeSOL(ctx, tx, w); err != nil {
			return err
		}
		sol = [4]any{int64(w.SOL.First.Slot), w.SOL.First.BlockTime.UnixMilli(), int64(w.Cursor.Slot), w.Cursor.BlockTime.UnixMilli()}
	}
	var hash any // NULL when unknown, as in a cursor stored before hashes were
	if w.Cursor.Blockhash != "" {
		hash = w.Cursor.Blockhash
	}
	if _, err := tx.Exec(ctx, qMoveSolanaCursor, int64(w.Cursor.Slot), w.Cursor.BlockTime.UnixMilli(), hash,
		sol[0], sol[1], sol[2], sol[3]); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// writeSOL stores w's SOL balance changes and moves the stored SOL range
// through w's cursor: extended when it ended at the stored cursor, started
// again at w.SOL.First otherwise. It runs before the cursor moves, so the
// cursor row it reads is the previous batch's; a first batch has none, and
// the cursor's insert records the range.
func writeSOL(ctx context.Context, tx Tx, w *chainquery.SolanaWrite) error {
	sol := Table{Name: "sol_balances", Columns: []string{"account", "block_time", "slot", "lamports"}}
	for _, c := range w.SOL.Changes {
		sol.Values = append(sol.Values, c.Account[:], c.BlockTime.UnixMilli(), int64(c.Slot), int64(c.Lamports))
	}
	if err := upsert(ctx, tx, &sol, 3, true); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, qMoveSOLRange,
		int64(w.SOL.First.Slot), w.SOL.First.BlockTime.UnixMilli(), int64(w.Cursor.Slot), w.Cursor.BlockTime.UnixMilli())
	return err
}

// WriteTokens inserts or replaces token registry entries.
func (s *Store) WriteTokens(ctx context.Context, tokens []*chainquery.Token) error {
	return s.writeTokens(ctx, tokens, true)
}

// AddTokens inserts the entries of mints the registry does not know.
func (s *Store) AddTokens(ctx context.Context, tokens []*chainquery.Token) error {
	return s.writeTokens(ctx, tokens, false)
}

// writeTokens writes the registry entries of tokens, the last of a mint
// given twice winning, replacing those the registry has when replace is
// set.
func (s *Store) writeTokens(ctx context.Context, tokens []*chainquery.Token, replace bool) error {
	tx, err := s.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	t := Table{Name: "tokens", Columns: []string{"mint", "name", "symbol", "decimals"}}
	for _, k := range tokens {
		t.Values = append(t.Values, k.Mint[:], k.Name, k.Symbol, k.Decimals)
	}
	if err := upsert(ctx, tx, &t, 1, replace); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// upsertRows is how many rows one statement of upsert carries: well under
// either database's limit of parameters (SQLite's 32,766) at the widest
// table's eight columns.
const upsertRows = 1000

// upsert inserts the rows of t whose key is its first key columns: a row
// whose key is stored replaces it when replace is set, and is left out
// otherwise. Of rows of one key the last wins, as if written in turn: an
// upsert may touch a row once per statement.
func upsert(ctx context.Context, c Conn, t *Table, key int, replace bool) error {
	cols := len(t.Columns)
	last := map[string]int{} // key → the index in rows of its last row
	var rows []int           // each key's last row, in the order keys first come
	for i := 0; i < t.Rows(); i++ {
		k := fmt.Sprint(t.Values[i*cols : i*cols+key]...)
		if j, ok := last[k]; ok {
			rows[j] = i
			continue
		}
		last[k] = len(rows)
		rows = append(rows, i)
	}
	conflict := ` ON CONFLICT (` + strings.Join(t.Columns[:key], ", ") + `) DO NOTHING`
	if replace {
		set := make([]string, 0, cols-key)
		for _, c := range t.Columns[key:] {
			set = append(set, c+` = excluded.`+c)
		}
		conflict = ` ON CONFLICT (` + strings.Join(t.Columns[:key], ", ") + `) DO UPDATE SET ` + strings.Join(set, ", ")
	}
	for len(rows) > 0 {
		n := min(len(rows), upsertRows)
		args := make([]any, 0, n*cols)
		for _, i := range rows[:n] {
			args = append(args, t.Values[i*cols:(i+1)*cols]...)
		}
		if _, err := c.Exec(ctx, insertSQL(*t, n)+conflict, args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// qMoveSOLRange: the first slot of the batch's SOL changes and its
// block_time, the batch's cursor slot and its block_time → the stored SOL
// range extended through the cursor when it ended at the stored cursor,
// started again at the first slot otherwise.
const qMoveSOLRange = `UPDATE solana_cursor SET
		sol_from = CASE WHEN sol_through = slot THEN sol_from ELSE $1 END,
		sol_from_time = CASE WHEN sol_through = slot THEN sol_from_time ELSE $2 END,
		sol_through = $3, sol_through_time = $4
	WHERE id = 1`

// qMoveSolanaCursor: slot, block_time, blockhash, then the SOL range of a
// first cursor row (sol_from, sol_from_time, sol_through,
// sol_through_time) → the cursor moved, or made with that range.
const qMoveSolanaCursor = `INSERT INTO solana_cursor (id, slot, block_time, blockhash, sol_from, sol_from_time, sol_through, sol_through_time)
	VALUES (1, $1, $2, $3, $4, $5, $6, $7)
	ON CONFLICT (id) DO UPDATE SET slot = excluded.slot, block_time = excluded.block_time, blockhash = excluded.blockhash`
