package evm_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
)

// tdBlockOfParity returns a BlockData for a Parity-format trace file whose
// block is not in the data: the block number and the transactions named by
// the traces (one block per file).
func tdBlockOfParity(t *testing.T, chain chainquery.Chain, raw json.RawMessage) *chainquery.BlockData {
	t.Helper()
	var traces []struct {
		BlockNumber         uint64          `json:"blockNumber"`
		TransactionHash     *string         `json:"transactionHash"`
		TransactionPosition *int            `json:"transactionPosition"`
		Result              json.RawMessage `json:"result"` // flatCallTracer wraps traces here
	}
	if err := json.Unmarshal(raw, &traces); err != nil {
		t.Fatal(err)
	}
	b := &chainquery.Block{Chain: chain}
	for _, tr := range traces {
		if tr.BlockNumber != 0 {
			b.Number = tr.BlockNumber
		}
		if len(tr.Result) > 0 && tr.Result[0] == '[' {
			return tdBlockOfParity(t, chain, tr.Result) // all traces of a file are of one block
		}
	}
	return &chainquery.BlockData{Block: b}
}

// tdCheckTraces checks the invariants every decoded trace list must meet:
// types within the allowed sets, per transaction exactly one top-level
// trace and a consistent tree (via CheckComplete's rules, reproduced here
// for blocks whose transactions are not all known), and rows already in the
// API's order: by transaction, then depth-first pre-order.
func tdCheckTraces(t *testing.T, traces []*chainquery.Trace) {
	t.Helper()
	if len(traces) == 0 {
		t.Fatal("no traces")
	}
	types := map[string][]string{
		chainquery.TraceCall:    {chainquery.CallTypeCall, chainquery.CallTypeDelegateCall, chainquery.CallTypeStaticCall},
		chainquery.TraceCreate:  {chainquery.CallTypeCreate},
		chainquery.TraceSuicide: {chainquery.CallTypeCall},
	}
	byTx := map[int][]*chainquery.Trace{}
	var order []int
	for _, tr := range traces {
		if !slices.Contains(types[tr.Type], tr.CallType) {
			t.Errorf("tx %d trace %v: type %q call type %q", tr.TransactionIndex, tr.TraceAddress, tr.Type, tr.CallType)
		}
		if tr.Input == nil || tr.Output == nil || tr.Value == nil || tr.TraceAddress == nil {
			t.Errorf("tx %d trace %v: nil field", tr.TransactionIndex, tr.TraceAddress)
		}
		if tr.Type == chainquery.TraceSuicide && (tr.Gas != 0 || tr.GasUsed != 0 || len(tr.Input) != 0 || len(tr.Output) != 0) {
			t.Errorf("suicide %+v", tr)
		}
		if tr.Type == chainquery.TraceCreate && tr.Error != "" && tr.To != nil {
			t.Errorf("failed create with address %s", tr.To)
		}
		if len(byTx[tr.TransactionIndex]) == 0 {
			order = append(order, tr.TransactionIndex)
		}
		byTx[tr.TransactionIndex] = append(byTx[tr.TransactionIndex], tr)
	}
	if !slices.IsSorted(order) {
		t.Errorf("transactions out of order: %v", order)
	}
	for tx, list := range byTx {
		d := &chainquery.BlockData{Block: &chainquery.Block{Number: list[0].BlockNumber, TransactionCount: 1}}
		d.Transactions = []*chainquery.Transaction{{Hash: list[0].TransactionHash, EffectiveGasPrice: new(big.Int)}}
		for _, tr := range list {
			c := *tr
			c.TransactionIndex = 0
			d.Traces = append(d.Traces, &c)
			if tr.TransactionHash != list[0].TransactionHash {
				t.Errorf("tx %d: traces of two hashes", tx)
			}
		}
		if err := evm.CheckComplete(d, true); err != nil {
			t.Errorf("tx %d: %v", tx, err)
		}
		if !slices.IsSortedFunc(list, func(a, b *chainquery.Trace) int {
			return chainquery.CompareTraceAddress(a.TraceAddress, b.TraceAddress)
		}) {
			t.Errorf("tx %d: traces not in depth-first pre-order", tx)
		}
	}
}

