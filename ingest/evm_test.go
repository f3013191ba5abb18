package ingest_test

import (
	"context"
	"fmt"
	"math/big"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/sqlite"
)

// simChain is an in-process chain for testing the loop's logic (resume,
// reorgs, a lagging node) where a real node cannot be steered precisely;
// the end-to-end tests against anvil cover the real RPC path.
type simChain struct {
	mu     sync.Mutex
	fork   map[uint64]byte // fork id per height; the hash depends on it
	head   uint64
	calls  int
	failAt uint64 // Blocks fails for ranges holding this block (0: never)
}

func newSimChain(head uint64) *simChain {
	return &simChain{fork: map[uint64]byte{}, head: head}
}

func (c *simChain) hash(n uint64) chainquery.Hash {
	var h chainquery.Hash
	h[0], h[1] = c.fork[n], 0xaa
	h[24] = byte(n >> 56)
	for i := 0; i < 8; i++ {
		h[24+i] = byte(n >> (8 * (7 - i)))
	}
	return h
}

// reorg replaces the blocks from..head with a new fork.
func (c *simChain) reorg(from uint64, fork byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := from; n <= c.head; n++ {
		c.fork[n] = fork
	}
}

func (c *simChain) setHead(n uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.head = n
}

func (c *simChain) Head(ctx context.Context) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head, nil
}

func (c *simChain) BlockHash(ctx context.Context, n uint64) (chainquery.Hash, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hash(n), nil
}

func (c *simChain) Blocks(ctx context.Context, from, to uint64) ([]*chainquery.BlockData, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.failAt != 0 && from <= c.failAt && c.failAt <= to {
		return nil, fmt.Errorf("node says no")
	}
	var out []*chainquery.BlockData
	for n := from; n <= to; n++ {
		if n > c.head {
			return nil, fmt.Errorf("block %d not available", n)
		}
		var parent chainquery.Hash
		if n > 0 {
			parent = c.hash(n - 1)
		}
		txHash := c.hash(n)
		txHash[2] = 0x77
		out = append(out, &chainquery.BlockData{
			Block:        &chainquery.Block{Number: n, Hash: c.hash(n), ParentHash: parent, Timestamp: int64(1700000000 + n), TransactionCount: 1},
			Transactions: []*chainquery.Transaction{{BlockNumber: n, Hash: txHash, Value: big.NewInt(1), Status: true}},
			Traces:       []*chainquery.Trace{{BlockNumber: n, Type: chainquery.TraceCall, CallType: chainquery.CallTypeCall, Value: big.NewInt(1)}},
		})
	}
	return out, nil
}

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func u64(n uint64) *uint64 { return &n }

// checkStored fails unless the store holds exactly the chain's blocks
// from..to, each with the node's hash.
func checkStored(t *testing.T, db *sqlite.DB, c *simChain, from, to uint64) {
	t.Helper()
	ctx := context.Background()
	latest, err := db.LatestBlock(ctx, chainquery.Polygon)
	if err != nil || latest != to {
		t.Fatalf("latest = %d, %v; want %d", latest, err, to)
	}
	for n := from; n <= to; n++ {
		h, err := db.BlockHash(ctx, chainquery.Polygon, n)
		if err != nil {
			t.Fatalf("block %d: %v", n, err)
		}
		if want, _ := c.BlockHash(ctx, n); h != want {
			t.Fatalf("block %d: stored %s, node %s", n, h, want)
		}
	}
	_, count, err := db.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &from, ToBlock: &to, Page: chainquery.Page{Limit: 1}})
	if err != nil || count != int(to-from+1) {
		t.Fatalf("%d traces, %v; want one per block", count, err)
	}
}

func loop(db *sqlite.DB, c *simChain) *ingest.EVMLoop {
	return &ingest.EVMLoop{Chain: chainquery.Polygon, Store: db, Source: c, BatchBlocks: 7, Concurrency: 3, PollInterval: time.Millisecond}
}

func TestEVMBackfillAndResume(t *testing.T) {
	db, c := openStore(t), newSimChain(100)
	e := loop(db, c)
	e.From, e.To = u64(5), u64(60)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkStored(t, db, c, 5, 60)

	// A second run resumes after the stored head, whatever --from says.
	e = loop(db, c)
	e.From, e.To = u64(5), u64(100)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkStored(t, db, c, 5, 100)
	if _, err := db.BlockHash(context.Background(), chainquery.Polygon, 4); chainquery.ErrorCode(err) != chainquery.ENOTFOUND {
		t.Fatalf("block 4 stored: %v", err)
	}

	t.Run("ErrGap", func(t *testing.T) {
		e := loop(db, c)
		e.From, e.To = u64(150), u64(160)
		if err := e.Run(context.Background()); err == nil {
			t.Fatal("a --from past the stored head was accepted")
		}
	})
}

