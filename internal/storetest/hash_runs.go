package storetest

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
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
// them in small parts (sqlstore.Store.HashChunkEntries), so that the
// larger ones are made over several writes; then rewrites blocks 1,250 up
// in both with other transactions (a thaw, which cuts the runs across
// it). After each write and after the thaw, every transaction
// written, looked up by its hash alone and with its block, and those
// rewritten away, answer alike in both, and got's index holds each
// transaction once; at one of those a merge was under way at least; and
// at the end got's index, read through c, was merged three levels deep at
// least, and each of its runs (a merge under way counted as one) holds
// sqlstore.HashRunRatio times the entries of the next at least.
func CheckHashRuns(t *testing.T, want, got chainquery.Store, c sqlstore.Conn) {
	ctx := context.Background()
	const first, last, again = 1000, 1399, 1250
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
	merging := false
	for upTo := uint64(first + 19); upTo <= last; upTo += 20 {
		writeAlike(t, want, got, upTo, hashBlock)(1, upTo-19, false)
		check(1, first, upTo)
		merging = checkHashEntries(t, c, first, math.MaxUint64) || merging
	}
	if !merging {
		t.Errorf("no merge of the hash index's runs was under way after any write")
	}
	writeAlike(t, want, got, last, hashBlock)(2, again, true)
	check(1, first, last) // those from again up are found in neither
	check(2, again, last)
	checkHashEntries(t, c, first, again)
	var level, top, n int
	var lo, hi int64
	var sizes []int
	group := -1 // the runs of a merge under way, in sizes
	err := c.Query(ctx, `SELECT level, entries, prefix_lo, prefix_hi FROM tx_hash_runs WHERE chain = 137 ORDER BY id`, nil, []any{&level, &n, &lo, &hi}, func() error {
		top = max(top, level)
		if lo != math.MinInt64 || hi != math.MaxInt64 { // in a merge: one with its other runs
			if group >= 0 {
				sizes[group] += n
				return nil
			}
			group = len(sizes)
		}
		sizes = append(sizes, n)
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
}

// CheckHashRunIDs writes hashBlock's blocks 1,000 to 1,099 into want, a
// store of rows, and straight into history in got (runs of the hash
// index, merged), then block 1,100 alone (a small run of its own), looks
// up its transactions in both, and rewrites block 1,100 with other
// transactions: the thaw deletes the small run whole, and the write makes
// a new one. Readers keep small complete runs in memory by their ids, so
// the new run must not take the deleted one's: its transactions, and
// those rewritten away, answer alike in both.
func CheckHashRunIDs(t *testing.T, want, got chainquery.Store) {
	ctx := context.Background()
	const first, small = 1000, 1100
	same := sameAs(t, want, got)
	check := func(seed uint64) {
		txs := hashBlock(seed, small).Transactions
		if len(txs) == 0 {
			t.Fatalf("block %d of seed %d has no transactions", small, seed)
		}
		for _, x := range txs {
			f := chainquery.TransactionFilter{Chain: chainquery.Polygon, TransactionHash: x.Hash}
			same(fmt.Sprintf("transaction %s of block %d (seed %d)", x.Hash.Hex(), small, seed), func(s chainquery.Store) (any, error) {
				return s.FindTransaction(ctx, f)
			})
		}
	}
	writeAlike(t, want, got, small-1, hashBlock)(1, first, false)
	writeAlike(t, want, got, small, hashBlock)(1, small, false)
	check(1)
	writeAlike(t, want, got, small, hashBlock)(3, small, true)
	check(1)
	check(3)
}

// checkHashEntries checks that got's hash index, read through c, holds
// each transaction of history once (the blocks from again those of seed
// 2), and reports whether a merge of its runs is under way.
func checkHashEntries(t *testing.T, c sqlstore.Conn, first, again uint64) (merging bool) {
	t.Helper()
	ctx := context.Background()
	var entries, n int
	var lo, hi int64
	err := c.Query(ctx, `SELECT entries, prefix_lo, prefix_hi FROM tx_hash_runs WHERE chain = 137`, nil, []any{&n, &lo, &hi}, func() error {
		entries += n
		merging = merging || lo != math.MinInt64 || hi != math.MaxInt64
		return nil
	})
	if err != nil {
		t.Fatal(err)
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
	return merging
}
