package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/sqlite"
)

// benchBlocks builds n copies of the fixture's busiest polygon block (5
// transactions, 5 logs, 20 traces) at heights 0..n-1, with distinct hashes.
func benchBlocks(n int) []*chainquery.BlockData {
	out := make([]*chainquery.BlockData, n)
	for i := range out {
		d := storetest.Blocks()[chainquery.Polygon][0]
		h := uint64(i)
		d.Block.Number, d.Block.Timestamp = h, storetest.PolygonTime+int64(i)*2
		d.Block.Hash[8], d.Block.Hash[9], d.Block.Hash[10] = byte(h), byte(h>>8), byte(h>>16)
		if i > 0 {
			d.Block.ParentHash = out[i-1].Block.Hash
		}
		for _, tx := range d.Transactions {
			tx.BlockNumber = h
			tx.Hash[8], tx.Hash[9], tx.Hash[10] = byte(h), byte(h>>8), byte(h>>16)
		}
		for _, l := range d.Logs {
			l.BlockNumber = h
		}
		for _, t := range d.Traces {
			t.BlockNumber = h
		}
		out[i] = d
	}
	return out
}

// BenchmarkStores measures both stores in one run on the same data: write
// throughput (rows/s, 20-block transactions; COPY on PostgreSQL, 64-row
// INSERTs on SQLite) and the latency of each read the API makes.
//
//	scripts/pg run go test -run '^$' -bench BenchmarkStores -benchtime 2000x ./postgres/
func BenchmarkStores(b *testing.B) {
	const blocks, batch = 4000, 20
	data := benchBlocks(blocks)
	rows := 0
	for _, d := range data {
		rows += 1 + len(d.Transactions) + len(d.Logs) + len(d.Traces)
	}
	stores := []struct {
		name string
		open func(testing.TB) chainquery.Store
	}{
		{"sqlite", func(tb testing.TB) chainquery.Store {
			db, err := sqlite.Open(filepath.Join(tb.TempDir(), "bench.db"))
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { db.Close() })
			return db
		}},
		{"postgres", func(tb testing.TB) chainquery.Store { return postgres.MustOpenDB(tb) }},
	}
	ctx := context.Background()
	for _, st := range stores {
		// The load is written once (a benchmark function may run several
		// times) and its rate reported by a sub-benchmark of its own.
		s := st.open(b)
		start := time.Now()
		for i := 0; i < blocks; i += batch {
			if err := s.WriteBlocks(ctx, chainquery.Polygon, data[i:i+batch]); err != nil {
				b.Fatal(err)
			}
		}
		rate := float64(rows) / time.Since(start).Seconds()
		b.Run(st.name+"/write", func(b *testing.B) {
			b.ReportMetric(rate, "rows/s")
			b.ReportMetric(0, "ns/op")
		})
		from, to := uint64(blocks/2), uint64(blocks/2+99)
		reads := []struct {
			name string
			do   func(i int) error
		}{
			{"filter_traces_blocks", func(i int) error {
				f := chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &from, ToBlock: &to, Page: chainquery.Page{Offset: i % 100, Limit: 50}}
				_, _, err := s.FindTraces(ctx, f)
				return err
			}},
			{"filter_traces_address", func(i int) error {
				f := chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &from, ToBlock: &to,
					FromAddresses: []chainquery.Address{storetest.Router, storetest.EOA2}, Page: chainquery.Page{Offset: i % 100, Limit: 50}}
				_, _, err := s.FindTraces(ctx, f)
				return err
			}},
			{"filter_traces_datetime", func(i int) error {
				t0 := time.Unix(storetest.PolygonTime, 0)
				t1 := t0.Add(time.Duration(blocks) * 2 * time.Second)
				f := chainquery.TraceFilter{Chain: chainquery.Polygon, FromTime: &t0, ToTime: &t1,
					ToAddresses: []chainquery.Address{storetest.Token}, Page: chainquery.Page{Offset: i % 100, Limit: 50}}
				_, _, err := s.FindTraces(ctx, f)
				return err
			}},
			{"transaction_logs", func(i int) error {
				h := data[i%blocks].Transactions[0].Hash
				_, _, err := s.FindTransactionLogs(ctx, chainquery.LogFilter{Chain: chainquery.Polygon, TransactionHash: h, Page: chainquery.Page{Limit: 10}})
				return err
			}},
			{"block_receipts", func(i int) error {
				_, _, err := s.FindBlockReceipts(ctx, chainquery.ReceiptFilter{Chain: chainquery.Polygon, BlockNumber: uint64(i % blocks), Page: chainquery.Page{Limit: 10}})
				return err
			}},
			{"block_full", func(i int) error {
				_, err := s.FindBlock(ctx, chainquery.Polygon, uint64(i%blocks), true)
				return err
			}},
			{"latest_block", func(i int) error {
				_, err := s.LatestBlock(ctx, chainquery.Polygon)
				return err
			}},
		}
		for _, r := range reads {
			b.Run(fmt.Sprintf("%s/%s", st.name, r.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := r.do(i); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
