package storetest

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// hashBlock is block n of seed with up to six transactions of random
// hashes; one in eight shares its first 8 bytes (sqlstore.HashPrefix) with
// every other such one, so that a prefix's entries run across pages of
// the hash index and its hashes are told apart by the segments.
func hashBlock(seed, n uint64) *chainquery.BlockData {
	r := rand.New(rand.NewPCG(seed^0x4a5, n))
	txs := r.IntN(7)
	d := &chainquery.BlockData{Block: header(chainquery.Polygon, n, PolygonTime+int64(n)*2, txs)}
	d.Block.Hash = H(TagBlock, byte(seed*31+n))
	for i := range txs {
		var h chainquery.Hash
		for k := 0; k < len(h); k += 8 {
			binary.BigEndian.PutUint64(h[k:], r.Uint64())
		}
		if r.IntN(8) == 0 {
			binary.BigEndian.PutUint64(h[:8], 0x5eed5eed5eed5eed)
		}
		to := countAddrs[r.IntN(len(countAddrs))]
		d.Transactions = append(d.Transactions, tx(n, i, h, countHot, &to))
	}
	return d
}

// CheckHashRuns writes hashBlock's blocks 1,000 to 1,399 into want, a
// store of rows, and straight into history in got, 20 at a time (a run of
// the hash index each), whose merges of runs the caller makes to read
// them in small parts (sqlstore.Store.HashChunkEntries); then
// rewrites blocks 1,250 up in both with other transactions (a thaw, which
// cuts the runs across it). After each, every transaction written, looked
// up by its hash alone and with its block, and those rewritten away,
// answer alike in both; and got's index, read through c, was merged three
// levels deep at least, and each of its runs holds sqlstore.HashRunRatio
// times the entries of the next at least.
func CheckHashRuns(t *testing.T, want, got chainquery.Store, c sqlstore.Conn) {
	ctx := context.Background()
	const first, last, again = 1000, 1399, 1250
	write := writeAlike(t, want, got, last, hashBlock)
	same := sameAs(t, want, got)
	check := func(seed, from, to uint64) {
		for n := from; n <= to; n++ {
			for _, x := range hashBlock(seed, n).Transactions {
				for _, in := range []*uint64{nil, &n} {
					f := chainquery.TransactionFilter{Chain: chainquery.Polygon, TransactionHash: x.Hash, BlockNumber: in}
					same(fmt.Sprintf("transaction %s of block %d (seed %d, by block: %t)", x.Hash.Hex(), n, seed, in != nil), func(s chainquery.Store) (any, error) {
						return s.FindTransaction(ctx, f)
					})
				}
			}
		}
	}
	write(1, first, false)
	check(1, first, last)
	write(2, again, true)
	check(1, first, last) // those from again up are found in neither
	check(2, again, last)
	var level, top, entries, n int
	var sizes []int
	err := c.Query(ctx, `SELECT level, entries FROM tx_hash_runs WHERE chain = 137 ORDER BY id`, nil, []any{&level, &n}, func() error {
		top, entries, sizes = max(top, level), entries+n, append(sizes, n)
		return nil
	})
	if err != nil || top < 3 {
		t.Errorf("the hash index's runs were merged %d levels deep (%v), want 3 at least", top, err)
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i-1] < sqlstore.HashRunRatio*sizes[i] {
			t.Errorf("the hash index's runs hold %v entries: the run %d holds fewer than %d times the next", sizes, i-1, sqlstore.HashRunRatio)
		}
	}
	// Each transaction once: a merge in parts reads the pages at the
	// parts' ends twice.
	var below uint64
	err = c.Query(ctx, `SELECT below FROM history WHERE chain = 137`, nil, []any{&below}, func() error { return nil })
	// An entry is a prefix and a block: two hashes of one block that
	// share their prefix are one.
	type entry struct {
		prefix int64
		block  uint64
	}
	distinct := map[entry]bool{}
	for k := uint64(first); k < below; k++ {
		seed := uint64(1)
		if k >= again {
			seed = 2
		}
		for _, x := range hashBlock(seed, k).Transactions {
			distinct[entry{sqlstore.HashPrefix(x.Hash), k}] = true
		}
	}
	txs := len(distinct)
	if err != nil || entries != txs {
		t.Errorf("the hash index holds %d entries (%v), want %d, of the blocks below %d", entries, err, txs, below)
	}
}
