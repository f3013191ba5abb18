package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/internal/gethdev"
	"github.com/chainquery/chainquery/jsonrpc"
)

// nodeDiff is a difference between anvil's trace_block row and geth's
// callTracer row of one frame that the two node families really have (here:
// anvil 1.7.1 and go-ethereum 1.17.10 on Prague). holds checks the pair
// against the exact rule, so a near miss is still a failure.
type nodeDiff struct {
	name  string
	field string
	holds func(parity, geth *chainquery.Trace, tx *chainquery.Transaction) bool
}

var anvilGethDiffs = []nodeDiff{
	errorText("Reverted", "execution reverted"),
	errorText("Out of gas", "out of gas"),
	// geth names the out of gas of the code deposit after a creation's
	// init code ran; anvil does not tell it apart.
	errorText("Out of gas", "contract creation code storage out of gas"),
	{
		name:  "top-level gas: anvil gives the gas limit minus the intrinsic gas, geth the gas limit",
		field: "Gas",
		holds: func(p, g *chainquery.Trace, tx *chainquery.Transaction) bool {
			return len(p.TraceAddress) == 0 && g.Gas == tx.GasLimit && p.Gas+intrinsicGas(tx) == tx.GasLimit
		},
	},
	{
		// So gas_refund (gas - gas_used) is the same on both.
		name:  "top-level gas_used: anvil leaves out the intrinsic gas, geth gives the receipt's gasUsed",
		field: "GasUsed",
		holds: func(p, g *chainquery.Trace, tx *chainquery.Transaction) bool {
			return len(p.TraceAddress) == 0 && g.GasUsed == tx.GasUsed && p.GasUsed+intrinsicGas(tx) == tx.GasUsed
		},
	},
	{
		// Parity answers "result": null for a frame that failed other than
		// by a revert, so no gas used is known (stored as 0); geth counts
		// all the frame's gas as used. gas_refund differs with it.
		name:  "gas_used of a frame that failed other than by a revert: anvil 0, geth all its gas",
		field: "GasUsed",
		holds: func(p, g *chainquery.Trace, _ *chainquery.Transaction) bool {
			return p.Error != "" && p.Error != "Reverted" && p.GasUsed == 0 && g.Gas > 0 && g.GasUsed == g.Gas
		},
	},
}

// errorText is the difference of wording of one error between the nodes.
func errorText(anvil, geth string) nodeDiff {
	return nodeDiff{
		name:  fmt.Sprintf("error text: anvil says %q, geth %q", anvil, geth),
		field: "Error",
		holds: func(p, g *chainquery.Trace, _ *chainquery.Transaction) bool {
			return p.Error == anvil && g.Error == geth
		},
	}
}

// intrinsicGas is what a transaction pays before its first opcode, for the
// transactions gethdev.Traffic sends on Prague (no access list, no
// authorizations, gas used above the EIP-7623 calldata floor): the base
// cost, calldata, and for a creation its cost and the init code words.
func intrinsicGas(tx *chainquery.Transaction) uint64 {
	gas := uint64(21000)
	for _, b := range tx.Input {
		if b == 0 {
			gas += 4
		} else {
			gas += 16
		}
	}
	if tx.To == nil {
		gas += 32000 + 2*uint64((len(tx.Input)+31)/32)
	}
	return gas
}

