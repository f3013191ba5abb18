package evm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/sqlite"
)

// replayNode answers JSON-RPC calls from the recorded mainnet responses of
// one cross-check set, misbehaving the first time it is asked for each kind
// of data, as public nodes do: the block is not there yet (null), the
// receipts come back empty from a lagging replica, the traces answer is cut
// off, and one request is rate limited.
type replayNode struct {
	t        *testing.T
	number   uint64
	block    json.RawMessage
	receipts []json.RawMessage
	traces   json.RawMessage
	mu       sync.Mutex
	asked    map[string]int
}

func (n *replayNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	n.asked["http"]++
	if n.asked["http"] == 2 {
		w.Header().Set("Retry-After", "0")
		http.Error(w, "rate limited", http.StatusTooManyRequests)
		return
	}
	var calls []struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	batch := strings.HasPrefix(strings.TrimSpace(string(body)), "[")
	if batch {
		json.Unmarshal(body, &calls)
	} else {
		calls = calls[:0:0]
		var one struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		json.Unmarshal(body, &one)
		calls = append(calls, one)
	}
	var out []string
	for _, c := range calls {
		n.asked[c.Method]++
		first := n.asked[c.Method] == 1
		var result string
		switch c.Method {
		case "eth_blockNumber":
			result = fmt.Sprintf(`"0x%x"`, n.number)
		case "eth_getBlockByNumber":
			if first {
				result = "null"
			} else {
				result = string(n.block)
			}
		case "eth_getBlockReceipts":
			if first {
				result = "[]"
			} else {
				b, _ := json.Marshal(n.receipts)
				result = string(b)
			}
		case "eth_getTransactionReceipt":
			result = "null"
			var hash string
			json.Unmarshal(c.Params[0], &hash)
			for _, r := range n.receipts {
				var h struct {
					TransactionHash string `json:"transactionHash"`
				}
				json.Unmarshal(r, &h)
				if strings.EqualFold(h.TransactionHash, hash) && n.asked[c.Method] > 1 {
					result = string(r)
				}
			}
		case "trace_block", "debug_traceBlockByHash":
			if first {
				w.Write([]byte(`[{"jsonrpc":"2.0","id":1,"result":[{"act`)) // truncated
				return
			}
			result = string(n.traces)
		default:
			out = append(out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, c.ID))
			continue
		}
		out = append(out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, c.ID, result))
	}
	if batch {
		io.WriteString(w, "["+strings.Join(out, ",")+"]")
	} else {
		io.WriteString(w, out[0])
	}
}

// TestFetchReplay fetches every cross-check block through a misbehaving
// replay of its recorded responses, stores it, and reads it back: the fetcher
// retries until the block is complete, and nothing is lost on the way to the
// store.
func TestFetchReplay(t *testing.T) {
	for _, set := range tdSets {
		t.Run(strings.ReplaceAll(set.name, " ", "_"), func(t *testing.T) {
			want := tdComplete(t, set) // decoded directly, as the reference
			chain := want.Block.Chain
			node := &replayNode{t: t, number: want.Block.Number, block: tdResult(t, set.block), asked: map[string]int{}}
			plan := evm.Plan{Traces: evm.TracesOff}
			for _, name := range set.receipts {
				if strings.Contains(name, "eth_getBlockReceipts") || strings.Contains(name, "receipts__") {
					plan.BlockReceipts = true
				}
			}
			node.receipts = tdReceipts(t, set.receipts...)
			switch {
			case set.parity != "":
				plan.Traces, node.traces = evm.TracesParity, tdResult(t, set.parity)
			case len(set.callTracer) > 0:
				plan.Traces, node.traces = evm.TracesCallTracer, tdArray(t, set.callTracer...)
			}
			srv := httptest.NewServer(node)
			defer srv.Close()
			client := jsonrpc.NewClient(srv.URL)
			client.MinBackoff, client.MaxBackoff = time.Millisecond, time.Millisecond
			f := evm.NewFetcher(client, chain, plan, nil)
			f.Wait = time.Millisecond

			n := want.Block.Number
			got, err := f.Blocks(context.Background(), n, n)
			if err != nil {
				t.Fatal(err)
			}
			d := got[0]
			if len(d.Traces) != len(want.Traces) || len(d.Logs) != len(want.Logs) || len(d.Transactions) != len(want.Transactions) {
				t.Fatalf("fetched %d txs, %d logs, %d traces; decoded directly %d, %d, %d",
					len(d.Transactions), len(d.Logs), len(d.Traces), len(want.Transactions), len(want.Logs), len(want.Traces))
			}
			for _, m := range []string{"eth_getBlockByNumber", "http"} {
				if node.asked[m] < 2 {
					t.Fatalf("%s asked %d times: the fault was not retried", m, node.asked[m])
				}
			}
			storeAndReadBack(t, chain, d)
		})
	}
}

