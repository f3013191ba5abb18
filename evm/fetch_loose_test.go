package evm_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/jsonrpc"
)

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