// TestGethCallTracerMatchesParity sends the very same signed transactions
// (devchain's rounds, with every kind of trace and log, and a round of
// out-of-gas failures) to anvil and to an in-process go-ethereum node,
// fetches both chains, anvil's traces with trace_block and geth's with
// debug_traceBlockByHash and the callTracer, and compares the rows:
// transactions and logs must be equal, block headers equal but for what
// each node makes its own, and traces equal except for anvilGethDiffs, each
// of which must be seen, so that the list stays exactly what the nodes do.
func TestGethCallTracerMatchesParity(t *testing.T) {
	ctx := context.Background()
	arpc, grpc, head := startTwins(t)

	// auto must find each node's own trace method.
	aplan, err := evm.Probe(ctx, arpc, evm.TracesAuto)
	if err != nil {
		t.Fatal(err)
	}
	gplan, err := evm.Probe(ctx, grpc, evm.TracesAuto)
	if err != nil {
		t.Fatal(err)
	}
	if aplan.Traces != evm.TracesParity || gplan.Traces != evm.TracesCallTracer || !aplan.BlockReceipts || !gplan.BlockReceipts {
		t.Fatalf("plans: anvil %+v, geth %+v", aplan, gplan)
	}
	ablocks, err := evm.NewFetcher(arpc, chainquery.Polygon, aplan, nil).Blocks(ctx, 1, head)
	if err != nil {
		t.Fatal(err)
	}
	gblocks, err := evm.NewFetcher(grpc, chainquery.Polygon, gplan, nil).Blocks(ctx, 1, head)
	if err != nil {
		t.Fatal(err)
	}

	seen := map[string]int{}
	rows := 0
	for i := range ablocks {
		a, g := ablocks[i], gblocks[i]
		blk := fmt.Sprintf("block %d", a.Block.Number)
		// Each node's own: its genesis state (geth: the system contracts
		// and two accounts; anvil: ten accounts), so the state root and the
		// hashes; geth writes its version into extraData, so the size.
		// Transactions are compared below.
		compareRows(t, blk+" header", []*chainquery.Block{a.Block}, []*chainquery.Block{g.Block},
			"Hash", "ParentHash", "StateRoot", "ExtraData", "Size", "Transactions")
		compareRows(t, blk+" transaction", a.Transactions, g.Transactions)
		compareRows(t, blk+" log", a.Logs, g.Logs)
		if len(a.Traces) != len(g.Traces) {
			t.Errorf("%s: %d trace_block rows, %d callTracer rows", blk, len(a.Traces), len(g.Traces))
			continue
		}
		for j, p := range a.Traces {
			c := g.Traces[j]
			rows++
			where := fmt.Sprintf("%s tx %d trace %q", blk, p.TransactionIndex, chainquery.FormatTraceAddress(p.TraceAddress))
			tx := a.Transactions[p.TransactionIndex]
			for _, f := range fieldDiffs(p, c) {
				i := slices.IndexFunc(anvilGethDiffs, func(d nodeDiff) bool { return d.field == f && d.holds(p, c, tx) })
				if i < 0 {
					t.Errorf("%s %s: trace_block %s, callTracer %s", where, f, field(p, f), field(c, f))
					continue
				}
				seen[anvilGethDiffs[i].name]++
			}
		}
	}
	for _, d := range anvilGethDiffs {
		if seen[d.name] == 0 {
			t.Errorf("node difference never seen, remove it from the list: %s", d.name)
		}
		t.Logf("%d of %d trace rows: %s", seen[d.name], rows, d.name)
	}
	// Each round alone has 14 frames (nested: 9, the other five
	// transactions: 1 each).
	if rows < 3*14 {
		t.Errorf("only %d trace rows compared", rows)
	}
}

