package jsonrpc_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery/jsonrpc"
)

// ids returns the ids of the calls in a request body, in order.
func ids(body []byte) []string {
	var rs []struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &rs) != nil {
		var r struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(body, &r)
		return []string{string(r.ID)}
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.ID)
	}
	return out
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	w.Close()
	return b.Bytes()
}

// batchAnswer is a correct answer to every call of body, as a batch.
func batchAnswer(body []byte) string {
	var parts []string
	for _, id := range ids(body) {
		parts = append(parts, `{"jsonrpc":"2.0","id":`+id+`,"result":"0x2a"}`)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TestClientFaults sends a batch of two calls to a node that misbehaves once
// in each way a node, proxy or load balancer has been seen to: every fault
// is asked again and the calls end with the node's answers. Before these
// were handled, an empty batch answer panicked the client.
func TestClientFaults(t *testing.T) {
	once := func(f func(w http.ResponseWriter, body []byte)) func(int, http.ResponseWriter, []byte) bool {
		return func(n int, w http.ResponseWriter, body []byte) bool {
			if n == 1 {
				f(w, body)
				return true
			}
			return false
		}
	}
	for _, c := range []struct {
		name  string
		fault func(n int, w http.ResponseWriter, body []byte) bool
	}{
		{"EmptyBatch", once(func(w http.ResponseWriter, _ []byte) { io.WriteString(w, `[]`) })},
		{"ShortBatch", once(func(w http.ResponseWriter, body []byte) {
			io.WriteString(w, `[{"jsonrpc":"2.0","id":`+ids(body)[1]+`,"result":"0x2a"}]`)
		})},
		{"MissingIDs", once(func(w http.ResponseWriter, _ []byte) {
			io.WriteString(w, `[{"jsonrpc":"2.0","result":"0x1"},{"jsonrpc":"2.0","result":"0x1"}]`)
		})},
		{"DuplicatedID", once(func(w http.ResponseWriter, body []byte) {
			id := ids(body)[0]
			io.WriteString(w, `[{"jsonrpc":"2.0","id":`+id+`,"result":"0x1"},{"jsonrpc":"2.0","id":`+id+`,"result":"0x1"}]`)
		})},
		{"MistypedIDs", once(func(w http.ResponseWriter, body []byte) {
			io.WriteString(w, `[{"jsonrpc":"2.0","id":"`+ids(body)[0]+`","result":"0x1"},{"jsonrpc":"2.0","id":[`+ids(body)[1]+`],"result":"0x1"}]`)
		})},
		{"ForeignID", once(func(w http.ResponseWriter, body []byte) {
			io.WriteString(w, `[{"jsonrpc":"2.0","id":`+ids(body)[0]+`,"result":"0x1"},{"jsonrpc":"2.0","id":999999,"result":"0x1"}]`)
		})},
		{"TooManyAnswers", once(func(w http.ResponseWriter, body []byte) {
			a := batchAnswer(body)
			io.WriteString(w, a[:len(a)-1]+`,`+a[1:])
		})},
		{"ErrorInBatch", once(func(w http.ResponseWriter, body []byte) {
			io.WriteString(w, `[{"jsonrpc":"2.0","id":`+ids(body)[0]+`,"error":{"code":-32603,"message":"internal error"}},{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"upstream timeout"}}]`)
		})},
		{"ObjectForBatch", once(func(w http.ResponseWriter, body []byte) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+ids(body)[0]+`,"result":"0x1"}`)
		})},
		{"NoResultNoError", once(func(w http.ResponseWriter, body []byte) {
			io.WriteString(w, `[{"jsonrpc":"2.0","id":`+ids(body)[0]+`},{"jsonrpc":"2.0","id":`+ids(body)[1]+`,"result":"0x2a"}]`)
		})},
		{"HTML200", once(func(w http.ResponseWriter, _ []byte) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><body>502 Bad Gateway</body></html>`)
		})},
		{"HTML502", once(func(w http.ResponseWriter, _ []byte) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, `<html><body>502 Bad Gateway</body></html>`)
		})},
		{"NotJSON", once(func(w http.ResponseWriter, _ []byte) { io.WriteString(w, "upstream connect error") })},
		{"EmptyBody", once(func(w http.ResponseWriter, _ []byte) {})},
		{"Truncated", once(func(w http.ResponseWriter, body []byte) {
			a := batchAnswer(body)
			io.WriteString(w, a[:len(a)/2])
		})},
		{"GzipEncoded", func(n int, w http.ResponseWriter, body []byte) bool {
			// Not a fault but a node's right: net/http asked for gzip.
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz(batchAnswer(body)))
			return true
		}},
		{"GzipUnannounced", func(n int, w http.ResponseWriter, body []byte) bool {
			w.Write(gz(batchAnswer(body)))
			return true
		}},
		{"GzipCorrupt", once(func(w http.ResponseWriter, body []byte) {
			b := gz(batchAnswer(body))
			w.Write(b[:len(b)-12])
		})},
		{"TooLarge", once(func(w http.ResponseWriter, _ []byte) {
			// 3 MB of an array that never ends, past the test's 1 MB limit.
			io.WriteString(w, "[")
			chunk := strings.Repeat(`{"jsonrpc":"2.0","id":1,"result":"0x2a"},`, 1000)
			for i := 0; i < 75; i++ {
				io.WriteString(w, chunk)
			}
		})},
		{"TooLargeAnnounced", once(func(w http.ResponseWriter, _ []byte) {
			w.Header().Set("Content-Length", "100000000")
			io.WriteString(w, "[")
		})},
		{"Drip", once(func(w http.ResponseWriter, body []byte) {
			a := batchAnswer(body)
			for i := 0; i < len(a); i++ {
				w.Write([]byte{a[i]})
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
		})},
		{"ResetMidBody", once(func(w http.ResponseWriter, body []byte) {
			a := batchAnswer(body)
			w.Header().Set("Content-Length", fmt.Sprint(len(a)))
			io.WriteString(w, a[:len(a)/2])
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
				conn.Close()
			}
		})},
		{"WrongResultType", once(func(w http.ResponseWriter, body []byte) {
			io.WriteString(w, `[{"jsonrpc":"2.0","id":`+ids(body)[0]+`,"result":{"a":1}},{"jsonrpc":"2.0","id":`+ids(body)[1]+`,"result":"0x2a"}]`)
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, calls := faultyNode(t, c.fault)
			client.Timeout = 500 * time.Millisecond
			client.MaxResponse = 1 << 20
			var got [2]string
			reqs := []*jsonrpc.Request{{Method: "eth_blockNumber"}, {Method: "eth_blockNumber"}}
			if err := client.BatchCall(context.Background(), reqs); err != nil {
				t.Fatal(err)
			}
			for i, r := range reqs {
				if r.Err != nil {
					t.Fatalf("call %d: %v", i, r.Err)
				}
				if err := json.Unmarshal(r.Result, &got[i]); err != nil {
					// A result of the wrong type is the reader's to find;
					// Call, which decodes, asks again.
					if c.name != "WrongResultType" {
						t.Fatalf("call %d: %s: %v", i, r.Result, err)
					}
				}
			}
			if c.name == "WrongResultType" {
				client2, _ := faultyNode(t, func(n int, w http.ResponseWriter, body []byte) bool {
					if n == 1 {
						io.WriteString(w, `{"jsonrpc":"2.0","id":`+ids(body)[0]+`,"result":{"a":1}}`)
						return true
					}
					return false
				})
				if v, err := blockNumber(t, client2); err != nil || v != "0x2a" {
					t.Fatalf("Call after a mistyped result: %q, %v", v, err)
				}
				return
			}
			if got != [2]string{"0x2a", "0x2a"} {
				t.Fatalf("results %q", got)
			}
			if !strings.HasPrefix(c.name, "Gzip") || c.name == "GzipCorrupt" {
				if calls.Load() < 2 {
					t.Fatalf("%d requests: the fault was not asked again", calls.Load())
				}
			}
		})
	}
}

// TestClientFaultMessages checks that a fault that persists ends in an error
// naming the fault, not a panic or a bare syntax error. The method is left
// to the caller, which names it with the block or node it was about.
func TestClientFaultMessages(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"EmptyBatch", `[]`, []string{"malformed answer: an empty batch answer to 2 calls"}},
		{"HTML", `<html>oops</html>`, []string{"malformed answer: ", "<html>oops</html> (batch of 2 calls)"}},
		{"ForeignID", `[{"jsonrpc":"2.0","id":7777777,"result":"0x1"}]`, []string{"malformed answer: ", "id 7777777"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, _ := faultyNode(t, func(_ int, w http.ResponseWriter, _ []byte) bool {
				io.WriteString(w, c.body)
				return true
			})
			reqs := []*jsonrpc.Request{{Method: "eth_blockNumber"}, {Method: "eth_blockNumber"}}
			if err := client.BatchCall(context.Background(), reqs); err != nil {
				t.Fatal(err)
			}
			err := reqs[0].Err
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "eth_blockNumber") {
				t.Errorf("error %q names the method, which its caller names", err)
			}
		})
	}
}

// TestClientTooLargeShrinksBatches: a batch whose answer is over the limit
// is sent again in smaller batches, which fit.
func TestClientTooLargeShrinksBatches(t *testing.T) {
	var sizes []int
	client, _ := faultyNode(t, func(_ int, w http.ResponseWriter, body []byte) bool {
		n := len(ids(body))
		sizes = append(sizes, n)
		if n > 2 {
			io.WriteString(w, "["+strings.Repeat(" ", 2000))
			return true
		}
		return false
	})
	client.MaxResponse = 1000
	var reqs []*jsonrpc.Request
	for i := 0; i < 8; i++ {
		reqs = append(reqs, &jsonrpc.Request{Method: "eth_blockNumber"})
	}
	if err := client.BatchCall(context.Background(), reqs); err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		if r.Err != nil {
			t.Fatalf("call %d: %v (batch sizes %v)", i, r.Err, sizes)
		}
	}
	if sizes[0] != 8 || sizes[len(sizes)-1] > 2 {
		t.Fatalf("batch sizes %v: want 8 first, then at most 2", sizes)
	}
}
