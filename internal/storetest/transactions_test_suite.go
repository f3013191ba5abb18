package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// testTransactions checks the reads of one transaction by hash and of one
// block's logs against the reads the specification's endpoints already
// pass: Get Block's full transactions, Filter Traces over the block, Get
// Transaction Logs.
func testTransactions(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	tf := func(chain chainquery.Chain, hash chainquery.Hash, block *uint64, offset, limit int) chainquery.TransactionFilter {
		return chainquery.TransactionFilter{Chain: chain, TransactionHash: hash, BlockNumber: block, Page: chainquery.Page{Offset: offset, Limit: limit}}
	}
	full := func(chain chainquery.Chain, n uint64) *chainquery.Block {
		b, err := s.FindBlock(ctx, chain, n, true)
		must(t, err)
		return b
	}
	t.Run("Transaction", func(t *testing.T) {
		for _, c := range []struct {
			chain chainquery.Chain
			block uint64
		}{{chainquery.Polygon, PolygonBlock}, {chainquery.Polygon, PolygonLaterBlock}, {chainquery.Ethereum, EthereumBlock}} {
			b := full(c.chain, c.block)
			for _, want := range b.Transactions {
				got, err := s.FindTransaction(ctx, tf(c.chain, want.Hash, nil, 0, 10))
				must(t, err)
				same(t, "transaction "+want.Hash.Hex(), *got, *want)
				got, err = s.FindTransaction(ctx, tf(c.chain, want.Hash, &c.block, 0, 10))
				must(t, err)
				same(t, "transaction in its block "+want.Hash.Hex(), *got, *want)
			}
		}
		got, err := s.FindTransaction(ctx, tf(chainquery.Polygon, TxNested, nil, 0, 10))
		must(t, err)
		want := *polygonBlock().Transactions[0]
		want.Timestamp, want.LogCount = PolygonTime, 5
		same(t, "transaction 0", *got, want)
		same(t, "its receipt", *got.Receipt(), chainquery.Receipt{BlockNumber: PolygonBlock, Timestamp: PolygonTime,
			TransactionHash: TxNested, CumulativeGasUsed: want.CumulativeGasUsed, GasUsed: want.GasUsed,
			Status: want.Status, EffectiveGasPrice: want.EffectiveGasPrice})
	})
	t.Run("TransactionNotFound", func(t *testing.T) {
		wrong := PolygonEmptyBlock
		_, err := s.FindTransaction(ctx, tf(chainquery.Polygon, TxNested, &wrong, 0, 10))
		wantCode(t, err, chainquery.ENOTFOUND)
		_, err = s.FindTransaction(ctx, tf(chainquery.Polygon, H(TagTx, 200), nil, 0, 10))
		wantCode(t, err, chainquery.ENOTFOUND)
		_, err = s.FindTransaction(ctx, tf(chainquery.Ethereum, TxNested, nil, 0, 10)) // chains do not mix
		wantCode(t, err, chainquery.ENOTFOUND)
		_, _, err = s.FindTransactionTraces(ctx, tf(chainquery.Polygon, H(TagTx, 200), nil, 0, 10))
		wantCode(t, err, chainquery.ENOTFOUND)
	})
	t.Run("Traces", func(t *testing.T) {
		// Every transaction's traces are its run of the block's traces.
		lo, hi := PolygonBlock, PolygonLaterBlock
		all, _, err := s.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi, Page: chainquery.Page{Limit: 50}})
		must(t, err)
		byTx := map[chainquery.Hash][]*chainquery.Trace{}
		for _, tr := range all {
			byTx[tr.TransactionHash] = append(byTx[tr.TransactionHash], tr)
		}
		for _, hash := range []chainquery.Hash{TxNested, TxReverted, TxCreate, TxSuicide, TxTransfer, TxLater} {
			want := byTx[hash]
			got, count, err := s.FindTransactionTraces(ctx, tf(chainquery.Polygon, hash, nil, 0, 50))
			must(t, err)
			if count != len(want) {
				t.Fatalf("%s: count %d, want %d", hash.Hex(), count, len(want))
			}
			sameJSON(t, "traces of "+hash.Hex(), got, want)
		}
		if n := len(byTx[TxNested]); n != 2+NestedSubcalls {
			t.Fatalf("the nested transaction has %d traces in Filter Traces", n)
		}
		got, count, err := s.FindTransactionTraces(ctx, tf(chainquery.Polygon, TxNested, nil, 3, 4))
		must(t, err)
		sameJSON(t, "a page", []any{got, count}, []any{byTx[TxNested][3:7], 2 + NestedSubcalls})
		// Before the trace history start, nothing is served; at it, all.
		early := tf(chainquery.Polygon, TxNested, nil, 0, 50)
		early.MinTime = time.Unix(PolygonTime+1, 0)
		got, count, err = s.FindTransactionTraces(ctx, early)
		must(t, err)
		if count != 0 || got == nil || len(got) != 0 {
			t.Fatalf("before the trace history: count %d, traces %#v", count, got)
		}
		early.MinTime, early.TransactionHash = time.Unix(PolygonLaterTime, 0), TxLater
		if _, count, err = s.FindTransactionTraces(ctx, early); err != nil || count != 1 {
			t.Fatalf("at the trace history start: count %d, %v", count, err)
		}
		got, count, err = s.FindTransactionTraces(ctx, tf(chainquery.Polygon, TxNested, nil, 2+NestedSubcalls, 4))
		must(t, err)
		if count != 2+NestedSubcalls || got == nil || len(got) != 0 {
			t.Fatalf("past the end: count %d, traces %#v", count, got)
		}
	})
	t.Run("BlockLogs", func(t *testing.T) {
		for _, c := range []struct {
			chain chainquery.Chain
			block uint64
		}{{chainquery.Polygon, PolygonBlock}, {chainquery.Polygon, PolygonEmptyBlock}, {chainquery.Polygon, PolygonLaterBlock}, {chainquery.Ethereum, EthereumBlock}} {
			var want []*chainquery.Log
			for _, tx := range full(c.chain, c.block).Transactions {
				logs, _, err := s.FindTransactionLogs(ctx, chainquery.LogFilter{Chain: c.chain, TransactionHash: tx.Hash, Page: chainquery.Page{Limit: 50}})
				must(t, err)
				want = append(want, logs...)
			}
			if want == nil {
				want = []*chainquery.Log{}
			}
			f := chainquery.BlockLogFilter{Chain: c.chain, BlockNumber: c.block, Page: chainquery.Page{Limit: 50}}
			got, count, err := s.FindBlockLogs(ctx, f)
			must(t, err)
			sameJSON(t, fmt.Sprintf("logs of %s block %d", c.chain, c.block), []any{got, count}, []any{want, len(want)})
			if got == nil {
				t.Fatalf("block %d: nil page", c.block)
			}
			if len(want) > 2 {
				f.Page = chainquery.Page{Offset: 1, Limit: 2}
				got, count, err = s.FindBlockLogs(ctx, f)
				must(t, err)
				sameJSON(t, fmt.Sprintf("a page of block %d's logs", c.block), []any{got, count}, []any{want[1:3], len(want)})
			}
			f.Page = chainquery.Page{Offset: len(want), Limit: 5}
			got, count, err = s.FindBlockLogs(ctx, f)
			must(t, err)
			if count != len(want) || got == nil || len(got) != 0 {
				t.Fatalf("past the end of block %d: count %d, logs %#v", c.block, count, got)
			}
		}
		if got, _, err := s.FindBlockLogs(ctx, chainquery.BlockLogFilter{Chain: chainquery.Polygon, BlockNumber: PolygonBlock, Page: chainquery.Page{Limit: 50}}); err != nil || len(got) != 5 {
			t.Fatalf("block %d: %d logs, %v; want the nested transaction's 5", PolygonBlock, len(got), err)
		}
		_, _, err := s.FindBlockLogs(ctx, chainquery.BlockLogFilter{Chain: chainquery.Polygon, BlockNumber: PolygonBlock - 1, Page: chainquery.Page{Limit: 5}})
		wantCode(t, err, chainquery.ENOTFOUND)
	})
}

// sameJSON fails unless got and want marshal to the same JSON: for
// answers holding pointers, whose %+v would print addresses.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	must(t, err)
	w, err := json.Marshal(want)
	must(t, err)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}