// TestTraceFixtures decodes every trace file and checks the invariants.
func TestTraceFixtures(t *testing.T) {
	parity := append(tdGlob(t, "*/trace_*.json"), tdGlob(t, "*/arbtrace_parity__*.json")...)
	// geth's flatCallTracer answers in Parity format, wrapped per transaction.
	parity = append(parity, tdGlob(t, "*/debug_traceBlockByNumber_flatCallTracer__*.json")...)
	for _, name := range parity {
		t.Run(filepath.Base(name), func(t *testing.T) {
			raw := tdResult(t, name)
			d := tdBlockOfParity(t, tdChain(name), raw)
			if err := evm.DecodeParityTraces(d, raw); err != nil {
				t.Fatal(err)
			}
			tdCheckTraces(t, d.Traces)
		})
	}
	var calls []string
	for _, p := range []string{"*/debug_traceBlock*_callTracer__*.json", "*/debug_traceTransaction_callTracer__*.json"} {
		calls = append(calls, tdGlob(t, p)...)
	}
	for _, name := range calls {
		t.Run(filepath.Base(name), func(t *testing.T) {
			raw := tdArray(t, name)
			elems := tdElems(t, name)
			// Frames without txHash are placed by position: give the block
			// as many made-up transactions as there are frames.
			d := &chainquery.BlockData{Block: &chainquery.Block{Chain: tdChain(name)}}
			if !bytes.Contains(elems[0], []byte(`"txHash"`)) {
				for i := range elems {
					d.Transactions = append(d.Transactions, &chainquery.Transaction{Hash: tdHash(t, oddHash(i)), Index: i})
				}
			}
			if err := evm.DecodeCallTraces(d, raw); err != nil {
				t.Fatal(err)
			}
			tdCheckTraces(t, d.Traces)
			tops := 0
			for _, tr := range d.Traces {
				if len(tr.TraceAddress) == 0 {
					tops++
				}
			}
			if tops != len(elems) {
				t.Errorf("%d top-level traces for %d frames", tops, len(elems))
			}
		})
	}
}

// traceKey identifies a trace row across the two decoders.
type traceKey struct {
	tx   int
	addr string
}

// allowedDiff is a difference between the trace_block row and the
// callTracer row of one frame that the two node families really have; each
// is listed in docs/ingestion.md ("Parity vs callTracer differences").
type allowedDiff struct {
	name   string
	fields []string
	// applies reports whether the difference may occur for this pair; kind
	// is the callTracer frame type, frame its raw fields.
	applies func(p, c *chainquery.Trace, kind string, frame map[string]json.RawMessage) bool
}

var allowedDiffs = []allowedDiff{
	{
		name:   "CALLCODE: Parity gives the calling contract as to and no output; geth the code's address and the output",
		fields: []string{"To", "Output"},
		applies: func(p, c *chainquery.Trace, kind string, _ map[string]json.RawMessage) bool {
			return kind == "CALLCODE"
		},
	},
	{
		name:   "error text: Parity/OpenEthereum capitalises (\"Out of gas\") and Erigon says \"Reverted\" where geth says \"execution reverted\"",
		fields: []string{"Error"},
		applies: func(p, c *chainquery.Trace, _ string, _ map[string]json.RawMessage) bool {
			return p.Error != "" && c.Error != "" && normalError(p.Error) == normalError(c.Error)
		},
	},
	{
		name:   "legacy JS callTracer SELFDESTRUCT frames carry no fields: no beneficiary (to) and no balance (value)",
		fields: []string{"To", "Value"},
		applies: func(p, c *chainquery.Trace, kind string, frame map[string]json.RawMessage) bool {
			_, hasTo := frame["to"]
			return kind == "SELFDESTRUCT" && !hasTo && c.To == nil && c.Value.Sign() == 0
		},
	},
}

// normalError maps the error texts of both node families to one wording.
func normalError(s string) string {
	s = strings.ToLower(s)
	if s == "reverted" {
		return "execution reverted"
	}
	return s
}

// rawFrames maps each frame of a callTracer result to its type and raw
// fields, keyed like the decoded rows.
func rawFrames(t *testing.T, raw json.RawMessage) map[traceKey]map[string]json.RawMessage {
	var elems []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		t.Fatal(err)
	}
	out := map[traceKey]map[string]json.RawMessage{}
	var walk func(tx int, addr []int, f map[string]json.RawMessage)
	walk = func(tx int, addr []int, f map[string]json.RawMessage) {
		out[traceKey{tx, chainquery.FormatTraceAddress(addr)}] = f
		var calls []map[string]json.RawMessage
		_ = json.Unmarshal(f["calls"], &calls)
		for i, c := range calls {
			walk(tx, append(slices.Clone(addr), i), c)
		}
	}
	for i, el := range elems {
		if res, ok := el["result"]; ok {
			el = nil
			if err := json.Unmarshal(res, &el); err != nil {
				t.Fatal(err)
			}
		}
		walk(i, nil, el)
	}
	return out
}

