package storetest

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// The heights of CheckTraceEpochs' chain: one block in 97 over five epochs
// of epoch_counts (sqlstore.TraceEpochBlocks), from inside the second, with
// the heights around the edges of the third and fourth all there.
const epochFirst, epochLast = 15_050, 64_999

func epochHeights() []uint64 {
	var out []uint64
	for n := uint64(epochFirst); n <= epochLast; n++ {
		edge := n >= 29_990 && n <= 30_010 || n >= 39_980 && n <= 40_020
		if n%97 == 0 || edge || n == epochFirst || n == epochLast {
			out = append(out, n)
		}
	}
	return out
}

// CheckTraceEpochs holds Filter Traces' counts and offsets over history
// that spans epochs of epoch_counts to a count of the traces written: a
// sparse chain of blocks over five epochs, written as an ingester does
// (straight into history, and its epochs, one a write), over ranges
// that start and end inside epochs and on their edges, the whole chain,
// every kind of address filter, offsets from 0 to past the count; again
// after heights written again in the middle of an epoch (a thaw, which
// takes the epochs from there up away) and after the chain is frozen
// anew. conn runs statements on s.
func CheckTraceEpochs(t *testing.T, s chainquery.Store, conn sqlstore.Conn) {
	ctx := context.Background()
	chain := map[uint64]*chainquery.BlockData{}
	// The blocks below the head less DefaultRowBlocks are final: written
	// a block at a time (a write's run of consecutive heights does), they
	// go straight into history.
	s.(chainquery.NodeHeadWriter).SetNodeHead(chainquery.Polygon, epochLast)
	write := func(seed uint64, heights []uint64) {
		for _, n := range heights {
			d := countBlock(seed, n)
			chain[n] = d
			must(t, s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{d}))
		}
	}
	epochsBelow := func() (below, epochs int64) {
		t.Helper()
		if _, err := queryOne(ctx, conn, `SELECT below, trace_epochs_below FROM history WHERE chain = 137`, &below, &epochs); err != nil {
			t.Fatal(err)
		}
		return below, epochs
	}
	write(1, epochHeights())
	below, epochs := epochsBelow()
	// An epoch a write, every whole epoch below the history: the first,
	// partial, from the lowest block, up to the one DefaultRowBlocks
	// below the head ends in.
	if want := int64(epochLast+1-sqlstore.DefaultRowBlocks) / sqlstore.TraceEpochBlocks * sqlstore.TraceEpochBlocks; epochs != want || below < epochs {
		t.Fatalf("trace_epochs_below %d (history below %d), want %d", epochs, below, want)
	}
	var rows int
	if _, err := queryOne(ctx, conn, `SELECT count(*) FROM epoch_counts WHERE chain = 137 AND epoch = 2`, &rows); err != nil || rows == 0 {
		t.Fatalf("epoch 2 has %d rows (%v)", rows, err)
	}
	checkEpochCounts(t, s, chain)

	// Heights written again inside the fourth epoch: history from there up
	// is rows again, and its epochs gone.
	again := []uint64{}
	for _, n := range epochHeights() {
		if n >= 35_003 && n <= 35_500 {
			again = append(again, n)
		}
	}
	write(2, again)
	if _, epochs := epochsBelow(); epochs != 30_000 {
		t.Fatalf("after a write at 35,003: trace_epochs_below %d, want 30,000", epochs)
	}
	if _, err := queryOne(ctx, conn, `SELECT count(*) FROM epoch_counts WHERE chain = 137 AND epoch >= 3`, &rows); err != nil || rows != 0 {
		t.Fatalf("after a write at 35,003: %d rows of epochs 3 and up (%v)", rows, err)
	}
	checkEpochCounts(t, s, chain)

	// Frozen again, every epoch below the head is counted anew.
	Freeze(t, s)
	if _, epochs := epochsBelow(); epochs != 60_000 {
		t.Fatalf("after the freeze: trace_epochs_below %d, want 60,000", epochs)
	}
	checkEpochCounts(t, s, chain)

	// A database written before migration 0025 has no epochs:
	// CountEpochs writes them, an epoch a call from the lowest block's
	// (the epochs below it hold nothing).
	for _, q := range []string{`DELETE FROM epoch_counts`, `UPDATE history SET trace_epochs_below = 0`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	checkEpochCounts(t, s, chain)
	counter, ok := s.(interface {
		CountEpochs(ctx context.Context, chain chainquery.Chain, epochs int) (uint64, error)
	})
	if !ok {
		t.Fatalf("%T counts no epochs", s)
	}
	for i, want := range []uint64{50_000, 40_000, 30_000, 20_000, 10_000, 0} {
		epochs := min(i, 1) // the first call says where it stands
		left, err := counter.CountEpochs(ctx, chainquery.Polygon, epochs)
		if err != nil || left != want {
			t.Fatalf("CountEpochs call %d: %d left (%v), want %d", i, left, err, want)
		}
	}
	if _, epochs := epochsBelow(); epochs != 60_000 {
		t.Fatalf("after CountEpochs: trace_epochs_below %d, want 60,000", epochs)
	}
	checkEpochCounts(t, s, chain)
}

// checkEpochCounts compares counts and pages of Filter Traces with what
// the blocks of chain hold, over ranges across and on the edges of
// epochs.
func checkEpochCounts(t *testing.T, s chainquery.Store, chain map[uint64]*chainquery.BlockData) {
	t.Helper()
	ranges := [][2]uint64{{0, 100_000}, {epochFirst, epochLast}, {20_000, 59_999}, {20_001, 59_998}, {19_999, 60_000},
		{25_050, 45_049}, {30_000, 39_999}, {29_999, 40_000}, {30_005, 40_010}, {39_950, 50_000}, {15_050, 30_000}}
	hot, other := []chainquery.Address{countHot}, []chainquery.Address{Addr(0x42)}
	filters := []struct {
		name     string
		from, to []chainquery.Address
	}{
		{"all", nil, nil},
		{"to hot", nil, hot},
		{"to hot or other", nil, []chainquery.Address{countHot, Addr(0x42)}},
		{"from other", other, nil},
		{"from two", []chainquery.Address{Addr(0x41), Addr(0x43)}, nil},
		{"from other to hot", other, hot},
	}
	for _, rg := range ranges {
		for _, fl := range filters {
			checkTraceOffsets(t, s, chain, rg[0], rg[1], fl.name, fl.from, fl.to)
		}
	}
}
