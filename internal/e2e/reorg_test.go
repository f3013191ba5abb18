package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/ingest"
)

// follow starts the ingester in follow mode; the returned function stops it
// and returns its error.
func (s *stack) follow() func() error {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	plan, err := evm.Probe(ctx, s.rpc, evm.TracesAuto)
	if err != nil {
		s.t.Fatal(err)
	}
	e := &ingest.EVMLoop{Chain: chainquery.Polygon, Store: s.db, Source: evm.NewFetcher(s.rpc, chainquery.Polygon, plan, nil),
		From: new(uint64), Follow: true, BatchBlocks: 2, Concurrency: 2, PollInterval: 5 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	return func() error { cancel(); return <-done }
}

// waitSynced waits until the store holds the node's head block, by hash.
func (s *stack) waitSynced() uint64 {
	s.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		head := s.head()
		want := m(s.node("eth_getBlockByNumber", hexNum(head), false))["hash"].(string)
		if h, err := s.db.BlockHash(ctx, chainquery.Polygon, head); err == nil && h.Hex() == want {
			if latest, err := s.db.LatestBlock(ctx, chainquery.Polygon); err == nil && latest == head {
				return head
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("the ingester did not catch up with the node head %d", s.head())
	return 0
}

func (s *stack) version(n uint64) json.Number {
	return s.get("GET", fmt.Sprintf("/api/v1/customer/polygon/block?block_number=%d", n), nil, 200)["version"].(json.Number)
}

// TestFollowReorg reorganizes anvil under a following ingester with
// anvil_reorg and checks that the API then answers with the node's new chain,
// with versions bumped on the rewritten heights only.
func TestFollowReorg(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	stop := s.follow()
	for i := 0; i < 4; i++ {
		if _, err := s.traffic.Round(ctx); err != nil {
			t.Fatal(err)
		}
	}
	head := s.waitSynced()
	oldHashes := map[uint64]string{}
	for n := head - 2; n <= head; n++ {
		oldHashes[n] = s.get("GET", fmt.Sprintf("/api/v1/customer/polygon/block?block_number=%d", n), nil, 200)["block_hash"].(string)
		if v := s.version(n); v != "0" {
			t.Fatalf("block %d version %s before the reorg", n, v)
		}
	}

	// Replace the last 3 blocks with blocks holding other transactions.
	tx := map[string]any{"from": s.traffic.Accounts[1], "to": s.traffic.Accounts[0], "value": "0x1234"}
	if err := s.rpc.Call(ctx, new(json.RawMessage), "anvil_reorg", 3, []any{[]any{tx, 0}, []any{tx, 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.traffic.Round(ctx); err != nil { // the chain goes on above the reorg
		t.Fatal(err)
	}
	newHead := s.waitSynced()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if newHead != head+1 {
		t.Fatalf("head after the reorg %d, want %d", newHead, head+1)
	}
	for n := head - 2; n <= head; n++ {
		b := s.get("GET", fmt.Sprintf("/api/v1/customer/polygon/block?block_number=%d", n), nil, 200)
		if b["block_hash"] == oldHashes[n] {
			t.Fatalf("block %d still has its pre-reorg hash", n)
		}
		if v := s.version(n); v != "1" {
			t.Errorf("block %d version %s after the reorg, want 1", n, v)
		}
	}
	for _, n := range []uint64{head - 3, head + 1} {
		if v := s.version(n); v != "0" {
			t.Errorf("block %d version %s, want 0 (not rewritten)", n, v)
		}
	}
	// Every answer of the API matches the node's new chain.
	for n := uint64(0); n <= newHead; n++ {
		s.compareBlock(n)
	}
	// Traces of rewritten blocks carry the new version.
	page := s.get("POST", "/api/v1/customer/polygon/traces/filter?limit=50",
		map[string]any{"from_block": head - 2, "to_block": head}, 200)
	if len(list(page["result"])) < 2 {
		t.Fatalf("%d traces in the rewritten blocks, want the 2 reorg transactions' at least", len(list(page["result"])))
	}
	for _, tr := range list(page["result"]) {
		if m(tr)["version"] != json.Number("1") {
			t.Fatalf("trace %v of a rewritten block has version %v", m(tr)["trace_address"], m(tr)["version"])
		}
	}
}
