package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/jsonrpc"
)

// chain is a real anvil node (chain id 137, polygon) with the test contracts
// deployed, for the commands that ingest.
type chain struct {
	node    *devchain.Anvil
	rpc     *jsonrpc.Client
	traffic *devchain.Traffic
}

func startChain(t *testing.T) *chain {
	t.Helper()
	ctx := context.Background()
	node, err := devchain.StartAnvil(ctx, 137)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	c := &chain{node: node, rpc: jsonrpc.NewClient(node.URL)}
	if c.traffic, err = devchain.Deploy(ctx, c.rpc); err != nil {
		t.Fatal(err)
	}
	return c
}

// rounds sends n rounds of transactions and returns the node's head.
func (c *chain) rounds(t *testing.T, n int) uint64 {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := c.traffic.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return c.head(t)
}

func (c *chain) head(t *testing.T) uint64 {
	t.Helper()
	var head string
	if err := c.rpc.Call(context.Background(), &head, "eth_blockNumber"); err != nil {
		t.Fatal(err)
	}
	var n uint64
	fmt.Sscanf(head, "0x%x", &n)
	return n
}

// running is a long-running command (serve, dev) started on its own
// goroutine, with its output collected.
type running struct {
	m              *Main
	cancel         context.CancelFunc
	done           chan struct{} // closed when Run has returned, with err
	err            error
	stdout, stderr *syncBuffer
}

// start parses args and runs the command until stop is called; it waits
// until the command listens.
func start(t *testing.T, env map[string]string, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{m: NewMain(), cancel: cancel, done: make(chan struct{}), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	r.m.Stdout, r.m.Stderr = r.stdout, r.stderr
	r.m.Getenv = func(k string) string { return env[k] }
	if err := r.m.ParseFlags(ctx, args); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { r.err = r.m.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
		}
		r.m.Close()
	})
	select {
	case <-r.m.Listening():
	case <-r.done:
		t.Fatalf("%s ended before listening: %v\n%s", args[0], r.err, r.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen within 30s\n%s", args[0], r.stderr)
	}
	return r
}

// stop cancels the command, as SIGINT does, and checks that it ends cleanly.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		if r.err != nil {
			t.Fatalf("Run after cancel: %v\n%s", r.err, r.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("Run did not return within 15s of the cancel\n%s", r.stderr)
	}
	if err := r.m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func (r *running) base() string { return "http://" + r.m.Addr().String() }

// call makes a request and returns the status and the decoded JSON body.
func call(t *testing.T, method, url, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("apikey", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s %s: status %d, body is not JSON: %v", method, url, resp.StatusCode, err)
	}
	return resp.StatusCode, v
}

// latest returns the block number Get Latest Block answers, or -1 for 404.
func latest(t *testing.T, base, chain, key string) int64 {
	t.Helper()
	status, body := call(t, "GET", base+"/api/v1/customer/"+chain+"/blocks/latest", key, nil)
	switch status {
	case http.StatusNotFound:
		return -1
	case http.StatusOK:
		var n int64
		fmt.Sscan(fmt.Sprint(body["block_number"]), &n)
		return n
	}
	t.Fatalf("Get Latest Block: status %d: %v", status, body)
	return 0
}

// waitLatest polls Get Latest Block until it answers want.
func waitLatest(t *testing.T, base, chain, key string, want uint64, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	got := int64(-1)
	for time.Now().Before(deadline) {
		if got = latest(t, base, chain, key); got == int64(want) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("Get Latest Block answers %d after 15s, want %d\n%s", got, want, logs)
}

func count(t *testing.T, body map[string]any) int64 {
	t.Helper()
	n, err := body["count"].(json.Number).Int64()
	if err != nil {
		t.Fatalf("count %v: %v", body["count"], err)
	}
	return n
}

func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}
