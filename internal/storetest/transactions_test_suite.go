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

// testLogFilter checks Filter Logs (FindLogs) against the logs Get Block
// Logs gives for the same blocks, filtered here: the fixture's block holds
// five logs of Token with 0 to 4 topics (log i's topic j is H(TagTopic,
// 10i+j)).
func testLogFilter(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	var all []*chainquery.Log
	for _, n := range []uint64{PolygonBlock, PolygonEmptyBlock, PolygonLaterBlock} {
		logs, _, err := s.FindBlockLogs(ctx, chainquery.BlockLogFilter{Chain: chainquery.Polygon, BlockNumber: n, Page: chainquery.Page{Limit: 50}})
		must(t, err)
		all = append(all, logs...)
	}
	if len(all) != 5 {
		t.Fatalf("%d logs in the fixture's polygon blocks, want 5", len(all))
	}
	lo, hi := PolygonBlock, PolygonLaterBlock
	topic := func(i, j int) chainquery.Hash { return H(TagTopic, byte(10*i+j)) }
	for _, c := range []struct {
		name string
		f    chainquery.LogRangeFilter
		want []int // log indexes
	}{
		{"Every log", chainquery.LogRangeFilter{}, []int{0, 1, 2, 3, 4}},
		{"Address", chainquery.LogRangeFilter{Addresses: []chainquery.Address{Token}}, []int{0, 1, 2, 3, 4}},
		{"Another address", chainquery.LogRangeFilter{Addresses: []chainquery.Address{Router}}, nil},
		{"Two addresses", chainquery.LogRangeFilter{Addresses: []chainquery.Address{Router, Token}}, []int{0, 1, 2, 3, 4}},
		{"topic0", chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{{topic(2, 0)}}}, []int{2}},
		{"topic0 of two logs", chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{{topic(2, 0), topic(4, 0)}}}, []int{2, 4}},
		// A position a log lacks never matches: log 1 has one topic.
		{"topic1", chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{nil, {topic(1, 1), topic(3, 1)}}}, []int{3}},
		{"topic3 and the address", chainquery.LogRangeFilter{Addresses: []chainquery.Address{Token}, Topics: [4][]chainquery.Hash{3: {topic(4, 3)}}}, []int{4}},
		{"Positions ANDed", chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{{topic(3, 0)}, {topic(4, 1)}}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			f.Chain, f.FromBlock, f.ToBlock, f.Page = chainquery.Polygon, &lo, &hi, chainquery.Page{Limit: 50}
			got, count, err := s.FindLogs(ctx, f)
			must(t, err)
			want := []*chainquery.Log{}
			for _, i := range c.want {
				want = append(want, all[i])
			}
			sameJSON(t, "logs", []any{got, count}, []any{want, len(want)})
			if len(want) > 1 {
				f.Page = chainquery.Page{Offset: 1, Limit: 1}
				got, count, err = s.FindLogs(ctx, f)
				must(t, err)
				sameJSON(t, "a page", []any{got, count}, []any{want[1:2], len(want)})
			}
		})
	}
	t.Run("DatetimeRange", func(t *testing.T) {
		from, to := time.Unix(PolygonTime, 0), time.Unix(PolygonLaterTime, 0)
		got, count, err := s.FindLogs(ctx, chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromTime: &from, ToTime: &to, Page: chainquery.Page{Limit: 2}})
		must(t, err)
		sameJSON(t, "logs", []any{got, count}, []any{all[:2], 5})
		early := time.Unix(PolygonTime-3600, 0)
		got, count, err = s.FindLogs(ctx, chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromTime: &early, ToTime: &early, Page: chainquery.Page{Limit: 2}})
		must(t, err)
		if count != 0 || got == nil || len(got) != 0 {
			t.Fatalf("a range before every block: count %d, %#v", count, got)
		}
	})
	t.Run("ChainsDoNotMix", func(t *testing.T) {
		lo, hi := EthereumBlock, EthereumBlock
		got, count, err := s.FindLogs(ctx, chainquery.LogRangeFilter{Chain: chainquery.Ethereum, FromBlock: &lo, ToBlock: &hi, Page: chainquery.Page{Limit: 5}})
		must(t, err)
		if count != 1 || len(got) != 1 || got[0].TransactionHash != TxEthereum {
			t.Fatalf("ethereum: count %d, %+v", count, got)
		}
	})
}
