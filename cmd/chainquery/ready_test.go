package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestReadiness: serve's /readyz check fails while a followed chain has no
// stored block, saying why (the node unheard of, the follower's last error).
// With --ready-max-lag, it also fails while a followed chain's stored head is
// more than that many seconds of its block time behind the node's head, and
// before its follower has heard from the node.
func TestReadiness(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var blocks []*chainquery.BlockData
	for n := uint64(1); n <= 150; n++ { // a block every 2 s
		blocks = append(blocks, &chainquery.BlockData{Block: &chainquery.Block{Chain: chainquery.Polygon, Number: n, Timestamp: 1_740_000_000 + 2*int64(n)}})
	}
	if err := db.WriteBlocks(ctx, chainquery.Polygon, blocks); err != nil {
		t.Fatal(err)
	}
	f := &follower{settings: newChainSettings(chainquery.Polygon, "http://127.0.0.1:1")}
	if readiness(db, nil, 0) != nil {
		t.Error("readiness checks something without followers")
	}
	// Without --ready-max-lag, blocks stored are enough, even before the
	// node answered.
	if err := readiness(db, []*follower{f}, 0)(ctx); err != nil {
		t.Errorf("polygon has blocks, --ready-max-lag 0: %v", err)
	}
	// A followed chain with no block: not ready, and the detail says why.
	b := &follower{settings: newChainSettings(chainquery.Base, "http://127.0.0.1:1")}
	noBlock := readiness(db, []*follower{f, b}, 0)
	if err := noBlock(ctx); err == nil || err.Error() != "base: no block stored yet (the follower has not heard from its node yet)" {
		t.Errorf("base without blocks, before any error: %v", err)
	}
	b.lastErr.Store(&cqhttp.FollowError{Text: "ingest base: eth_chainId from http://127.0.0.1:1: connection refused", Time: time.Now()})
	if err := noBlock(ctx); err == nil || err.Error() != "base: no block stored yet (the follower has not heard from its node yet); "+
		"last error (0s ago): ingest base: eth_chainId from http://127.0.0.1:1: connection refused" {
		t.Errorf("base without blocks, after an error: %v", err)
	}
	pb := &ingest.Progress{Chain: "base"}
	b.progress.Store(pb)
	pb.SetHead(7, 7)
	if err := noBlock(ctx); err == nil || !strings.HasPrefix(err.Error(), "base: no block stored yet (node head 7); last error") {
		t.Errorf("base without blocks, node heard: %v", err)
	}
	check := readiness(db, []*follower{f}, 30)
	if err := check(ctx); err == nil || !strings.Contains(err.Error(), "not heard from its node") {
		t.Errorf("before the node answered: %v", err)
	}
	p := &ingest.Progress{Chain: "polygon"}
	f.progress.Store(p)
	p.SetHead(160, 160) // 10 blocks, 20 s behind
	if err := check(ctx); err != nil {
		t.Errorf("20 s behind with --ready-max-lag 30: %v", err)
	}
	if err := readiness(db, []*follower{f}, 10)(ctx); err == nil || err.Error() != "polygon is 20 s behind its node (head 160; --ready-max-lag 10)" {
		t.Errorf("20 s behind with --ready-max-lag 10: %v", err)
	}

	// The flag, the config file's ready_max_lag, and a negative value.
	config := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(config, []byte(`{"ready_max_lag": 90, "chains": [{"chain": "polygon", "rpc": "http://127.0.0.1:1"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want int
	}{{nil, 90}, {[]string{"--ready-max-lag", "30"}, 30}} {
		m := NewMain()
		m.Getenv = func(string) string { return "" }
		if err := m.ParseFlags(ctx, append([]string{"serve", "--db", "sqlite:" + filepath.Join(t.TempDir(), "x.db"), "--config", config}, tt.args...)); err != nil {
			t.Fatal(err)
		}
		if got := m.cmd.(*serveCmd).readyMaxLag; got != tt.want {
			t.Errorf("%v: ready max lag %d, want %d", tt.args, got, tt.want)
		}
	}
	execute(t, nil, "serve", "--ready-max-lag", "-1").wantFailure(t, 2, "--ready-max-lag must be a number of seconds")
}

// TestServeFollowerNoNode runs serve --config with a follower whose node is
// not there (a closed port): /readyz answers 503 naming the chain, that it
// has no block and the follower's error, and the status says that following
// has not started and why, until a block of the chain is stored.
func TestServeFollowerNoNode(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rpc := "http://" + ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "n.db")
	db := "sqlite:" + path
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "get_block"))
	config := filepath.Join(dir, "c.json")
	writeFile(t, config, `{"chains": [{"chain": "polygon", "rpc": "`+rpc+`"}]}`)
	api := start(t, nil, "serve", "--config", config, "--db", db, "--listen", "127.0.0.1:0")

	// Not ready from the start; once the node has refused the follower, the
	// detail carries the error.
	const noBlock = "polygon: no block stored yet (the follower has not heard from its node yet)"
	var detail string
	for deadline := time.Now().Add(30 * time.Second); ; {
		status, body := call(t, "GET", api.base()+"/readyz", "", nil)
		detail = fmt.Sprint(body["detail"])
		if status != http.StatusServiceUnavailable || !strings.HasPrefix(detail, noBlock) {
			t.Fatalf("/readyz: %d %v, want 503 %q", status, body, noBlock)
		}
		if strings.Contains(detail, "last error") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz has no follower error after 30 s: %q\n%s", detail, api.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("/readyz: 503 %q", detail)
	contains(t, "/readyz's detail", detail, "; last error (", "ingest polygon: eth_chainId from "+rpc, "connection refused")

	status, body := call(t, "GET", api.base()+"/api/v1/customer/status", key, nil)
	chains, _ := body["chains"].([]any)
	if status != http.StatusOK || len(chains) != 1 {
		t.Fatalf("status: %d %v, want polygon alone", status, body)
	}
	p := chains[0].(map[string]any)
	for field, want := range map[string]any{"chain": "polygon", "followed": true, "first_block": nil, "last_block": nil,
		"node_head": nil, "follow_state": "not_started"} {
		if p[field] != want {
			t.Errorf("polygon's %s is %v, want %v: %v", field, p[field], want, p)
		}
	}
	if e, _ := p["follow_error"].(string); !strings.Contains(e, "connection refused") {
		t.Errorf("follow_error %v, want the node's refusal", p["follow_error"])
	}
	if at, _ := p["follow_error_time"].(string); at == "" {
		t.Errorf("follow_error_time %v, want when it failed", p["follow_error_time"])
	}

	// A block stored (here by another writer of the database): ready, while
	// the follower itself has still not started.
	w, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WriteBlocks(context.Background(), chainquery.Polygon, []*chainquery.BlockData{
		{Block: &chainquery.Block{Chain: chainquery.Polygon, Number: 5, Timestamp: 1_740_000_000}}}); err != nil {
		t.Fatal(err)
	}
	if status, body := call(t, "GET", api.base()+"/readyz", "", nil); status != http.StatusOK || body["status"] != "ready" {
		t.Errorf("/readyz with polygon's block stored: %d %v", status, body)
	}
	_, body = call(t, "GET", api.base()+"/api/v1/customer/status", key, nil)
	p = body["chains"].([]any)[0].(map[string]any)
	if fmt.Sprint(p["last_block"]) != "5" || p["follow_state"] != "not_started" || p["follow_error"] == nil {
		t.Errorf("status with a block stored: %v", p)
	}
	api.stop(t)
}
