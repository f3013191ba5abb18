package evm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/jsonrpc/jsonrpctest"
)

// TestFetchOddTransactionLogged serves a block whose one transaction has a
// field no decoder can read: the block is stored with what is known and the
// odd field is logged, naming the chain, block and method.
func TestFetchOddTransactionLogged(t *testing.T) {
	hash := "0x" + strings.Repeat("11", 32)
	block := `{"number":"0x10","hash":"0x` + strings.Repeat("aa", 32) + `","parentHash":"0x` + strings.Repeat("bb", 32) + `",
		"timestamp":"0x5","transactionsRoot":"0x` + strings.Repeat("01", 32) + `","stateRoot":"0x` + strings.Repeat("02", 32) + `",
		"receiptsRoot":"0x` + strings.Repeat("03", 32) + `","miner":"0x` + strings.Repeat("04", 20) + `","size":"0x1","gasLimit":"0x1","gasUsed":"0x1",
		"transactions":[{"hash":"` + hash + `","transactionIndex":"0x0","from":"0x` + strings.Repeat("05", 20) + `","to":null,
		"value":"not a number","gas":"0x5208","gasPrice":"0x1","nonce":"0x0","input":"0x","type":"0x99"}]}`
	receipts := `[{"transactionHash":"` + hash + `","transactionIndex":"0x0","blockNumber":"0x10","status":"0x1","gasUsed":"0x5208",
		"cumulativeGasUsed":"0x5208","effectiveGasPrice":"0x1","contractAddress":null,"logs":[]}]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		jsonrpctest.Answer(w, body, func(method string) (any, *jsonrpc.RPCError) {
			switch method {
			case "eth_getBlockByNumber":
				return json.RawMessage(block), nil
			case "eth_getBlockReceipts":
				return json.RawMessage(receipts), nil
			}
			return nil, &jsonrpc.RPCError{Code: -32601, Message: "method not found"}
		})
	}))
	defer srv.Close()
	var logs bytes.Buffer
	f := evm.NewFetcher(jsonrpc.NewClient(srv.URL), chainquery.Base, evm.Plan{BlockReceipts: true, Traces: evm.TracesOff},
		slog.New(slog.NewTextHandler(&logs, nil)))
	f.Wait = time.Millisecond
	got, err := f.Blocks(context.Background(), 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	tx := got[0].Transactions[0]
	if tx.Type != 0x99 || tx.GasLimit != 21000 || tx.Value == nil || tx.Value.Sign() != 0 {
		t.Fatalf("transaction %+v", tx)
	}
	if out := logs.String(); !strings.Contains(out, "odd field left empty") || !strings.Contains(out, "chain=base") ||
		!strings.Contains(out, "block=16") || !strings.Contains(out, "value") {
		t.Fatalf("log:\n%s", out)
	}
}

// oneCallBlock returns the answers of eth_getBlockByNumber,
// eth_getBlockReceipts and trace_block for block 16, of one transaction
// making one call.
func oneCallBlock() (block, receipts, traces string) {
	hash := "0x" + strings.Repeat("11", 32)
	blockHash := "0x" + strings.Repeat("aa", 32)
	block = `{"number":"0x10","hash":"` + blockHash + `","parentHash":"0x` + strings.Repeat("bb", 32) + `",
		"timestamp":"0x5","transactionsRoot":"0x` + strings.Repeat("01", 32) + `","stateRoot":"0x` + strings.Repeat("02", 32) + `",
		"receiptsRoot":"0x` + strings.Repeat("03", 32) + `","miner":"0x` + strings.Repeat("04", 20) + `","size":"0x1","gasLimit":"0x1","gasUsed":"0x1",
		"transactions":[{"hash":"` + hash + `","transactionIndex":"0x0","from":"0x` + strings.Repeat("05", 20) + `","to":"0x` + strings.Repeat("06", 20) + `",
		"value":"0x0","gas":"0x5208","gasPrice":"0x1","nonce":"0x0","input":"0x","type":"0x0"}]}`
	receipts = `[{"transactionHash":"` + hash + `","transactionIndex":"0x0","blockNumber":"0x10","blockHash":"` + blockHash + `","status":"0x1","gasUsed":"0x5208",
		"cumulativeGasUsed":"0x5208","effectiveGasPrice":"0x1","contractAddress":null,"logs":[]}]`
	traces = `[{"action":{"callType":"call","from":"0x` + strings.Repeat("05", 20) + `","gas":"0x0","input":"0x","to":"0x` + strings.Repeat("06", 20) + `","value":"0x0"},
		"blockHash":"` + blockHash + `","blockNumber":16,"result":{"gasUsed":"0x0","output":"0x"},"subtraces":0,"traceAddress":[],
		"transactionHash":"` + hash + `","transactionPosition":0,"type":"call"}]`
	return block, receipts, traces
}

// TestFetchMissingBlockCancelsTheRest serves block 16 only from the third
// time it is asked for; until then the node answers trace_block with an
// error that the client would retry. The block, its receipts and its traces
// are asked for at once, and a block the node does not have yet must cancel
// the other two rather than let the client retry them: each round of the
// fetcher asks for the traces once.
func TestFetchMissingBlockCancelsTheRest(t *testing.T) {
	block, receipts, traces := oneCallBlock()
	var mu sync.Mutex
	blockCalls, traceCalls := 0, 0
	// ready says whether the node has the block: from its third call on.
	// The receipts and traces of a round may come before its block call,
	// so they look again a moment later.
	ready := func() bool {
		for range 2 {
			mu.Lock()
			ok := blockCalls >= 3
			mu.Unlock()
			if ok {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return false
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		jsonrpctest.Answer(w, body, func(method string) (any, *jsonrpc.RPCError) {
			switch method {
			case "eth_getBlockByNumber":
				mu.Lock()
				defer mu.Unlock()
				if blockCalls++; blockCalls < 3 {
					return nil, nil
				}
				return json.RawMessage(block), nil
			case "eth_getBlockReceipts":
				if !ready() {
					return nil, nil
				}
				return json.RawMessage(receipts), nil
			case "trace_block":
				mu.Lock()
				traceCalls++
				mu.Unlock()
				if !ready() {
					return nil, &jsonrpc.RPCError{Code: -32000, Message: "block not found"}
				}
				return json.RawMessage(traces), nil
			}
			return nil, &jsonrpc.RPCError{Code: -32601, Message: "method not found"}
		})
	}))
	defer srv.Close()
	rpc := jsonrpc.NewClient(srv.URL)
	rpc.MinBackoff, rpc.MaxBackoff = 50*time.Millisecond, 50*time.Millisecond
	f := evm.NewFetcher(rpc, chainquery.Polygon, evm.Plan{BlockReceipts: true, Traces: evm.TracesParity}, slog.New(slog.DiscardHandler))
	f.Wait = time.Millisecond
	got, err := f.Blocks(context.Background(), 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Traces) != 1 {
		t.Fatalf("got %d blocks", len(got))
	}
	mu.Lock()
	defer mu.Unlock()
	if blockCalls != 3 || traceCalls > 3 {
		t.Fatalf("%d calls of the block and %d of its traces, want 3 and at most 3: the traces of a missing block were retried", blockCalls, traceCalls)
	}
}

// TestFetchMembersAfterResult serves answers whose result is followed by
// more members, which the client leaves unread when it bounds a result
// loosely (jsonrpc.Request.Loose): the fetcher must get the block that
// answers written the usual way give, and a node's error written after a
// null result must still be its error.
func TestFetchMembersAfterResult(t *testing.T) {
	block, receipts, traces := oneCallBlock()
	results := map[string]string{"eth_getBlockByNumber": block, "eth_getBlockReceipts": receipts, "trace_block": traces}
	serve := func(after func(method string) string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			body, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(body, &req); err != nil {
				t.Errorf("a batch or no JSON: %s", body)
			}
			result, ok := results[req.Method]
			if !ok {
				result = "null"
			}
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+after(req.Method)+"}\n")
		}))
	}
	fetch := func(srv *httptest.Server) (*chainquery.BlockData, error) {
		rpc := jsonrpc.NewClient(srv.URL)
		rpc.Attempts, rpc.MinBackoff, rpc.MaxBackoff = 1, time.Millisecond, time.Millisecond
		f := evm.NewFetcher(rpc, chainquery.Polygon, evm.Plan{BlockReceipts: true, Traces: evm.TracesParity}, slog.New(slog.DiscardHandler))
		f.Attempts, f.Wait = 2, time.Millisecond
		got, err := f.Blocks(context.Background(), 16, 16)
		if err != nil {
			return nil, err
		}
		return got[0], nil
	}

	plain := serve(func(string) string { return "" })
	defer plain.Close()
	want, err := fetch(plain)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Transactions) != 1 || len(want.Traces) != 1 || want.Transactions[0].GasUsed == 0 {
		t.Fatalf("the plain answers gave %+v", want)
	}
	for _, after := range []string{`,"served":"by a proxy"`, ` , "x" : [1,{"y":"}"}] `, `,"result":` + "null" + `,"result":RESULT`} {
		srv := serve(func(method string) string { return strings.ReplaceAll(after, "RESULT", results[method]) })
		got, err := fetch(srv)
		srv.Close()
		if err != nil {
			t.Fatalf("members %s after each result: %v", after, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("members %s after each result: the block differs", after)
		}
	}

	failing := serve(func(method string) string {
		if method == "trace_block" {
			return `,"error":{"code":-32000,"message":"tracer timed out"}`
		}
		return ""
	})
	defer failing.Close()
	// A trace_block result followed by an error: encoding/json keeps
	// both, and the client takes the error.
	results["trace_block"] = "null"
	if _, err := fetch(failing); err == nil || !strings.Contains(err.Error(), "tracer timed out") {
		t.Fatalf("an error after a null result: %v", err)
	}
}
