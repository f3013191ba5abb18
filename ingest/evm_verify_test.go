package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
)

// TestEVMResumeOtherChain points a database filled from chain A at a node of
// chain B with the same chain id and the same head but other hashes: the
// ingester must refuse, naming both hashes and the way out, and leave the
// store as it was. Before the check it resumed "after the stored head",
// fetched nothing and served A's blocks as B's.
func TestEVMResumeOtherChain(t *testing.T) {
	db, a := openStore(t), newSimChain(30)
	e := loop(db, a)
	e.To = u64(30)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := newSimChain(30)
	b.reorg(0, 9) // another genesis, another chain
	for _, to := range []*uint64{u64(30), nil} {
		e = loop(db, b)
		e.To, e.MaxReorgDepth = to, 8
		err := e.Run(context.Background())
		var mismatch *ingest.ChainMismatchError
		if !errors.As(err, &mismatch) {
			t.Fatalf("err = %v, want a ChainMismatchError", err)
		}
		for _, want := range []string{"block 30", a.hash(30).Hex(), b.hash(30).Hex(), "fresh database", "--rewind-to"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not name %q: %v", want, err)
			}
		}
		checkStored(t, db, a, 0, 30) // untouched
	}
}

// TestEVMResumeAfterReorg: a reorg inside the depth that happened while the
// ingester was stopped is rewound at start, even when nothing new is to be
// fetched (same head).
func TestEVMResumeAfterReorg(t *testing.T) {
	db, c := openStore(t), newSimChain(30)
	e := loop(db, c)
	e.To = u64(30)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.reorg(27, 4)
	e = loop(db, c)
	e.To = u64(30)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkStored(t, db, c, 0, 30)
	if b, _ := db.FindBlock(context.Background(), chainquery.Polygon, 27, false); b.Version != 1 {
		t.Fatalf("block 27 version %d, want 1", b.Version)
	}

	t.Run("NodeBehind", func(t *testing.T) {
		// The node restarted from an old snapshot and has not reached the
		// stored head: compared at the node's head, it is the same chain.
		c.setHead(20)
		e := loop(db, c)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		e.Follow = true
		if err := e.Run(ctx); err != nil {
			t.Fatal(err)
		}
		checkStored(t, db, c, 0, 30)
	})
}

// TestEVMRewindTo: a fork deeper than the reorg depth stops the ingester;
// --rewind-to below the fork point removes the stored blocks above it, and
// the ingester refills them from the node.
func TestEVMRewindTo(t *testing.T) {
	db, c := openStore(t), newSimChain(40)
	e := loop(db, c)
	e.To = u64(40)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.reorg(10, 5)
	e = loop(db, c)
	e.To, e.MaxReorgDepth = u64(40), 5
	var mismatch *ingest.ChainMismatchError
	if err := e.Run(context.Background()); !errors.As(err, &mismatch) {
		t.Fatalf("err = %v, want a ChainMismatchError", err)
	}
	e = loop(db, c)
	e.To, e.MaxReorgDepth, e.RewindTo = u64(40), 5, u64(9)
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkStored(t, db, c, 0, 40)

	t.Run("AboveHead", func(t *testing.T) {
		// --rewind-to at or above the stored head removes nothing.
		e := loop(db, c)
		e.To, e.RewindTo = u64(40), u64(100)
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		checkStored(t, db, c, 0, 40)
	})
}

// syncBuffer is a bytes.Buffer safe for a logger's and a test's goroutines.
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

// TestEVMSaysWhatItWaitsFor: --to 10 with 128 confirmations against a node
// at 20 waits; the log and the progress line say for what. It used to log
// only "block=0 head=20 lag=20" every 10 s.
func TestEVMSaysWhatItWaitsFor(t *testing.T) {
	db, c := openStore(t), newSimChain(20)
	var logs syncBuffer
	e := loop(db, c)
	e.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.To, e.Confirmations = u64(10), 128
	e.Progress = &ingest.Progress{Chain: "polygon"}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := e.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := "waiting for block 0 to have 128 confirmations (node head 20)"
	if !strings.Contains(logs.String(), want) {
		t.Errorf("log does not say %q:\n%s", want, logs.String())
	}
	if got := e.Progress.Snapshot().String(); !strings.Contains(got, want) {
		t.Errorf("progress does not say %q: %s", want, got)
	}
	if n := strings.Count(logs.String(), want); n != 1 {
		t.Errorf("said %d times, want once", n)
	}
}

// panicSource panics inside Blocks, which the loop calls on a goroutine of
// its own: a panic there must come back as an error of Run.
type panicSource struct{ *simChain }

func (p panicSource) Blocks(ctx context.Context, from, to uint64) ([]*chainquery.BlockData, error) {
	var empty []int
	_ = empty[from+1] // index out of range, as a decoder bug would
	return nil, nil
}

func TestEVMPanicIsError(t *testing.T) {
	db, c := openStore(t), newSimChain(20)
	e := loop(db, c)
	e.Source = panicSource{c}
	e.To = u64(20)
	err := e.Run(context.Background())
	var pe *ingest.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a PanicError", err)
	}
	for _, want := range []string{"ingest polygon", "index out of range", "panicSource.Blocks", "evm_verify_test.go"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if !strings.Contains(pe.Stack, "panicSource.Blocks") {
		t.Errorf("stack lacks the panicking function:\n%s", pe.Stack)
	}
}
