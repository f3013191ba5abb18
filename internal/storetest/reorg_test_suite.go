package storetest

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
)

func testReorg(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	version := func(n uint64) int {
		t.Helper()
		b, err := s.FindBlock(ctx, chainquery.Polygon, n, false)
		must(t, err)
		return b.Version
	}
	traceVersions := func(n uint64) []int {
		t.Helper()
		got, _, err := s.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &n, ToBlock: &n, Page: chainquery.Page{Limit: 50}})
		must(t, err)
		var v []int
		for _, tr := range got {
			v = append(v, tr.Version)
		}
		return v
	}

	t.Run("RewriteBumpsVersion", func(t *testing.T) {
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{polygonBlock()}))
		if v := version(PolygonBlock); v != 1 {
			t.Fatalf("version = %d, want 1", v)
		}
		for _, v := range traceVersions(PolygonBlock) {
			if v != 1 {
				t.Fatalf("trace versions = %v, want all 1", traceVersions(PolygonBlock))
			}
		}
		// Rewriting replaced the rows, it did not add to them.
		_, count, err := s.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: ptr(PolygonBlock), ToBlock: ptr(PolygonBlock), Page: chainquery.Page{Limit: 1}})
		must(t, err)
		_, logs, err := s.FindTransactionLogs(ctx, chainquery.LogFilter{Chain: chainquery.Polygon, TransactionHash: TxNested, Page: chainquery.Page{Limit: 1}})
		must(t, err)
		if count != PolygonBlockTraces || logs != 5 {
			t.Fatalf("after rewrite: %d traces, %d logs", count, logs)
		}
	})

	t.Run("ReplaceShorterChain", func(t *testing.T) {
		// The reorg replaces the empty block with one holding a new
		// transaction, and the later block disappears.
		fork := polygonLaterBlock()
		fork.Block.Number, fork.Block.Timestamp = PolygonEmptyBlock, PolygonEmptyTime
		fork.Block.Hash = H(TagBlock, 0x77)
		fork.Transactions[0].BlockNumber = PolygonEmptyBlock
		fork.Transactions[0].Hash = H(TagTx, 0x77)
		fork.Traces[0].BlockNumber = PolygonEmptyBlock
		must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, PolygonEmptyBlock, []*chainquery.BlockData{fork}))

		if n, err := s.LatestBlock(ctx, chainquery.Polygon); err != nil || n != PolygonEmptyBlock {
			t.Fatalf("latest = %d, %v; want %d", n, err, PolygonEmptyBlock)
		}
		if v := version(PolygonEmptyBlock); v != 1 {
			t.Fatalf("replaced block version = %d, want 1", v)
		}
		if h, _ := s.BlockHash(ctx, chainquery.Polygon, PolygonEmptyBlock); h != H(TagBlock, 0x77) {
			t.Fatalf("hash = %s", h.Hex())
		}
		if v := traceVersions(PolygonEmptyBlock); len(v) != 1 || v[0] != 1 {
			t.Fatalf("trace versions = %v", v)
		}
		_, _, err := s.FindTransactionLogs(ctx, chainquery.LogFilter{Chain: chainquery.Polygon, TransactionHash: TxLater, Page: chainquery.Page{Limit: 1}})
		wantCode(t, err, chainquery.ENOTFOUND)
		_, _, err = s.FindBlockReceipts(ctx, chainquery.ReceiptFilter{Chain: chainquery.Polygon, BlockNumber: PolygonLaterBlock, Page: chainquery.Page{Limit: 1}})
		wantCode(t, err, chainquery.ENOTFOUND)
		got, count, err := s.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: ptr(PolygonLaterBlock), ToBlock: ptr(PolygonLaterBlock), Page: chainquery.Page{Limit: 50}})
		must(t, err)
		if count != 0 || len(got) != 0 {
			t.Fatalf("orphaned traces remain: %d", count)
		}
		// Ethereum rows are another chain's: untouched.
		if _, err := s.FindBlock(ctx, chainquery.Ethereum, EthereumBlock, false); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("OrphanedHeightKeepsVersion", func(t *testing.T) {
		// The height removed by the rewind comes back later: its version
		// must still go up, since clients saw version 0 there before.
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{polygonLaterBlock()}))
		if v := version(PolygonLaterBlock); v != 1 {
			t.Fatalf("version = %d, want 1", v)
		}
		// And a second rewind over it goes on counting.
		must(t, s.ReplaceBlocks(ctx, chainquery.Polygon, PolygonLaterBlock, []*chainquery.BlockData{polygonLaterBlock()}))
		if v := version(PolygonLaterBlock); v != 2 {
			t.Fatalf("version = %d, want 2", v)
		}
	})

	t.Run("HeightTwiceInOneCall", func(t *testing.T) {
		// A height given twice in one call ends as if written in two calls
		// in a row: the last block's rows, with the version after the
		// first's; at a stored height and at a new one alike.
		at := func(n uint64, hash byte) *chainquery.BlockData {
			d := polygonLaterBlock()
			d.Block.Number, d.Block.Hash = n, H(TagBlock, hash)
			d.Transactions[0].BlockNumber, d.Traces[0].BlockNumber = n, n
			return d
		}
		stored, fresh := PolygonLaterBlock, PolygonLaterBlock+100
		before := version(stored)
		must(t, s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{
			at(stored, 0x81), at(fresh, 0x91), at(stored, 0x82), at(fresh, 0x92),
		}))
		for n, want := range map[uint64]struct {
			version int
			hash    byte
		}{stored: {before + 2, 0x82}, fresh: {1, 0x92}} {
			if v := version(n); v != want.version {
				t.Errorf("block %d: version %d, want %d", n, v, want.version)
			}
			if h, err := s.BlockHash(ctx, chainquery.Polygon, n); err != nil || h != H(TagBlock, want.hash) {
				t.Errorf("block %d: hash %s, %v; want the last one written", n, h.Hex(), err)
			}
			if v := traceVersions(n); len(v) != 1 || v[0] != want.version {
				t.Errorf("block %d: trace versions %v, want one of version %d", n, v, want.version)
			}
		}
	})

	t.Run("FailedWriteLeavesNothing", func(t *testing.T) {
		// A batch whose last block breaks a key leaves none of its blocks,
		// rows or trace counts behind. The SQLite store inserts with OR
		// FAIL (no statement journal: sqlite/bulk.go), which keeps the rows
		// a failing statement wrote before the bad one: only the rollback
		// of the whole batch takes them away.
		routerCount := func() int {
			t.Helper()
			_, n, err := s.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon,
				FromBlock: ptr(PolygonLaterBlock), ToBlock: ptr(PolygonLaterBlock + 300),
				ToAddresses: []chainquery.Address{Router}, Page: chainquery.Page{Limit: 1}})
			must(t, err)
			return n
		}
		head, err := s.HeadBlock(ctx, chainquery.Polygon)
		must(t, err)
		before := routerCount()
		good, bad := polygonLaterBlock(), polygonLaterBlock()
		for i, d := range []*chainquery.BlockData{good, bad} {
			n := PolygonLaterBlock + 200 + uint64(i)
			d.Block.Number, d.Block.Hash = n, H(TagBlock, 0xa0+byte(i))
			d.Transactions[0].BlockNumber, d.Traces[0].BlockNumber = n, n
		}
		dup := *bad.Transactions[0]
		bad.Transactions = append(bad.Transactions, &dup) // the same index twice
		if err := s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{good, bad}); err == nil {
			t.Fatal("a block with one transaction index twice was written")
		}
		if _, err := s.FindBlock(ctx, chainquery.Polygon, good.Block.Number, false); chainquery.ErrorCode(err) != chainquery.ENOTFOUND {
			t.Errorf("the batch's first block after the failed write: %v, want ENOTFOUND", err)
		}
		if h, err := s.HeadBlock(ctx, chainquery.Polygon); err != nil || h != head {
			t.Errorf("head %d, %v after the failed write; want %d", h, err, head)
		}
		if n := routerCount(); n != before {
			t.Errorf("traces to Router: %d after the failed write, want %d", n, before)
		}
	})

	t.Run("ErrUnknownChain", func(t *testing.T) {
		err := s.WriteBlocks(ctx, chainquery.Solana, []*chainquery.BlockData{polygonBlock()})
		wantCode(t, err, chainquery.EINVALID)
	})
}

func ptr(n uint64) *uint64 { return &n }
