package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestLatestBlockBetweenCommits reads Get Latest Block on one handle while
// another handle of the same file (as an ingester process would) commits:
// every answer must be the head as of the call, and between commits the
// answer must come without a query.
func TestLatestBlockBetweenCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chainquery.db")
	writer, server := mustOpenPath(t, path), mustOpenPath(t, path)
	storetest.Load(t, writer)
	ctx := context.Background()

	queries := func() int64 {
		n, watched := sqlite.TipQueries(server)
		if !watched {
			t.Fatal("the WAL-index header is not watched: every Get Latest Block queries")
		}
		return n
	}
	latest := func(want uint64) {
		t.Helper()
		got, err := server.LatestBlock(ctx, chainquery.Polygon)
		if err != nil || got != want {
			t.Fatalf("LatestBlock = %d, %v; want %d", got, err, want)
		}
	}
	block := func(n uint64) *chainquery.BlockData {
		d := storetest.Blocks()[chainquery.Polygon][0]
		d.Block.Number, d.Block.Hash = n, storetest.H(storetest.TagBlock, byte(n))
		for _, tx := range d.Transactions {
			tx.BlockNumber = n
			tx.Hash[9], tx.Hash[10] = byte(n), byte(n>>8)
		}
		return d
	}

	head := storetest.PolygonLaterBlock
	latest(head)
	before := queries()
	for range 50 {
		latest(head)
	}
	if q := queries(); q != before {
		t.Errorf("50 reads with no commit between them made %d queries, want 0", q-before)
	}

	// Each commit of the other handle is seen by the very next read.
	for i := range uint64(5) {
		if err := writer.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{block(head + 1 + i)}); err != nil {
			t.Fatal(err)
		}
		latest(head + 1 + i)
	}
	// A rewind (a reorg to a shorter chain) too.
	if err := writer.ReplaceBlocks(ctx, chainquery.Polygon, head+2, nil); err != nil {
		t.Fatal(err)
	}
	latest(head + 1)
	// A commit about another chain makes one query, with the same answer.
	before = queries()
	if err := writer.WriteBlocks(ctx, chainquery.Ethereum, storetest.Blocks()[chainquery.Ethereum]); err != nil {
		t.Fatal(err)
	}
	latest(head + 1)
	latest(head + 1)
	if q := queries(); q != before+1 {
		t.Errorf("after one commit: %d queries, want 1", q-before)
	}
}

// TestLatestBlockRacingCommits reads Get Latest Block from four goroutines
// while another handle commits 300 blocks one by one: no answer may be
// older than the last commit that had returned before the read began.
func TestLatestBlockRacingCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chainquery.db")
	writer, server := mustOpenPath(t, path), mustOpenPath(t, path)
	ctx := context.Background()
	block := func(n uint64) *chainquery.BlockData {
		d := storetest.Blocks()[chainquery.Polygon][1] // the empty block
		d.Block.Number, d.Block.Hash = n, storetest.H(storetest.TagBlock, byte(n))
		d.Block.Hash[9] = byte(n >> 8)
		return d
	}
	const first, blocks = 1000, 300
	if err := writer.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{block(first)}); err != nil {
		t.Fatal(err)
	}
	var committed atomic.Uint64
	committed.Store(first)
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				floor := committed.Load()
				n, err := server.LatestBlock(ctx, chainquery.Polygon)
				if err != nil || n < floor {
					errs <- fmt.Errorf("LatestBlock = %d, %v after block %d was committed", n, err, floor)
					return
				}
			}
		}()
	}
	for n := uint64(first + 1); n <= first+blocks; n++ {
		if err := writer.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{block(n)}); err != nil {
			t.Fatal(err)
		}
		committed.Store(n)
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if q, watched := sqlite.TipQueries(server); !watched || q == 0 {
		t.Fatalf("%d queries, watched %v", q, watched)
	}
}
