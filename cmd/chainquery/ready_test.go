package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestReadiness: with --ready-max-lag, serve's /readyz check fails while a
// followed chain's stored head is more than that many seconds of its block
// time behind the node's head, and before its follower has heard from the
// node.
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
	if readiness(db, []*follower{f}, 0) != nil {
		t.Error("--ready-max-lag 0 checks something")
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