func TestEVMStopsOnFailureWithoutGap(t *testing.T) {
	db, c := openStore(t), newSimChain(100)
	c.failAt = 40
	e := loop(db, c)
	e.From, e.To = u64(0), u64(100)
	err := e.Run(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	latest, _ := db.LatestBlock(context.Background(), chainquery.Polygon)
	if latest >= 40 {
		t.Fatalf("stored up to %d past the failing block 40", latest)
	}
	checkStored(t, db, c, 0, latest)

	c.failAt = 0 // the node recovers; a rerun fills the rest
	e = loop(db, c)
	e.To = u64(100)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkStored(t, db, c, 0, 100)
}

func TestEVMReorg(t *testing.T) {
	db, c := openStore(t), newSimChain(50)
	e := loop(db, c)
	e.To = u64(50)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.reorg(46, 1)
	c.setHead(60)
	e = loop(db, c)
	e.To = u64(60)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkStored(t, db, c, 0, 60)
	ctx := context.Background()
	for n, want := range map[uint64]int{45: 0, 46: 1, 50: 1, 51: 0} {
		b, err := db.FindBlock(ctx, chainquery.Polygon, n, false)
		if err != nil || b.Version != want {
			t.Fatalf("block %d version %d, %v; want %d", n, b.Version, err, want)
		}
	}
}

func TestEVMFollowReorgAndLaggingNode(t *testing.T) {
	db, c := openStore(t), newSimChain(20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := loop(db, c)
	e.Follow, e.Confirmations, e.From = true, 2, u64(0)
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()

	waitFor := func(n uint64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if got, err := db.LatestBlock(ctx, chainquery.Polygon); err == nil && got == n {
				if h, _ := db.BlockHash(ctx, chainquery.Polygon, n); h == c.hash(n) {
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		got, _ := db.LatestBlock(ctx, chainquery.Polygon)
		t.Fatalf("stored head %d, want %d", got, n)
	}
	waitFor(18) // head 20 - 2 confirmations

	// A node that falls behind what is stored is waited for, not rewound.
	c.setHead(10)
	time.Sleep(50 * time.Millisecond)
	if b, _ := db.FindBlock(ctx, chainquery.Polygon, 18, false); b == nil || b.Version != 0 {
		t.Fatalf("a lagging node was taken for a reorg: %+v", b)
	}

	// Then the chain grows with a reorg 3 blocks deep under the stored head.
	c.setHead(30)
	c.reorg(16, 2)
	waitFor(28)
	checkStored(t, db, c, 0, 28)
	if b, _ := db.FindBlock(ctx, chainquery.Polygon, 16, false); b.Version != 1 {
		t.Fatalf("block 16 version %d, want 1", b.Version)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestEVMDeepReorgStops(t *testing.T) {
	db, c := openStore(t), newSimChain(40)
	e := loop(db, c)
	e.To = u64(40)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.reorg(10, 3)
	c.setHead(45)
	e = loop(db, c)
	e.To, e.MaxReorgDepth = u64(45), 5
	if err := e.Run(context.Background()); err == nil {
		t.Fatal("a reorg deeper than the limit was followed")
	}
	checkStored(t, db, &simChain{fork: map[uint64]byte{}, head: 40}, 0, 40) // untouched
}

// flakyStore fails every call with EUNAVAILABLE while down is set, as a
// store whose database went away does.
type flakyStore struct {
	*sqlite.DB
	mu    sync.Mutex
	down  int // calls left to fail
	fails int
	// from, when set, lets AppendBlocks through until its blocks reach
	// that height: the failures come after a commit.
	from uint64
}

func (s *flakyStore) fail() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down > 0 {
		s.down--
		s.fails++
		return chainquery.Errorf(chainquery.EUNAVAILABLE, "the database is unavailable; try again shortly")
	}
	return nil
}

func (s *flakyStore) WriteBlocks(ctx context.Context, chain chainquery.Chain, blocks []*chainquery.BlockData) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.DB.WriteBlocks(ctx, chain, blocks)
}

func (s *flakyStore) AppendBlocks(ctx context.Context, chain chainquery.Chain, blocks []*chainquery.BlockData) error {
	if blocks[len(blocks)-1].Block.Number < s.from {
		return s.DB.AppendBlocks(ctx, chain, blocks)
	}
	if err := s.fail(); err != nil {
		s.DB.CloseAppends() // what was appended is lost, as when the database goes away
		return err
	}
	return s.DB.AppendBlocks(ctx, chain, blocks)
}

func (s *flakyStore) BlockHash(ctx context.Context, chain chainquery.Chain, n uint64) (chainquery.Hash, error) {
	if err := s.fail(); err != nil {
		return chainquery.Hash{}, err
	}
	return s.DB.BlockHash(ctx, chain, n)
}

// TestEVMResumesLostAppends: blocks far below the node's head are
// appended to a transaction committed at bucket ends; a store that goes
// away in the middle of a bucket loses what was appended since, and the
// loop fetches it again from the stored head, with no gap and no
// duplicate.
func TestEVMResumesLostAppends(t *testing.T) {
	db, c := openStore(t), newSimChain(700)
	store := &flakyStore{DB: db, down: 2, from: 150} // blocks 0-99 committed, 100-149 or so appended
	e := loop(db, c)
	e.Store, e.To, e.StoreRetry = store, u64(400), time.Millisecond
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if store.fails != 2 {
		t.Fatalf("%d failed calls, want 2", store.fails)
	}
	checkStored(t, db, c, 0, 400)
}

func TestEVMWaitsForUnavailableStore(t *testing.T) {
	db, c := openStore(t), newSimChain(60)
	store := &flakyStore{DB: db, down: 7}
	e := loop(db, c)
	e.Store, e.To, e.StoreRetry = store, u64(60), time.Millisecond
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if store.fails != 7 {
		t.Fatalf("%d failed calls, want 7", store.fails)
	}
	checkStored(t, db, c, 0, 60) // no gap, no duplicate
}
