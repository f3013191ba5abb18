package storetest

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
)

// testRewrites checks the log of rewrites (BlockService.Rewrites) that the
// API's answer cache reads: appends of new heights leave it alone; a write
// at a stored height, a rewind, and a write at a rewound height each add
// one rewrite, with the lowest height it touched; chains are apart.
func testRewrites(t *testing.T, open func(testing.TB) chainquery.Store) {
	ctx := context.Background()
	s := open(t)
	rewrites := func(since uint64) (uint64, uint64) {
		t.Helper()
		mark, lowest, err := s.Rewrites(ctx, chainquery.Polygon, since)
		must(t, err)
		return mark, lowest
	}
	if mark, lowest := rewrites(0); mark != 0 || lowest != chainquery.NoRewrite {
		t.Fatalf("empty store: mark %d, lowest %d; want 0 and NoRewrite", mark, lowest)
	}
	blocks := Blocks()[chainquery.Polygon]
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, blocks[:1]))
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, blocks[1:]))
	must(t, s.WriteBlocks(ctx, chainquery.Ethereum, Blocks()[chainquery.Ethereum]))
	if mark, lowest := rewrites(0); mark != 0 || lowest != chainquery.NoRewrite {
		t.Fatalf("after appends: mark %d, lowest %d; want 0 and NoRewrite", mark, lowest)
	}

	// A block written again where one is stored.
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, blocks[1:2]))
	m1, lowest := rewrites(0)
	if m1 == 0 || lowest != blocks[1].Block.Number {
		t.Fatalf("after a write at %d: mark %d, lowest %d", blocks[1].Block.Number, m1, lowest)
	}
	if mark, lowest := rewrites(m1); mark != m1 || lowest != chainquery.NoRewrite {
		t.Fatalf("since the mark itself: mark %d, lowest %d; want %d and NoRewrite", mark, lowest, m1)
	}

	// A rewind from the last block, writing nothing; then that height again.
	last := blocks[len(blocks)-1].Block.Number
	must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, last, nil))
	m2, lowest := rewrites(m1)
	if m2 <= m1 || lowest != last {
		t.Fatalf("after a rewind from %d: mark %d (was %d), lowest %d", last, m2, m1, lowest)
	}
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, blocks[len(blocks)-1:]))
	m3, lowest := rewrites(m2)
	if m3 <= m2 || lowest != last {
		t.Fatalf("after writing the rewound height %d again: mark %d (was %d), lowest %d", last, m3, m2, lowest)
	}
	// Since an older mark: the lowest of every rewrite after it.
	if mark, lowest := rewrites(0); mark != m3 || lowest != blocks[1].Block.Number {
		t.Fatalf("since 0: mark %d, lowest %d; want %d and %d", mark, lowest, m3, blocks[1].Block.Number)
	}
	// A rewind of the first block: the lowest so far.
	first := blocks[0].Block.Number
	must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, first, blocks))
	if mark, lowest := rewrites(m3); mark <= m3 || lowest != first {
		t.Fatalf("after a rewind from %d: mark %d (was %d), lowest %d", first, mark, m3, lowest)
	}
	// Ethereum's log is its own.
	if mark, lowest, err := s.Rewrites(ctx, chainquery.Ethereum, 0); err != nil || mark != 0 || lowest != chainquery.NoRewrite {
		t.Fatalf("ethereum: mark %d, lowest %d, %v; want 0, NoRewrite", mark, lowest, err)
	}
}
