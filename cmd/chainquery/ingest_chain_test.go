package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// hashAt returns the hash of the node's block n.
func (c *chain) hashAt(t *testing.T, n uint64) string {
	t.Helper()
	var b struct {
		Hash string `json:"hash"`
	}
	if err := c.rpc.Call(context.Background(), &b, "eth_getBlockByNumber", fmt.Sprintf("0x%x", n), false); err != nil {
		t.Fatal(err)
	}
	return b.Hash
}

// mineTo mines empty blocks until the node's head is n.
func (c *chain) mineTo(t *testing.T, n uint64) {
	t.Helper()
	if h := c.head(t); h < n {
		if err := c.rpc.Call(context.Background(), new(json.RawMessage), "anvil_mine", fmt.Sprintf("0x%x", n-h)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIngestEVM_OtherChain fills a database from chain A, then points it at
// chain B: the same chain id (137) and the same height, other hashes. The
// ingester must refuse, naming both hashes and what to do; before the check
// it resumed "after the stored head", fetched nothing, exited 0, and the API
// went on serving blocks B never had. A reorg of A inside the reorg depth
// while the ingester was stopped is rewound at the next start.
func TestIngestEVM_OtherChain(t *testing.T) {
	a := startChain(t)
	// anvil's genesis block carries its start time: a node started in a
	// later second has another genesis, so B shares no block with A.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	b := startChain(t)
	if a.hashAt(t, 0) == b.hashAt(t, 0) {
		t.Fatal("the two anvil nodes have the same genesis block")
	}
	head := max(a.rounds(t, 2), b.rounds(t, 2))
	a.mineTo(t, head)
	b.mineTo(t, head)

	db := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "all"))
	ingest := func(c *chain) result {
		return execute(t, nil, "ingest", "evm", "--db", db, "--chain", "polygon", "--rpc", c.node.URL,
			"--to", fmt.Sprint(head), "--confirmations", "0")
	}
	if r := ingest(a); r.code != 0 {
		t.Fatalf("ingest A: exit code %d\n%s", r.code, r.stderr)
	}

	r := ingest(b)
	r.wantFailure(t, 1, fmt.Sprintf("chainquery: ingest polygon: the stored chain is not the node's: block %d is %s in the database and %s on the node",
		head, a.hashAt(t, head), b.hashAt(t, head)))
	contains(t, "the error", r.stderr, "Use a fresh database", "--rewind-to N")
	api := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0")
	status, body := call(t, "GET", fmt.Sprintf("%s/api/v1/customer/polygon/block?block_number=%d", api.base(), head), key, nil)
	if status != 200 || body["block_hash"] != a.hashAt(t, head) {
		t.Errorf("after the refusal block %d is %v (status %d), want A's %s", head, body["block_hash"], status, a.hashAt(t, head))
	}
	api.stop(t)

	t.Run("ReorgWhileStopped", func(t *testing.T) {
		before := a.hashAt(t, head)
		if err := a.rpc.Call(context.Background(), new(json.RawMessage), "anvil_reorg", 3, []any{}); err != nil {
			t.Fatal(err)
		}
		if a.head(t) != head || a.hashAt(t, head) == before {
			t.Fatalf("anvil_reorg left head %d with hash %s", a.head(t), a.hashAt(t, head))
		}
		r := ingest(a)
		if r.code != 0 {
			t.Fatalf("ingest A after its reorg: exit code %d\n%s", r.code, r.stderr)
		}
		contains(t, "the log", r.stderr, "reorg: replaced stored blocks")
		api := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0")
		defer api.stop(t)
		for n := head - 3; n <= head; n++ {
			_, body := call(t, "GET", fmt.Sprintf("%s/api/v1/customer/polygon/block?block_number=%d", api.base(), n), key, nil)
			if body["block_hash"] != a.hashAt(t, n) {
				t.Errorf("block %d is %v, the node's is %s", n, body["block_hash"], a.hashAt(t, n))
			}
		}
	})
}
