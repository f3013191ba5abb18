package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

func testTraces(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	blocks := func(from, to uint64) chainquery.TraceFilter {
		return chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &from, ToBlock: &to, Page: chainquery.Page{Limit: 50}}
	}
	all := blocks(PolygonBlock, PolygonLaterBlock)

	// The whole fixture in API order: transaction, then depth-first pre-order.
	var order []string
	order = append(order, "0:", "0:0")
	for i := 0; i < NestedSubcalls; i++ {
		order = append(order, fmt.Sprintf("0:0.%d", i))
	}
	order = append(order, "1:", "1:0", "2:", "2:0", "3:", "3:0", "4:", "L0:")

	t.Run("Order", func(t *testing.T) {
		got, count, err := s.FindTraces(ctx, all)
		must(t, err)
		if count != len(order) {
			t.Fatalf("count = %d, want %d", count, len(order))
		}
		same(t, "order", keys(got), strings.Join(order, " "))
		if i, j := strings.Index(keys(got), "0:0.2 "), strings.Index(keys(got), "0:0.10"); i > j {
			t.Fatalf(`"0.10" came before "0.2": %s`, keys(got))
		}
	})
	t.Run("Fields", func(t *testing.T) {
		got, _, err := s.FindTraces(ctx, all)
		must(t, err)
		want := map[string]*chainquery.Trace{}
		for _, tr := range polygonBlock().Traces {
			want[fmt.Sprintf("%d:%s", tr.TransactionIndex, chainquery.FormatTraceAddress(tr.TraceAddress))] = tr
		}
		txs := polygonBlock().Transactions
		for _, tr := range got[:len(got)-1] {
			k := fmt.Sprintf("%d:%s", tr.TransactionIndex, chainquery.FormatTraceAddress(tr.TraceAddress))
			w := *want[k]
			tx := txs[w.TransactionIndex]
			w.Timestamp, w.TransactionHash, w.TransactionFrom, w.TransactionTo, w.TransactionStatus = PolygonTime, tx.Hash, tx.From, tx.To, tx.Status
			same(t, "trace "+k, *tr, w)
		}
		if got[13].TransactionStatus || got[13].Error != "execution reverted" || got[14].Error != "out of gas" {
			t.Fatalf("reverted transaction: %+v %+v", got[13], got[14])
		}
		if got[15].TransactionTo != nil || got[15].Type != chainquery.TraceCreate || got[16].CallType != chainquery.CallTypeCreate {
			t.Fatalf("creation: %+v %+v", got[15], got[16])
		}
		if got[18].Type != chainquery.TraceSuicide || got[18].Value.String() != "123456789012345678901234567890" {
			t.Fatalf("suicide: %+v", got[18])
		}
	})
	t.Run("Count", func(t *testing.T) {
		for _, c := range []struct {
			offset, limit int
			want          string
		}{
			{0, 5, strings.Join(order[:5], " ")},
			{10, 5, strings.Join(order[10:15], " ")},
			{20, 5, strings.Join(order[20:], " ")},
			{21, 5, ""},
			{1000, 50, ""},
		} {
			f := all
			f.Page = chainquery.Page{Offset: c.offset, Limit: c.limit}
			got, count, err := s.FindTraces(ctx, f)
			must(t, err)
			if count != len(order) || got == nil {
				t.Fatalf("offset %d: count = %d (result %#v), want %d", c.offset, count, got, len(order))
			}
			same(t, fmt.Sprintf("offset %d limit %d", c.offset, c.limit), keys(got), c.want)
		}
	})
	addrs := func(f chainquery.TraceFilter, from, to []chainquery.Address, offset, limit int) chainquery.TraceFilter {
		f.FromAddresses, f.ToAddresses, f.Page = from, to, chainquery.Page{Offset: offset, Limit: limit}
		return f
	}
	routerCalls := strings.Join(order[1:13], " ")
	for _, c := range []struct {
		name          string
		from, to      []chainquery.Address
		offset, limit int
		want          string
		count         int
	}{
		{"FromOne", []chainquery.Address{Router}, nil, 0, 50, routerCalls, 12},
		{"FromDuplicate", []chainquery.Address{Router, Router}, nil, 0, 50, routerCalls, 12},
		{"FromAnyOf", []chainquery.Address{EOA2, Router}, nil, 0, 50, routerCalls + " 1: 4: L0:", 15},
		{"FromAnyOfPaged", []chainquery.Address{EOA2, Router}, nil, 11, 3, "0:0.10 1: 4:", 15},
		{"FromAnyOfPastEnd", []chainquery.Address{EOA2, Router}, nil, 15, 3, "", 15},
		{"ToOne", nil, []chainquery.Address{Router}, 0, 50, "0: L0:", 2},
		{"ToAnyOf", nil, []chainquery.Address{Token, EOA2}, 0, 4, "0:0.2 0:0.3 0:0.4 0:0.5", 11},
		{"FromAndTo", []chainquery.Address{EOA2}, []chainquery.Address{Router}, 0, 50, "L0:", 1},
		{"FromAndToAnyOf", []chainquery.Address{EOA1, EOA2}, []chainquery.Address{Router, Failing}, 0, 50, "0: 1: L0:", 3},
		{"FromAndToNone", []chainquery.Address{Oracle}, []chainquery.Address{Router}, 0, 50, "", 0},
		{"Unknown", []chainquery.Address{Addr(0x99)}, nil, 0, 50, "", 0},
	} {
		t.Run("Address"+c.name, func(t *testing.T) {
			got, count, err := s.FindTraces(ctx, addrs(all, c.from, c.to, c.offset, c.limit))
			must(t, err)
			if count != c.count {
				t.Fatalf("count = %d, want %d", count, c.count)
			}
			same(t, "traces", keys(got), c.want)
		})
	}
	at := func(ts int64, frac time.Duration) *time.Time { v := time.Unix(ts, 0).Add(frac).UTC(); return &v }
	for _, c := range []struct {
		name     string
		from, to *time.Time
		want     string
	}{
		{"Inclusive", at(PolygonTime, 0), at(PolygonLaterTime, 0), strings.Join(order, " ")},
		{"LaterOnly", at(PolygonTime, time.Second), at(PolygonLaterTime, 0), "L0:"},
		{"FractionalFrom", at(PolygonTime, 500*time.Millisecond), at(PolygonLaterTime, 0), "L0:"},
		{"FractionalTo", at(PolygonTime, 0), at(PolygonLaterTime, -500*time.Millisecond), strings.Join(order[:len(order)-1], " ")},
		{"EmptyBlockOnly", at(PolygonEmptyTime, 0), at(PolygonEmptyTime, 0), ""},
		{"BeforeIndex", at(PolygonTime-86400, 0), at(PolygonTime-1, 0), ""},
		{"AfterIndex", at(PolygonLaterTime+1, 0), at(PolygonLaterTime+86400, 0), ""},
	} {
		t.Run("Datetime"+c.name, func(t *testing.T) {
			f := chainquery.TraceFilter{Chain: chainquery.Polygon, FromTime: c.from, ToTime: c.to, Page: chainquery.Page{Limit: 50}}
			got, count, err := s.FindTraces(ctx, f)
			must(t, err)
			same(t, "traces", keys(got), c.want)
			if count != len(got) {
				t.Fatalf("count = %d, want %d", count, len(got))
			}
		})
	}
	t.Run("HistoryStart", func(t *testing.T) {
		f := all
		f.MinTime = time.Unix(PolygonTime+1, 0)
		got, count, err := s.FindTraces(ctx, f)
		must(t, err)
		if count != 1 || keys(got) != "L0:" {
			t.Fatalf("count %d, traces %s", count, keys(got))
		}
		f.MinTime = time.Unix(PolygonLaterTime+1, 0) // after everything indexed
		got, count, err = s.FindTraces(ctx, f)
		must(t, err)
		if count != 0 || len(got) != 0 {
			t.Fatalf("count %d, traces %s", count, keys(got))
		}
	})
	t.Run("OutsideIndex", func(t *testing.T) {
		got, count, err := s.FindTraces(ctx, blocks(1, 100))
		must(t, err)
		if count != 0 || got == nil || len(got) != 0 {
			t.Fatalf("count %d, traces %#v", count, got)
		}
		f := blocks(EthereumBlock, EthereumBlock) // an ethereum height on polygon
		got, count, err = s.FindTraces(ctx, f)
		must(t, err)
		if count != 0 || len(got) != 0 {
			t.Fatalf("count %d, traces %s", count, keys(got))
		}
	})
}

// keys lists traces as "tx:trace_address", "L" marking the later block.
func keys(traces []*chainquery.Trace) string {
	var out []string
	for _, t := range traces {
		prefix := ""
		if t.BlockNumber == PolygonLaterBlock {
			prefix = "L"
		}
		out = append(out, fmt.Sprintf("%s%d:%s", prefix, t.TransactionIndex, chainquery.FormatTraceAddress(t.TraceAddress)))
	}
	return strings.Join(out, " ")
}
