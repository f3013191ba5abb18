package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// CheckLogEpochs writes logBlock's blocks at CheckTraceEpochs' sparse
// heights over five epochs of epoch_counts into want, a store of rows,
// and into got straight into history, a block a write (its epochs of logs
// written an epoch a write), and requires Filter Logs to answer alike over
// ranges across and on the edges of epochs, for addresses, a topic0 and
// an address with a topic0 (counted a bucket at a time), at offsets to the
// end; again after heights written again inside the fourth epoch (a thaw,
// which takes the epochs from there up away), and once got is frozen
// again. conn runs statements on got.
func CheckLogEpochs(t *testing.T, want, got chainquery.Store, conn sqlstore.Conn) {
	ctx := context.Background()
	got.(chainquery.NodeHeadWriter).SetNodeHead(chainquery.Polygon, epochLast)
	write := func(seed uint64, lo, hi uint64) {
		for _, n := range epochHeights() {
			if n < lo || n > hi {
				continue
			}
			for _, s := range []chainquery.Store{want, got} {
				must(t, s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{logBlock(seed, n)}))
			}
		}
	}
	bounds := func() (from, below int64) {
		t.Helper()
		if _, err := queryOne(ctx, conn, `SELECT log_epochs_from, log_epochs_below FROM history WHERE chain = 137`, &from, &below); err != nil {
			t.Fatal(err)
		}
		return from, below
	}
	same := sameAs(t, want, got)
	check := func(when string) {
		t.Helper()
		filters := []chainquery.LogRangeFilter{
			{Addresses: []chainquery.Address{countHot}},
			{Addresses: []chainquery.Address{countAddrs[3], countAddrs[1]}},
			{Topics: [4][]chainquery.Hash{{logEvents[1]}}},
			{Addresses: []chainquery.Address{countHot}, Topics: [4][]chainquery.Hash{{logEvents[0]}}},
		}
		for _, r := range [][2]uint64{{0, 100_000}, {epochFirst, epochLast}, {20_000, 59_999}, {20_001, 59_998},
			{19_999, 60_000}, {25_050, 45_049}, {30_000, 39_999}, {29_999, 40_000}, {30_005, 40_010}, {15_050, 30_000}} {
			lo, hi := r[0], r[1]
			for _, f := range filters {
				f.Chain, f.FromBlock, f.ToBlock, f.Page = chainquery.Polygon, &lo, &hi, chainquery.Page{Limit: 1}
				_, count, err := want.FindLogs(ctx, f)
				must(t, err)
				for _, off := range []int{0, 1, 63, count / 3, count / 2, count - 7, count} {
					f.Page = chainquery.Page{Offset: max(0, off), Limit: 50}
					same(fmt.Sprintf("%s: logs of blocks %d to %d, %v, %+v", when, lo, hi, f, f.Page), func(s chainquery.Store) (any, error) {
						l, c, err := s.FindLogs(ctx, f)
						return []any{l, c}, err
					})
				}
			}
		}
	}
	write(1, 0, epochLast)
	if from, below := bounds(); from != 10_000 || below != 60_000 {
		t.Fatalf("logs' epochs from %d to %d, want 10,000 to 60,000", from, below)
	}
	var rows int
	if _, err := queryOne(ctx, conn, `SELECT count(*) FROM epoch_counts WHERE chain = 137 AND space IN (10, 11) AND epoch = 2`, &rows); err != nil || rows == 0 {
		t.Fatalf("epoch 2 has %d rows of logs (%v)", rows, err)
	}
	check("written")
	write(2, 35_003, 35_500)
	if from, below := bounds(); from != 10_000 || below != 30_000 {
		t.Fatalf("after a write at 35,003: logs' epochs from %d to %d, want 10,000 to 30,000", from, below)
	}
	check("written again")
	Freeze(t, got)
	if _, below := bounds(); below != 60_000 {
		t.Fatalf("after the freeze: logs' epochs below %d, want 60,000", below)
	}
	check("frozen")

	// A database written before migration 0025 has no epochs: CountEpochs
	// writes them, from the lowest block's epoch up.
	for _, q := range []string{`DELETE FROM epoch_counts WHERE space IN (10, 11)`, `UPDATE history SET log_epochs_from = 0, log_epochs_below = 0`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	check("without epochs")
	counter := got.(interface {
		CountEpochs(ctx context.Context, chain chainquery.Chain, epochs int) (uint64, error)
	})
	for i := 0; ; i++ {
		left, err := counter.CountEpochs(ctx, chainquery.Polygon, 1)
		must(t, err)
		if left == 0 {
			break
		} else if i > 6 {
			t.Fatalf("CountEpochs: %d heights left after %d calls", left, i+1)
		}
	}
	if from, below := bounds(); from != 10_000 || below != 60_000 {
		t.Fatalf("after CountEpochs: logs' epochs from %d to %d, want 10,000 to 60,000", from, below)
	}
	check("counted again")
}
