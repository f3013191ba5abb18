package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/jsonrpc/jsonrpctest"
)

// faultyNode answers eth_blockNumber calls, misbehaving as fault says on the
// first calls of each exchange.
func faultyNode(t *testing.T, fault func(n int, w http.ResponseWriter, body []byte) bool) (*jsonrpc.Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if fault(int(n.Add(1)), w, body) {
			return
		}
		jsonrpctest.Answer(w, body, func(method string) (any, *jsonrpc.RPCError) {
			if method == "eth_blockNumber" {
				return "0x2a", nil
			}
			return nil, &jsonrpc.RPCError{Code: -32601, Message: "the method " + method + " does not exist/is not available"}
		})
	}))
	t.Cleanup(srv.Close)
	c := jsonrpc.NewClient(srv.URL)
	c.MinBackoff, c.MaxBackoff, c.Attempts = time.Millisecond, 5*time.Millisecond, 5
	return c, &n
}

func blockNumber(t *testing.T, c *jsonrpc.Client) (string, error) {
	var got string
	err := c.Call(context.Background(), &got, "eth_blockNumber")
	return got, err
}

func TestClientRetries(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault func(n int, w http.ResponseWriter, body []byte) bool
	}{
		{"429RetryAfter", func(n int, w http.ResponseWriter, _ []byte) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return true
			}
			return false
		}},
		{"5xx", func(n int, w http.ResponseWriter, _ []byte) bool {
			if n <= 2 {
				http.Error(w, "bad gateway", http.StatusBadGateway)
				return true
			}
			return false
		}},
		{"Truncated", func(n int, w http.ResponseWriter, _ []byte) bool {
			if n == 1 {
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"resu`)
				return true
			}
			return false
		}},
		{"NotJSON", func(n int, w http.ResponseWriter, _ []byte) bool {
			if n == 1 {
				io.WriteString(w, `<html>gateway</html>`)
				return true
			}
			return false
		}},
		{"RPCError", func(n int, w http.ResponseWriter, body []byte) bool {
			if n == 1 {
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}`)
				return true
			}
			return false
		}},
		{"Hang", func(n int, w http.ResponseWriter, _ []byte) bool {
			if n == 1 {
				time.Sleep(300 * time.Millisecond)
			}
			return false
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, calls := faultyNode(t, c.fault)
			client.Timeout = 100 * time.Millisecond
			got, err := blockNumber(t, client)
			if err != nil || got != "0x2a" {
				t.Fatalf("got %q, %v", got, err)
			}
			if calls.Load() < 2 {
				t.Fatalf("%d calls: the fault was not retried", calls.Load())
			}
		})
	}
}

func TestClientGivesUp(t *testing.T) {
	client, calls := faultyNode(t, func(n int, w http.ResponseWriter, _ []byte) bool {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return true
	})
	_, err := blockNumber(t, client)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err = %v", err)
	}
	if calls.Load() != int32(client.Attempts) {
		t.Fatalf("%d calls, want %d attempts", calls.Load(), client.Attempts)
	}
}

func TestClientMethodNotFoundIsPermanent(t *testing.T) {
	client, calls := faultyNode(t, func(int, http.ResponseWriter, []byte) bool { return false })
	var v any
	err := client.Call(context.Background(), &v, "trace_block", "0x1")
	if !jsonrpc.IsMethodNotFound(err) {
		t.Fatalf("err = %v", err)
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls: a missing method was retried", calls.Load())
	}
}

func TestClientBatch(t *testing.T) {
	var batches atomic.Int32
	client, _ := faultyNode(t, func(n int, w http.ResponseWriter, body []byte) bool {
		if strings.HasPrefix(string(body), "[") {
			batches.Add(1)
		}
		return false
	})
	client.MaxBatch = 3
	var reqs []*jsonrpc.Request
	for i := 0; i < 7; i++ {
		reqs = append(reqs, &jsonrpc.Request{Method: "eth_blockNumber"})
	}
	reqs = append(reqs, &jsonrpc.Request{Method: "nope"})
	if err := client.BatchCall(context.Background(), reqs); err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs[:7] {
		if r.Err != nil || string(r.Result) != `"0x2a"` {
			t.Fatalf("call %d: %s, %v", i, r.Result, r.Err)
		}
	}
	if !jsonrpc.IsMethodNotFound(reqs[7].Err) {
		t.Fatalf("last call: %v", reqs[7].Err)
	}
	if batches.Load() != 3 {
		t.Fatalf("%d batches, want 3", batches.Load())
	}
}

func TestClientBatchPartialAnswer(t *testing.T) {
	// The first batch answer lacks one call: only that call is asked again.
	var asked atomic.Int32
	client, _ := faultyNode(t, func(n int, w http.ResponseWriter, body []byte) bool {
		var rs []map[string]any
		if json.Unmarshal(body, &rs) == nil {
			asked.Add(int32(len(rs)))
		} else {
			asked.Add(1)
		}
		if n == 1 {
			var first []struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(body, &first)
			io.WriteString(w, `[{"jsonrpc":"2.0","id":`+string(first[0].ID)+`,"result":"0x2a"}]`)
			return true
		}
		return false
	})
	reqs := []*jsonrpc.Request{{Method: "eth_blockNumber"}, {Method: "eth_blockNumber"}}
	if err := client.BatchCall(context.Background(), reqs); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if asked.Load() != 3 {
		t.Fatalf("%d calls asked, want 3", asked.Load())
	}
}

func TestClientBatchRefused(t *testing.T) {
	client, _ := faultyNode(t, func(n int, w http.ResponseWriter, body []byte) bool {
		if strings.HasPrefix(string(body), "[") {
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}`)
			return true
		}
		return false
	})
	reqs := []*jsonrpc.Request{{Method: "eth_blockNumber"}, {Method: "eth_blockNumber"}}
	if err := client.BatchCall(context.Background(), reqs); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Err != nil || string(r.Result) != `"0x2a"` {
			t.Fatalf("%s, %v", r.Result, r.Err)
		}
	}
}

func TestClientContextCancel(t *testing.T) {
	client, _ := faultyNode(t, func(n int, w http.ResponseWriter, _ []byte) bool {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return true
	})
	client.MinBackoff, client.MaxBackoff, client.Attempts = time.Second, time.Second, 100
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var v string
	if err := client.Call(ctx, &v, "eth_blockNumber"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestClientErrorHidesURL(t *testing.T) {
	client := jsonrpc.NewClient("http://127.0.0.1:1/v2/secret-key-123")
	client.MinBackoff, client.MaxBackoff, client.Attempts = time.Millisecond, time.Millisecond, 2
	_, err := blockNumber(t, client)
	if err == nil || strings.Contains(err.Error(), "secret-key-123") {
		t.Fatalf("err = %v", err)
	}
}
