package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/chainquery/chainquery"
)

// same fails unless got and want print the same with %+v: *big.Int prints
// its value and nil and empty byte slices print alike, which is the
// equality the API observes.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func testBlocks(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		d := polygonBlock()
		want := *d.Block
		want.TraceCount = PolygonBlockTraces
		got, err := s.FindBlock(ctx, chainquery.Polygon, PolygonBlock, false)
		must(t, err)
		if got.Transactions != nil {
			t.Fatalf("transactions without full = %v, want nil", got.Transactions)
		}
		same(t, "block", *got, want)
	})
	t.Run("Full", func(t *testing.T) {
		d := polygonBlock()
		got, err := s.FindBlock(ctx, chainquery.Polygon, PolygonBlock, true)
		must(t, err)
		if len(got.Transactions) != len(d.Transactions) {
			t.Fatalf("%d transactions, want %d", len(got.Transactions), len(d.Transactions))
		}
		for i, tx := range got.Transactions {
			want := *d.Transactions[i]
			want.Timestamp = PolygonTime
			want.LogCount = map[int]int{0: 5}[i]
			same(t, fmt.Sprintf("transaction %d", i), *tx, want)
		}
	})
	t.Run("EmptyBlockAbsentFields", func(t *testing.T) {
		got, err := s.FindBlock(ctx, chainquery.Polygon, PolygonEmptyBlock, true)
		must(t, err)
		if got.HasExtraData || len(got.LogsBloom) != 0 || got.BaseFeePerGas != nil {
			t.Fatalf("absent fields came back: extra=%v bloom=%d base fee=%v", got.HasExtraData, len(got.LogsBloom), got.BaseFeePerGas)
		}
		if got.Transactions == nil || len(got.Transactions) != 0 {
			t.Fatalf("transactions = %#v, want an empty non-nil slice", got.Transactions)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.FindBlock(ctx, chainquery.Polygon, PolygonLaterBlock+1, false)
		wantCode(t, err, chainquery.ENOTFOUND)
		_, err = s.FindBlock(ctx, chainquery.Ethereum, PolygonBlock, false) // chains do not mix
		wantCode(t, err, chainquery.ENOTFOUND)
	})
	t.Run("Latest", func(t *testing.T) {
		for chain, want := range map[chainquery.Chain]uint64{chainquery.Polygon: PolygonLaterBlock, chainquery.Ethereum: EthereumBlock} {
			got, err := s.LatestBlock(ctx, chain)
			must(t, err)
			head, err := s.HeadBlock(ctx, chain)
			must(t, err)
			if got != want || head != want {
				t.Fatalf("latest %s = %d, head %d, want %d", chain, got, head, want)
			}
		}
		_, err := s.LatestBlock(ctx, chainquery.Base)
		wantCode(t, err, chainquery.ENOTFOUND)
		_, err = s.HeadBlock(ctx, chainquery.Base)
		wantCode(t, err, chainquery.ENOTFOUND)
	})
	t.Run("BlockHash", func(t *testing.T) {
		h, err := s.BlockHash(ctx, chainquery.Polygon, PolygonEmptyBlock)
		must(t, err)
		if h != BlockHash(PolygonEmptyBlock) {
			t.Fatalf("hash = %s", h.Hex())
		}
		_, err = s.BlockHash(ctx, chainquery.Polygon, 1)
		wantCode(t, err, chainquery.ENOTFOUND)
	})
}

