package postgres_test

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
)

// BenchmarkWriteBlocks writes batches of 20 copies of the fixture's busiest
// block (5 transactions, 5 logs, 20 traces) at new heights and reports rows
// written per second: the same load as the SQLite store's benchmark.
func BenchmarkWriteBlocks(b *testing.B) {
	db := postgres.MustOpenDB(b)
	ctx := context.Background()
	const batch = 20
	rows := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blocks := make([]*chainquery.BlockData, batch)
		for j := range blocks {
			d := storetest.Blocks()[chainquery.Polygon][0]
			n := uint64(i*batch + j)
			d.Block.Number = n
			for _, tx := range d.Transactions {
				tx.BlockNumber = n
				tx.Hash[8], tx.Hash[9], tx.Hash[10] = byte(n), byte(n>>8), byte(n>>16)
			}
			rows += 1 + len(d.Transactions) + len(d.Logs) + len(d.Traces)
			blocks[j] = d
		}
		if err := db.WriteBlocks(ctx, chainquery.Polygon, blocks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkFindTraces serves the fixture's first page of Filter Traces, the
// widest read, from a loaded store.
func BenchmarkFindTraces(b *testing.B) {
	db := postgres.MustOpenDB(b)
	storetest.Load(b, db)
	ctx := context.Background()
	from, to := storetest.PolygonBlock, storetest.PolygonLaterBlock
	f := chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &from, ToBlock: &to, Page: chainquery.Page{Limit: 10}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := db.FindTraces(ctx, f); err != nil {
			b.Fatal(err)
		}
	}
}
