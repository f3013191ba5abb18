package sqlite_test

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
)

// BenchmarkFindTransactionHistory: Get Transaction of transactions of
// 20,000 history blocks (the fixture's Polygon block again and again,
// its transactions given random hashes), written 400 blocks a write.
func BenchmarkFindTransactionHistory(b *testing.B) {
	const first, n = 65_000_000, 20_000
	db := MustOpenDB(b)
	ctx := context.Background()
	db.SetNodeHead(chainquery.Polygon, first+n+1000)
	r := rand.New(rand.NewPCG(1, 2))
	var hashes []chainquery.Hash
	for start := 0; start < n; start += 400 {
		var batch []*chainquery.BlockData
		for i := start; i < start+400; i++ {
			d := storetest.Blocks()[chainquery.Polygon][0]
			num := uint64(first + i)
			d.Block.Number = num
			d.Block.Timestamp += int64(i) * 2
			for _, tx := range d.Transactions {
				binary.BigEndian.PutUint64(tx.Hash[:], r.Uint64())
				binary.BigEndian.PutUint64(tx.Hash[8:], r.Uint64())
				tx.BlockNumber = num
				hashes = append(hashes, tx.Hash)
			}
			for _, l := range d.Logs {
				l.BlockNumber = num
			}
			for _, t := range d.Traces {
				t.BlockNumber = num
			}
			batch = append(batch, d)
		}
		if err := db.WriteBlocks(ctx, chainquery.Polygon, batch); err != nil {
			b.Fatal(err)
		}
	}
	// Random transactions, whose segments are read and decoded; and 32,
	// as cqbench load's workloads draw, whose segments the store's cache
	// holds: the statements alone.
	for _, c := range []struct {
		name    string
		targets int
	}{{"random", len(hashes)}, {"32 targets", 32}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				h := hashes[int(uint64(i%c.targets)*0x9e3779b97f4a7c15%uint64(len(hashes)))]
				if _, err := db.FindTransaction(ctx, chainquery.TransactionFilter{Chain: chainquery.Polygon, TransactionHash: h}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