// storeAndReadBack writes d and checks that the store gives back every
// transaction, receipt, log and trace as decoded.
func storeAndReadBack(t *testing.T, chain chainquery.Chain, d *chainquery.BlockData) {
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.WriteBlocks(ctx, chain, []*chainquery.BlockData{d}); err != nil {
		t.Fatal(err)
	}
	n := d.Block.Number
	b, err := db.FindBlock(ctx, chain, n, true)
	if err != nil {
		t.Fatal(err)
	}
	wantBlock := *d.Block
	wantBlock.Transactions = nil
	gotTxs := b.Transactions
	b.Transactions = nil
	wantBlock.TraceCount = len(d.Traces)
	sameValue(t, "block", *b, wantBlock)
	for i, tx := range gotTxs {
		w := *d.Transactions[i]
		w.Timestamp = d.Block.Timestamp
		sameValue(t, fmt.Sprintf("transaction %d", i), *tx, w)
	}
	logs := 0
	for _, tx := range d.Transactions {
		got, count, err := db.FindTransactionLogs(ctx, chainquery.LogFilter{Chain: chain, TransactionHash: tx.Hash, BlockNumber: &n, Page: chainquery.Page{Limit: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		logs += count
		for _, l := range got {
			var w *chainquery.Log
			for _, dl := range d.Logs {
				if dl.LogIndex == l.LogIndex {
					w = dl
				}
			}
			if w == nil || fmt.Sprint(l.Topics, l.Address, l.Data) != fmt.Sprint(w.Topics, w.Address, w.Data) {
				t.Fatalf("log %d: stored %+v, decoded %+v", l.LogIndex, l, w)
			}
		}
	}
	if logs != len(d.Logs) {
		t.Fatalf("%d logs stored, %d decoded", logs, len(d.Logs))
	}
	traces, count, err := db.FindTraces(ctx, chainquery.TraceFilter{Chain: chain, FromBlock: &n, ToBlock: &n, Page: chainquery.Page{Limit: 100000}})
	if err != nil {
		t.Fatal(err)
	}
	if count != len(d.Traces) || len(traces) != len(d.Traces) {
		t.Fatalf("%d traces stored (count %d), %d decoded", len(traces), count, len(d.Traces))
	}
	byKey := map[string]*chainquery.Trace{}
	for _, tr := range d.Traces {
		byKey[fmt.Sprint(tr.TransactionIndex, tr.TraceAddress)] = tr
	}
	for _, tr := range traces {
		w := byKey[fmt.Sprint(tr.TransactionIndex, tr.TraceAddress)]
		if w == nil {
			t.Fatalf("stored trace %d/%v was not decoded", tr.TransactionIndex, tr.TraceAddress)
		}
		got := fmt.Sprint(tr.Type, tr.CallType, tr.From, tr.To, tr.Gas, tr.GasUsed, tr.Value, tr.Subtraces, tr.Input, tr.Output, tr.Error)
		if exp := fmt.Sprint(w.Type, w.CallType, w.From, w.To, w.Gas, w.GasUsed, w.Value, w.Subtraces, w.Input, w.Output, w.Error); got != exp {
			t.Fatalf("trace %d/%v:\n stored  %s\n decoded %s", tr.TransactionIndex, tr.TraceAddress, got, exp)
		}
	}
}

// sameValue compares two values by their %+v text: *big.Int prints its
// value, and nil and empty byte slices print alike.
func sameValue(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Fatalf("%s:\n stored  %s\n decoded %s", what, g, w)
	}
}
