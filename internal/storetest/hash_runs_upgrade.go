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
// of history in history_tx_hashes (chain, prefix, block_number). A
// store's test puts OldHashRows there with its SQL, opens the store on
// the database (migration 0019 makes each chain's rows one run) and calls
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

// CheckHashIndexUpgrade requires the hash index c reads to hold
// OldHashRows, each chain's as one run of its own that merges never take
// (level above any a merge makes), and history_tx_hashes to be gone.
func CheckHashIndexUpgrade(t *testing.T, c sqlstore.Conn) {
	ctx := context.Background()
	want := map[int64][]history.HashEntry{}
	for _, r := range OldHashRows() {
		chain := r[0].(int64)
		want[chain] = append(want[chain], history.HashEntry{Prefix: r[1].(int64), Block: uint64(r[2].(int64))})
	}
	for chain, es := range want {
		slices.SortFunc(es, history.HashEntry.Compare)
		var id, level, low, high, entries int64
		runs := 0
		err := c.Query(ctx, `SELECT id, level, low, high, entries FROM tx_hash_runs WHERE chain = $1`, []any{chain},
			[]any{&id, &level, &low, &high, &entries}, func() error { runs++; return nil })
		if err != nil || runs != 1 {
			t.Fatalf("chain %d has %d runs (%v), want 1", chain, runs, err)
		}
		byBlock := func(a, b history.HashEntry) int { return cmp.Compare(a.Block, b.Block) }
		lo, hi := slices.MinFunc(es, byBlock).Block, slices.MaxFunc(es, byBlock).Block
		if level < 1000 || uint64(low) != lo || uint64(high) != hi || entries != int64(len(es)) {
			t.Errorf("chain %d's run: level %d, blocks %d to %d, %d entries; want a level above merges', blocks %d to %d, %d entries", chain, level, low, high, entries, lo, hi, len(es))
		}
		var got []history.HashEntry
		var prefix int64
		var page []byte
		err = c.Query(ctx, `SELECT prefix, entries FROM tx_hash_pages WHERE chain = $1 AND run = $2 ORDER BY prefix`, []any{chain, id},
			[]any{&prefix, &page}, func() error {
				start := len(got)
				var err error
				if got, err = history.AppendHashEntries(got, page, uint64(low)); err == nil && (len(got) == start || got[start].Prefix != prefix) {
					t.Errorf("chain %d: a page keyed %d starts with another prefix", chain, prefix)
				}
				return err
			})
		if err != nil || !slices.Equal(got, es) {
			t.Errorf("chain %d's pages hold %d entries (%v), want the %d rows in order", chain, len(got), err, len(es))
		}
	}
	var n int
	if err := c.Query(ctx, `SELECT count(*) FROM history_tx_hashes`, nil, []any{&n}, func() error { return nil }); err == nil {
		t.Error("history_tx_hashes is still there")
	}
}