// TestParityVsCallTracer decodes the blocks that have both trace_block and
// callTracer output and compares the rows field by field. Every difference
// must be one of allowedDiffs, and every allowed difference must occur, so
// that the list stays exactly what the data shows.
func TestParityVsCallTracer(t *testing.T) {
	used := map[string]bool{}
	for _, n := range []int{1000000, 1000690, 1000895, 1011973} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			praw := tdResult(t, fmt.Sprintf("ethereum/trace_block__%d__ethereum-etl.json", n))
			craw := tdResult(t, fmt.Sprintf("ethereum/debug_traceBlockByNumber_callTracer__%d__ethereum-etl.json", n))
			// The block's transactions as the Parity traces name them (only
			// block 1000000 has its block file; the traces name all of them).
			pd := tdBlockOfParity(t, chainquery.Ethereum, praw)
			if err := evm.DecodeParityTraces(pd, praw); err != nil {
				t.Fatal(err)
			}
			cd := &chainquery.BlockData{Block: pd.Block}
			for _, tr := range pd.Traces {
				if len(tr.TraceAddress) == 0 {
					cd.Transactions = append(cd.Transactions, &chainquery.Transaction{Hash: tr.TransactionHash, Index: tr.TransactionIndex})
				}
			}
			if err := evm.DecodeCallTraces(cd, craw); err != nil {
				t.Fatal(err)
			}
			frames := rawFrames(t, craw)
			crow := map[traceKey]*chainquery.Trace{}
			for _, c := range cd.Traces {
				crow[traceKey{c.TransactionIndex, chainquery.FormatTraceAddress(c.TraceAddress)}] = c
			}
			if len(pd.Traces) != len(cd.Traces) {
				t.Errorf("%d Parity rows, %d callTracer rows", len(pd.Traces), len(cd.Traces))
			}
			for _, p := range pd.Traces {
				k := traceKey{p.TransactionIndex, chainquery.FormatTraceAddress(p.TraceAddress)}
				c := crow[k]
				if c == nil {
					t.Errorf("%v: no callTracer row", k)
					continue
				}
				var kind string
				_ = json.Unmarshal(frames[k]["type"], &kind)
				for _, f := range traceDiffs(p, c) {
					ok := false
					for _, a := range allowedDiffs {
						if slices.Contains(a.fields, f) && a.applies(p, c, kind, frames[k]) {
							ok, used[a.name] = true, true
							t.Logf("%v %s: allowed (%s): Parity %s, callTracer %s", k, f, a.name, fieldString(p, f), fieldString(c, f))
						}
					}
					if !ok {
						t.Errorf("%v %s: Parity %s, callTracer %s", k, f, fieldString(p, f), fieldString(c, f))
					}
				}
			}
		})
	}
	for _, a := range allowedDiffs {
		if !used[a.name] {
			t.Errorf("allowed difference never seen, remove it from the list: %s", a.name)
		}
	}
}

// traceDiffs names the fields in which two rows of one frame differ.
func traceDiffs(a, b *chainquery.Trace) []string {
	var out []string
	for _, f := range []string{"TransactionHash", "Type", "CallType", "From", "To", "Gas", "GasUsed", "Value", "Subtraces", "Input", "Output", "Error"} {
		if fieldString(a, f) != fieldString(b, f) {
			out = append(out, f)
		}
	}
	return out
}

// fieldString renders one field of a trace for comparison and messages.
func fieldString(t *chainquery.Trace, field string) string {
	switch field {
	case "TransactionHash":
		return t.TransactionHash.Hex()
	case "Type":
		return t.Type
	case "CallType":
		return t.CallType
	case "From":
		return t.From.Hex()
	case "To":
		if t.To == nil {
			return "nil"
		}
		return t.To.Hex()
	case "Gas":
		return fmt.Sprint(t.Gas)
	case "GasUsed":
		return fmt.Sprint(t.GasUsed)
	case "Value":
		return chainquery.BigString(t.Value)
	case "Subtraces":
		return fmt.Sprint(t.Subtraces)
	case "Input":
		return chainquery.Hex(t.Input)
	case "Output":
		return chainquery.Hex(t.Output)
	case "Error":
		return fmt.Sprintf("%q", t.Error)
	}
	panic(field)
}