// startTwins starts anvil and a gethdev node, sends both the same signed
// transactions (gethdev.Traffic: the deployments, three rounds, a starved
// round) so that both chains hold them in the same blocks, and returns
// clients of both and the last block.
func startTwins(t *testing.T) (anvilRPC, gethRPC *jsonrpc.Client, head uint64) {
	t.Helper()
	ctx := context.Background()
	// --no-mining: a round's transactions wait for evm_mine and share one
	// block, as on geth, whose blocks are sealed on demand. Base fee: geth's
	// first block lowers the genesis base fee (1 gwei) by 1/8, the genesis
	// block being empty, where anvil's keeps it; starting anvil at geth's
	// first value gives both chains the same base fees, so the same gas
	// prices.
	anvil, err := devchain.StartAnvil(ctx, 137, "--no-mining", "--hardfork", gethdev.Hardfork, "--block-base-fee-per-gas", "875000000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { anvil.Close() })
	geth, err := gethdev.Start(137)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { geth.Close() })
	arpc, grpc := jsonrpc.NewClient(anvil.URL), jsonrpc.NewClient(geth.URL)

	var accounts []string
	if err := arpc.Call(ctx, &accounts, "eth_accounts"); err != nil {
		t.Fatal(err)
	}
	if len(accounts) < 2 || !strings.EqualFold(accounts[0], gethdev.Address(0).Hex()) || !strings.EqualFold(accounts[1], gethdev.Address(1).Hex()) {
		t.Fatalf("anvil's accounts %v are not those of gethdev.DevKeys", accounts)
	}
	// geth goes first at every step, and anvil seals its block with the
	// timestamp of geth's block at the same height (geth takes the clock
	// and adds a second per block; anvil would reuse a second), so the rows
	// that carry the block's time are equal too.
	gt, err := gethdev.Deploy(ctx, grpc, 137, func(context.Context) error { _, err := geth.Seal(); return err })
	if err != nil {
		t.Fatal(err)
	}
	gt.Sent = geth.Settle
	at, err := gethdev.Deploy(ctx, arpc, 137, func(ctx context.Context) error {
		var head string
		if err := arpc.Call(ctx, &head, "eth_blockNumber"); err != nil {
			return err
		}
		var next struct{ Timestamp string }
		if err := grpc.Call(ctx, &next, "eth_getBlockByNumber", hexNum(nodeInt(head).Uint64()+1), false); err != nil {
			return err
		}
		if err := arpc.Call(ctx, new(json.RawMessage), "anvil_setNextBlockTimestamp", next.Timestamp); err != nil {
			return err
		}
		return arpc.Call(ctx, new(json.RawMessage), "evm_mine")
	})
	if err != nil {
		t.Fatal(err)
	}
	if at.Driver != gt.Driver || at.Lib != gt.Lib {
		t.Fatalf("contracts at different addresses: anvil %s %s, geth %s %s", at.Driver, at.Lib, gt.Driver, gt.Lib)
	}
	for i := 0; i < 4; i++ {
		round := (*gethdev.Traffic).Round
		if i == 3 {
			round = (*gethdev.Traffic).StarvedRound
		}
		rg, err := round(gt, ctx)
		if err != nil {
			t.Fatal(err)
		}
		ra, err := round(at, ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ra.Block != rg.Block || !slices.Equal(ra.Hashes, rg.Hashes) {
			t.Fatalf("round %d: anvil block %d %v, geth block %d %v", i, ra.Block, ra.Hashes, rg.Block, rg.Hashes)
		}
		head = rg.Block
	}
	return arpc, grpc, head
}

// compareRows compares two lists of rows of one type field by field, but
// for the fields named in skip.
func compareRows[T any](t *testing.T, what string, a, b []*T, skip ...string) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d from anvil, %d from geth", what, len(a), len(b))
		return
	}
	for i := range a {
		for _, f := range fieldDiffs(a[i], b[i]) {
			if slices.Contains(skip, f) {
				continue
			}
			t.Errorf("%s %d %s: anvil %s, geth %s", what, i, f, field(a[i], f), field(b[i], f))
		}
	}
}

// fieldDiffs names the fields in which two structs of one type differ.
func fieldDiffs(a, b any) []string {
	va := reflect.ValueOf(a).Elem()
	var out []string
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		if field(a, name) != field(b, name) {
			out = append(out, name)
		}
	}
	return out
}

// field renders one field of a struct pointer for comparison and messages:
// bytes in hex, pointers by what they point to.
func field(v any, name string) string {
	f := reflect.ValueOf(v).Elem().FieldByName(name)
	if b, ok := f.Interface().([]byte); ok {
		return fmt.Sprintf("0x%x", b)
	}
	if f.Kind() == reflect.Pointer && f.IsNil() {
		return "nil"
	}
	return fmt.Sprint(f.Interface())
}
