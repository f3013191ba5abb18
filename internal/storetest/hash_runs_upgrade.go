package storetest

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/sqlstore"
)

// A database made before migration 0019 kept the transaction hash index
// of history in history_tx_hashes and recent_tx_hashes (chain, prefix,
// block_number). A store's test puts OldHashRows and OldRecentHashRows
// there with its SQL, opens the store on the database (migration 0019
// makes each chain's rows of each table one run) and calls
// CheckHashIndexUpgrade with a connection to it.

// OldHashRows are rows of history_tx_hashes: 70,000 of chain 137 (more
// than a part of the migration's reads), with prefixes at both ends of
// the integers and one prefix in 300 blocks, and 50 of chain 1.
func OldHashRows() [][]any {
	r := rand.New(rand.NewPCG(19, 0))
	var rows [][]any
	add := func(chain, prefix, block int64) { rows = append(rows, []any{chain, prefix, block}) }
	for i := range int64(70_000) {
		p, block := int64(r.Uint64()), 65_000_000+i/100
		switch {
		case i < 3:
			p = math.MinInt64
		case i < 6:
			p = math.MaxInt64
		case i < 306:
			p = 42
		}
		if i < 306 {
			block = 65_000_000 + i // one entry a block
		}
		add(137, p, block)
	}
	for i := range int64(50) {
		add(1, int64(r.Uint64()), 20_000_000+i)
	}
	return rows
}

// OldRecentHashRows are rows of recent_tx_hashes: 500 of chain 137, of the
// blocks after OldHashRows', and 20 of chain 5, which has no others.
func OldRecentHashRows() [][]any {
	r := rand.New(rand.NewPCG(19, 1))
	var rows [][]any
	for i := range int64(500) {
		rows = append(rows, []any{int64(137), int64(r.Uint64()), 65_000_700 + i/10})
	}
	for i := range int64(20) {
		rows = append(rows, []any{int64(5), int64(r.Uint64()), 3_000 + i})
	}
	return rows
}

// CheckHashIndexUpgrade requires the hash index c reads to hold
// OldHashRows, each chain's as a run that merges never take (level above
// any a merge makes), then OldRecentHashRows, each chain's as a run of
// level 0, and the old tables to be gone.
func CheckHashIndexUpgrade(t *testing.T, c sqlstore.Conn) {
	ctx := context.Background()
	type old struct {
		entries []history.HashEntry
		legacy  bool
	}
	want := map[int64][]*old{}
	for k, rows := range [][][]any{OldHashRows(), OldRecentHashRows()} {
		for _, r := range rows {
			chain := r[0].(int64)
			runs := want[chain]
			if len(runs) == 0 || runs[len(runs)-1].legacy != (k == 0) {
				runs = append(runs, &old{legacy: k == 0})
				want[chain] = runs
			}
			o := runs[len(runs)-1]
			o.entries = append(o.entries, history.HashEntry{Prefix: r[1].(int64), Block: uint64(r[2].(int64))})
		}
	}
	for chain, olds := range want {
		type run struct{ id, level, low, high, entries int64 }
		var runs []run
		var x run
		err := c.Query(ctx, `SELECT id, level, low, high, entries FROM tx_hash_runs WHERE chain = $1 ORDER BY id`, []any{chain},
			[]any{&x.id, &x.level, &x.low, &x.high, &x.entries}, func() error { runs = append(runs, x); return nil })
		if err != nil || len(runs) != len(olds) {
			t.Fatalf("chain %d has %d runs (%v), want %d", chain, len(runs), err, len(olds))
		}
		for i, o := range olds {
			es, r := o.entries, runs[i]
			slices.SortFunc(es, history.HashEntry.Compare)
			byBlock := func(a, b history.HashEntry) int { return cmp.Compare(a.Block, b.Block) }
			lo, hi := slices.MinFunc(es, byBlock).Block, slices.MaxFunc(es, byBlock).Block
			if o.legacy != (r.level >= 1000) || !o.legacy && r.level != 0 || uint64(r.low) != lo || uint64(r.high) != hi || r.entries != int64(len(es)) {
				t.Errorf("chain %d's run %d: level %d, blocks %d to %d, %d entries; want of the old index %t (level 0 else), blocks %d to %d, %d entries",
					chain, r.id, r.level, r.low, r.high, r.entries, o.legacy, lo, hi, len(es))
			}
			var got []history.HashEntry
			var prefix int64
			var page []byte
			err = c.Query(ctx, `SELECT prefix, entries FROM tx_hash_pages WHERE chain = $1 AND run = $2 ORDER BY prefix`, []any{chain, r.id},
				[]any{&prefix, &page}, func() error {
					start := len(got)
					var err error
					if got, err = history.AppendHashEntries(got, page, uint64(r.low)); err == nil && (len(got) == start || got[start].Prefix != prefix) {
						t.Errorf("chain %d: a page keyed %d starts with another prefix", chain, prefix)
					}
					return err
				})
			if err != nil || !slices.Equal(got, es) {
				t.Errorf("chain %d's run %d holds %d entries (%v), want the %d rows in order", chain, r.id, len(got), err, len(es))
			}
		}
	}
	var n int
	for _, table := range []string{"history_tx_hashes", "recent_tx_hashes"} {
		if err := c.Query(ctx, `SELECT count(*) FROM `+table, nil, []any{&n}, func() error { return nil }); err == nil {
			t.Errorf("%s is still there", table)
		}
	}
}
