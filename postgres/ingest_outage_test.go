package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/postgres"
)

// slowSource paces a node so that the database can be stopped while the
// ingester is still at work.
type slowSource struct {
	ingest.EVMSource
}

func (s slowSource) Blocks(ctx context.Context, from, to uint64) ([]*chainquery.BlockData, error) {
	time.Sleep(30 * time.Millisecond)
	return s.EVMSource.Blocks(ctx, from, to)
}

// TestIngestSurvivesServerRestart stops the PostgreSQL server under a running
// ingester and starts it again: the ingester waits, then finishes, and the
// store holds every block of the node once, with no gap and no duplicate.
func TestIngestSurvivesServerRestart(t *testing.T) {
	admin := postgres.RequireEnv(t, postgres.EnvStoppableDSN)
	pgctl := strings.Fields(postgres.RequireEnv(t, postgres.EnvPGCtl))
	ctx := context.Background()
	node, err := devchain.StartAnvil(ctx, 137)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	rpc := jsonrpc.NewClient(node.URL)
	traffic, err := devchain.Deploy(ctx, rpc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := traffic.Round(ctx); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := evm.Probe(ctx, rpc, evm.TracesAuto)
	if err != nil {
		t.Fatal(err)
	}
	fetcher := evm.NewFetcher(rpc, chainquery.Polygon, plan, nil)
	head, err := fetcher.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db := postgres.MustOpen(t, postgres.NewTestDatabase(t, admin), postgres.Options{MaxConns: 4})
	var logs syncBuffer
	e := &ingest.EVMLoop{Chain: chainquery.Polygon, Store: db, Source: slowSource{fetcher}, From: new(uint64), To: &head,
		Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
		BatchBlocks: 1, Concurrency: 1, StoreRetry: 50 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()

	for n, err := db.HeadBlock(ctx, chainquery.Polygon); err != nil || n < 3; n, err = db.HeadBlock(ctx, chainquery.Polygon) {
		time.Sleep(5 * time.Millisecond)
	}
	pg := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(pgctl[0], append(pgctl[1:], args...)...).CombinedOutput(); err != nil {
			t.Fatalf("pg_ctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	pg("stop", "-m", "fast")
	time.Sleep(500 * time.Millisecond) // the ingester meets the outage
	pg("start")

	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the ingester did not finish after the server came back")
	}
	if !strings.Contains(logs.String(), "store unavailable, retrying") {
		t.Fatalf("the ingester never met the outage; its log:\n%s", logs.String())
	}
	if n, err := db.HeadBlock(ctx, chainquery.Polygon); err != nil || n != head {
		t.Fatalf("stored head %d, %v; node head %d", n, err, head)
	}
	want, err := fetcher.Blocks(ctx, 0, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range want {
		n := d.Block.Number
		h, err := db.BlockHash(ctx, chainquery.Polygon, n)
		if err != nil || h != d.Block.Hash {
			t.Fatalf("block %d: stored %s, %v; node %s", n, h, err, d.Block.Hash)
		}
		_, count, err := db.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &n, ToBlock: &n, Page: chainquery.Page{Limit: 1}})
		if err != nil || count != len(d.Traces) {
			t.Fatalf("block %d: %d traces stored, %v; node %d", n, count, err, len(d.Traces))
		}
		b, err := db.FindBlock(ctx, chainquery.Polygon, n, false)
		if err != nil || b.Version != 0 {
			t.Fatalf("block %d: version %d, %v: a block was written twice", n, b.Version, err)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
