package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlite"
)

// TestServeConfirmations: serve lets the API cache answers about blocks
// deeper than each chain's confirmations: the default (polygon 128), or the
// follower's in --config.
func TestServeConfirmations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []*chainquery.BlockData
	for n := uint64(1); n <= 150; n++ {
		blocks = append(blocks, &chainquery.BlockData{Block: &chainquery.Block{Chain: chainquery.Polygon, Number: n, Timestamp: 1_740_000_000 + 2*int64(n)}})
	}
	if err := db.WriteBlocks(ctx, chainquery.Polygon, blocks); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dsn := "sqlite:" + path
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", dsn, "--name", "k", "--endpoints", "all"))
	config := filepath.Join(t.TempDir(), "c.json")
	// A follower of a node that is not there: it retries in the background.
	if err := os.WriteFile(config, []byte(`{"chains": [{"chain": "polygon", "rpc": "http://127.0.0.1:1", "confirmations": 10}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		deep uint64 // the deepest block cached: 150 - confirmations
	}{
		{[]string{"serve", "--db", dsn, "--listen", "127.0.0.1:0"}, 150 - 128},
		{[]string{"serve", "--db", dsn, "--listen", "127.0.0.1:0", "--config", config}, 150 - 10},
	} {
		t.Run(fmt.Sprint(tt.deep), func(t *testing.T) {
			r := start(t, nil, tt.args...)
			defer r.stop(t)
			for _, n := range []uint64{tt.deep, tt.deep + 1} {
				req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/customer/polygon/block?block_number=%d", r.base(), n), nil)
				req.Header.Set("apikey", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				tag, cc := resp.Header.Get("ETag"), resp.Header.Get("Cache-Control")
				if cached := tag != "" && cc == "max-age=3600"; resp.StatusCode != http.StatusOK || cached != (n == tt.deep) {
					t.Errorf("block %d: status %d, ETag %q, Cache-Control %q; want cached %v", n, resp.StatusCode, tag, cc, n == tt.deep)
				}
			}
		})
	}
}
