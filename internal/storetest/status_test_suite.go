package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// testIndexStatus checks IndexStatus: the range, last time, block time and
// first traced block of each stored chain, and the Solana cursor, on the
// fixture, on an empty store, with traces starting buckets above the first
// block, and after a rewind removed every traced block.
func testIndexStatus(t *testing.T, open func(testing.TB) chainquery.Store) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		Load(t, s)
		st, err := s.IndexStatus(ctx)
		must(t, err)
		from := PolygonBlock
		want := &chainquery.IndexStatus{
			Chains: []*chainquery.ChainStatus{
				{Chain: chainquery.Ethereum, FirstBlock: EthereumBlock, LastBlock: EthereumBlock, LastTime: EthereumTime},
				{Chain: chainquery.Polygon, FirstBlock: PolygonBlock, LastBlock: PolygonLaterBlock, LastTime: PolygonLaterTime,
					BlockTime: 2, TracesFrom: &from, TracesFromTime: PolygonTime},
			},
			Solana: &SolanaCursor,
		}
		if !reflect.DeepEqual(st, want) {
			t.Fatalf("IndexStatus =\n%s\nwant\n%s", statusText(st), statusText(want))
		}
	})
	t.Run("Empty", func(t *testing.T) {
		st, err := open(t).IndexStatus(ctx)
		must(t, err)
		if len(st.Chains) != 0 || st.Solana != nil {
			t.Fatalf("IndexStatus of an empty store = %s, want no chain and no cursor", statusText(st))
		}
	})
	t.Run("TracesFromLaterBucket", func(t *testing.T) {
		// Blocks without traces below, and the first traced block in a
		// later bucket of trace_counts, after a block without traces in
		// that bucket.
		s := open(t)
		later := polygonLaterBlock()
		const n = PolygonBlock + 2*sqlstore.TraceCountBlocks + 37
		later.Block.Number = n
		for _, tx := range later.Transactions {
			tx.BlockNumber = n
		}
		for _, tr := range later.Traces {
			tr.BlockNumber = n
		}
		empty, emptyInBucket := polygonEmptyBlock(), polygonEmptyBlock()
		emptyInBucket.Block.Number = n - 10
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{empty}))
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{emptyInBucket}))
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{later}))
		st, err := s.IndexStatus(ctx)
		must(t, err)
		if len(st.Chains) != 1 {
			t.Fatalf("IndexStatus = %s, want polygon alone", statusText(st))
		}
		c := st.Chains[0]
		if c.FirstBlock != PolygonEmptyBlock || c.LastBlock != n || c.TracesFrom == nil || *c.TracesFrom != n ||
			c.TracesFromTime != PolygonLaterTime || c.BlockTime != float64(PolygonLaterTime-PolygonEmptyTime)/float64(n-PolygonEmptyBlock) {
			// The block time is over the last 100 blocks: from the block
			// at or below n-100, the first one.
			t.Fatalf("polygon = %+v (traces from %v), want %d..%d, traces from %d", *c, c.TracesFrom, PolygonEmptyBlock, n, n)
		}
	})
	t.Run("TracesRewound", func(t *testing.T) {
		// A rewind leaves trace_counts' rows of the replaced heights at
		// zero: they must not count as traces.
		s := open(t)
		Load(t, s)
		must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, PolygonBlock, []*chainquery.BlockData{{Block: polygonEmptyBlock().Block}}))
		st, err := s.IndexStatus(ctx)
		must(t, err)
		c := st.Chains[1]
		if c.Chain != chainquery.Polygon || c.LastBlock != PolygonEmptyBlock || c.TracesFrom != nil {
			t.Fatalf("polygon after the rewind = %+v (traces from %v), want last block %d and no traces", *c, c.TracesFrom, PolygonEmptyBlock)
		}
	})
}

// statusText shows an IndexStatus with its pointers followed.
func statusText(st *chainquery.IndexStatus) string {
	if st == nil {
		return "<nil>"
	}
	out := ""
	for _, c := range st.Chains {
		out += fmt.Sprintf("  %+v", *c)
		if c.TracesFrom != nil {
			out += fmt.Sprintf(" traces from %d", *c.TracesFrom)
		}
		out += "\n"
	}
	if st.Solana != nil {
		out += fmt.Sprintf("  solana %+v\n", *st.Solana)
	}
	return out
}
