package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/internal/bench"
	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/sqlite"
)

// benchChain is an anvil node holding a few thousand blocks: one block of
// varied transactions (devchain.Traffic.Round) followed by two empty blocks,
// repeated. It is built once per process and shared by the benchmarks.
var benchChain struct {
	once sync.Once
	node *devchain.Anvil
	rpc  *jsonrpc.Client
	head uint64
	err  error
}

const benchRounds = 1000

func benchNode(b *testing.B) (*jsonrpc.Client, uint64) {
	benchChain.once.Do(func() {
		ctx := context.Background()
		if benchChain.node, benchChain.err = devchain.StartAnvil(ctx, 137); benchChain.err != nil {
			return
		}
		rpc := jsonrpc.NewClient(benchChain.node.URL)
		traffic, err := devchain.Deploy(ctx, rpc)
		if err != nil {
			benchChain.err = err
			return
		}
		for i := 0; i < benchRounds; i++ {
			if _, err := traffic.Round(ctx); err != nil {
				benchChain.err = err
				return
			}
			if err := traffic.MineEmpty(ctx, 2); err != nil {
				benchChain.err = err
				return
			}
		}
		var head string
		if err := rpc.Call(ctx, &head, "eth_blockNumber"); err != nil {
			benchChain.err = err
			return
		}
		benchChain.rpc, benchChain.head = rpc, nodeInt(head).Uint64()
	})
	if benchChain.err != nil {
		b.Fatal(benchChain.err)
	}
	return benchChain.rpc, benchChain.head
}

// Settings shared by the ingester and the raw fetch, so that both make the
// same calls at the same concurrency.
const (
	benchBatch       = 20
	benchConcurrency = 4
)

// BenchmarkIngestAnvil measures, in one run on one node: the raw fetch rate
// (bench.RawFetch: the ingester's RPC calls with the results discarded,
// the ceiling no ingester can pass), and the rate of the real ingester into SQLite. It
// reports blocks/s and rows/s of both and their ratio.
//
//	go test -run '^$' -bench BenchmarkIngestAnvil -benchtime 1x ./internal/e2e/
func BenchmarkIngestAnvil(b *testing.B) {
	rpc, head := benchNode(b)
	ctx := context.Background()
	plan, err := evm.Probe(ctx, rpc, evm.TracesAuto)
	if err != nil {
		b.Fatal(err)
	}
	var rawSecs, ingestSecs, storeSecs float64
	var rows uint64
	raw := func() float64 {
		start := time.Now()
		if _, err := bench.RawFetch(ctx, benchChain.node.URL, plan.Traces, 0, head, benchBatch, benchConcurrency); err != nil {
			b.Fatal(err)
		}
		return time.Since(start).Seconds()
	}
	for i := 0; i < b.N; i++ {
		// The node's speed drifts over a run: the ceiling is the mean of a
		// raw fetch just before and one just after the ingestion.
		before := raw()

		db, err := sqlite.Open(filepath.Join(b.TempDir(), fmt.Sprintf("bench%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		progress := &ingest.Progress{}
		store := &timedStore{DB: db}
		e := &ingest.EVMLoop{Chain: chainquery.Polygon, Store: store, Source: evm.NewFetcher(rpc, chainquery.Polygon, plan, nil),
			From: new(uint64), To: &head, BatchBlocks: benchBatch, Concurrency: benchConcurrency, Progress: progress}
		start := time.Now()
		if err := e.Run(ctx); err != nil {
			b.Fatal(err)
		}
		ingestSecs += time.Since(start).Seconds()
		rawSecs += (before + raw()) / 2
		rows = progress.Snapshot().Rows
		storeSecs += store.secs
		db.Close()
	}
	blocks := float64(head+1) * float64(b.N)
	b.ReportMetric(blocks/rawSecs, "raw-blocks/s")
	b.ReportMetric(blocks/ingestSecs, "blocks/s")
	b.ReportMetric(float64(rows)*float64(b.N)/ingestSecs, "rows/s")
	b.ReportMetric(rawSecs/ingestSecs*100, "%-of-raw")
	b.ReportMetric(storeSecs/ingestSecs*100, "%-in-store")
	b.ReportMetric(0, "ns/op")
}

// timedStore measures the time the ingester spends writing, to tell a slow
// store from a slow node.
type timedStore struct {
	*sqlite.DB
	secs float64
}

func (s *timedStore) WriteBlocks(ctx context.Context, chain chainquery.Chain, blocks []*chainquery.BlockData) error {
	start := time.Now()
	defer func() { s.secs += time.Since(start).Seconds() }()
	return s.DB.WriteBlocks(ctx, chain, blocks)
}

// TestMain stops the benchmark chain's node, if a benchmark started one.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchChain.node != nil {
		benchChain.node.Close()
	}
	os.Exit(code)
}