func testReceipts(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	f := func(block uint64, offset, limit int) chainquery.ReceiptFilter {
		return chainquery.ReceiptFilter{Chain: chainquery.Polygon, BlockNumber: block, Page: chainquery.Page{Offset: offset, Limit: limit}}
	}
	t.Run("OrderAndCount", func(t *testing.T) {
		d := polygonBlock()
		got, count, err := s.FindBlockReceipts(ctx, f(PolygonBlock, 0, 10))
		must(t, err)
		if count != 5 || len(got) != 5 {
			t.Fatalf("count %d, %d receipts; want 5, 5", count, len(got))
		}
		for i, r := range got {
			tx := d.Transactions[i]
			want := chainquery.Receipt{BlockNumber: PolygonBlock, Timestamp: PolygonTime, TransactionHash: tx.Hash,
				TransactionIndex: i, CumulativeGasUsed: tx.CumulativeGasUsed, GasUsed: tx.GasUsed,
				ContractAddress: tx.ContractAddress, Status: tx.Status, EffectiveGasPrice: tx.EffectiveGasPrice}
			same(t, fmt.Sprintf("receipt %d", i), *r, want)
		}
	})
	t.Run("Paging", func(t *testing.T) {
		got, count, err := s.FindBlockReceipts(ctx, f(PolygonBlock, 3, 1))
		must(t, err)
		if count != 5 || len(got) != 1 || got[0].TransactionIndex != 3 {
			t.Fatalf("count %d, receipts %+v", count, got)
		}
		got, count, err = s.FindBlockReceipts(ctx, f(PolygonBlock, 7, 5))
		must(t, err)
		if count != 5 || got == nil || len(got) != 0 {
			t.Fatalf("past the end: count %d, receipts %#v", count, got)
		}
	})
	t.Run("EmptyBlock", func(t *testing.T) {
		got, count, err := s.FindBlockReceipts(ctx, f(PolygonEmptyBlock, 0, 10))
		must(t, err)
		if count != 0 || got == nil || len(got) != 0 {
			t.Fatalf("count %d, receipts %#v", count, got)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, _, err := s.FindBlockReceipts(ctx, f(PolygonBlock-1, 0, 10))
		wantCode(t, err, chainquery.ENOTFOUND)
	})
}

func testLogs(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	f := func(chain chainquery.Chain, hash chainquery.Hash, block *uint64, offset, limit int) chainquery.LogFilter {
		return chainquery.LogFilter{Chain: chain, TransactionHash: hash, BlockNumber: block, Page: chainquery.Page{Offset: offset, Limit: limit}}
	}
	t.Run("ZeroToFourTopics", func(t *testing.T) {
		got, count, err := s.FindTransactionLogs(ctx, f(chainquery.Polygon, TxNested, nil, 0, 10))
		must(t, err)
		if count != 5 || len(got) != 5 {
			t.Fatalf("count %d, %d logs", count, len(got))
		}
		for i, l := range got {
			want := *polygonBlock().Logs[i]
			want.Timestamp, want.TransactionHash, want.TransactionFrom, want.TransactionTo = PolygonTime, TxNested, EOA1, &Router
			same(t, fmt.Sprintf("log %d", i), *l, want)
			if len(l.Topics) != i {
				t.Fatalf("log %d has %d topics", i, len(l.Topics))
			}
		}
	})
	t.Run("Paging", func(t *testing.T) {
		got, count, err := s.FindTransactionLogs(ctx, f(chainquery.Polygon, TxNested, nil, 2, 2))
		must(t, err)
		if count != 5 || len(got) != 2 || got[0].LogIndex != 2 || got[1].LogIndex != 3 {
			t.Fatalf("count %d, logs %+v", count, got)
		}
		got, count, err = s.FindTransactionLogs(ctx, f(chainquery.Polygon, TxNested, nil, 5, 10))
		must(t, err)
		if count != 5 || got == nil || len(got) != 0 {
			t.Fatalf("past the end: count %d, logs %#v", count, got)
		}
	})
	t.Run("NoLogs", func(t *testing.T) {
		got, count, err := s.FindTransactionLogs(ctx, f(chainquery.Polygon, TxTransfer, nil, 0, 10))
		must(t, err)
		if count != 0 || got == nil || len(got) != 0 {
			t.Fatalf("count %d, logs %#v", count, got)
		}
	})
	t.Run("BlockNumber", func(t *testing.T) {
		right, wrong := PolygonBlock, PolygonEmptyBlock
		_, count, err := s.FindTransactionLogs(ctx, f(chainquery.Polygon, TxNested, &right, 0, 10))
		must(t, err)
		if count != 5 {
			t.Fatalf("count %d", count)
		}
		_, _, err = s.FindTransactionLogs(ctx, f(chainquery.Polygon, TxNested, &wrong, 0, 10))
		wantCode(t, err, chainquery.ENOTFOUND)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, _, err := s.FindTransactionLogs(ctx, f(chainquery.Polygon, H(TagTx, 200), nil, 0, 10))
		wantCode(t, err, chainquery.ENOTFOUND)
		_, _, err = s.FindTransactionLogs(ctx, f(chainquery.Ethereum, TxNested, nil, 0, 10)) // chains do not mix
		wantCode(t, err, chainquery.ENOTFOUND)
	})
}
