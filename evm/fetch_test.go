package evm_test

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/jsonrpc"
)

// TestFetchAnvil probes a real anvil node and fetches a block of varied
// transactions through both trace paths anvil answers.
func TestFetchAnvil(t *testing.T) {
	ctx := context.Background()
	node, err := devchain.StartAnvil(ctx, 137)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	rpc := jsonrpc.NewClient(node.URL)
	traffic, err := devchain.Deploy(ctx, rpc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := traffic.Round(ctx); err != nil {
		t.Fatal(err)
	}
	plan, err := evm.Probe(ctx, rpc, evm.TracesAuto)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.BlockReceipts || plan.Traces != evm.TracesParity {
		t.Fatalf("plan = %+v, want eth_getBlockReceipts and trace_block", plan)
	}
	f := evm.NewFetcher(rpc, chainquery.Polygon, plan, nil)
	head, err := f.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := f.Blocks(ctx, 0, head)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != int(head+1) {
		t.Fatalf("%d blocks, want %d", len(blocks), head+1)
	}
	last := blocks[len(blocks)-1]
	if len(last.Transactions) != 6 || len(last.Logs) == 0 || len(last.Traces) <= len(last.Transactions) {
		t.Fatalf("traffic block: %d txs, %d logs, %d traces", len(last.Transactions), len(last.Logs), len(last.Traces))
	}
	h, err := f.BlockHash(ctx, head)
	if err != nil || h != last.Block.Hash {
		t.Fatalf("BlockHash = %s, %v; block hash %s", h, err, last.Block.Hash)
	}

	// The same block through the callTracer path gives the same rows but
	// for the differences anvil's two tracers really have (docs/ingestion.md).
	f.Plan.Traces = evm.TracesCallTracer
	again, err := f.Blocks(ctx, head, head)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(again[0].Traces), len(last.Traces); got != want {
		t.Fatalf("callTracer path: %d traces, trace_block path: %d", got, want)
	}
}
