package evm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
)

const (
	oddA = "0x00000000000000000000000000000000000000a1"
	oddB = "0x00000000000000000000000000000000000000b2"
	oddC = "0x00000000000000000000000000000000000000c3"
)

// oddTraceBlock returns a block with n transactions oddHash(0..n-1).
func oddTraceBlock(t *testing.T, chain chainquery.Chain, n int) *chainquery.BlockData {
	var txs []string
	for i := range n {
		txs = append(txs, oddTx(i, ``))
	}
	d, err := evm.DecodeBlock(chain, oddBlock("", txs...))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// oddParity returns one Parity trace of transaction pos of oddBlock.
func oddParity(pos int, typ, action, result, extra string) string {
	if result == "" {
		result = "null"
	}
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"type":%q,"action":{%s},"result":%s,"blockNumber":16,"blockHash":%q,"transactionHash":%q,"transactionPosition":%d,"traceAddress":[],"subtraces":0%s}`,
		typ, action, result, oddBlockHash, oddHash(pos), pos, extra)
}

func TestDecodeParityTracesOdd(t *testing.T) {
	call := `"callType":"call","from":"` + oddA + `","to":"` + oddB + `","gas":"0x10","input":"0x01","value":"0x5"`
	for _, tc := range []struct {
		name   string
		traces []string
		check  func(t *testing.T, tr []*chainquery.Trace)
		want   string // error
	}{
		{name: "rewards and traces without transaction are skipped", traces: []string{
			oddParity(0, "call", call, `{"gasUsed":"0x8","output":"0x02"}`, ""),
			`{"type":"reward","action":{"author":"` + oddA + `","rewardType":"block","value":"0x1"},"result":null,"blockNumber":16,"transactionHash":null,"transactionPosition":null,"traceAddress":[],"subtraces":0}`,
			`{"type":"genesis","action":{"from":"` + oddA + `"},"result":null,"blockNumber":16,"traceAddress":[],"subtraces":0}`,
		}, check: func(t *testing.T, tr []*chainquery.Trace) {
			if len(tr) != 1 || tr[0].GasUsed != 8 || tr[0].Value.Int64() != 5 || chainquery.Hex(tr[0].Output) != "0x02" || tr[0].TransactionHash != tdHash(t, oddHash(0)) {
				t.Errorf("%d traces: %+v", len(tr), tr[0])
			}
		}},
		{name: "callcode is call, unknown call types are call", traces: []string{
			oddParity(0, "call", strings.Replace(call, `"call"`, `"callcode"`, 1), `{"gasUsed":"0x1","output":"0x"}`, ""),
			oddParity(1, "call", strings.Replace(call, `"call"`, `"somethingnew"`, 1), `{"gasUsed":"0x1","output":"0x"}`, ""),
		}, check: func(t *testing.T, tr []*chainquery.Trace) {
			for _, x := range tr {
				if x.Type != chainquery.TraceCall || x.CallType != chainquery.CallTypeCall {
					t.Errorf("%s/%s", x.Type, x.CallType)
				}
			}
		}},
		{name: "create2, failed create", traces: []string{
			oddParity(0, "create", `"from":"`+oddA+`","gas":"0x10","init":"0x6060","value":"0x0","creationMethod":"create2"`, `{"address":"`+oddC+`","code":"0x60","gasUsed":"0x9"}`, ""),
			oddParity(1, "create", `"from":"`+oddA+`","gas":"0x10","init":"0x6060","value":"0x0"`, "", `"error":"Out of gas"`),
		}, check: func(t *testing.T, tr []*chainquery.Trace) {
			if tr[0].Type != chainquery.TraceCreate || tr[0].CallType != chainquery.CallTypeCreate || tr[0].To == nil || *tr[0].To != tdAddr(t, oddC) ||
				chainquery.Hex(tr[0].Input) != "0x6060" || chainquery.Hex(tr[0].Output) != "0x60" || tr[0].GasUsed != 9 {
				t.Errorf("create2 %+v", tr[0])
			}
			if tr[1].To != nil || tr[1].GasUsed != 0 || tr[1].Error != "Out of gas" || len(tr[1].Output) != 0 {
				t.Errorf("failed create %+v", tr[1])
			}
		}},
		{name: "suicide", traces: []string{
			oddParity(0, "suicide", `"address":"`+oddB+`","refundAddress":"`+oddC+`","balance":"0x64"`, "", ""),
		}, check: func(t *testing.T, tr []*chainquery.Trace) {
			x := tr[0]
			if x.Type != chainquery.TraceSuicide || x.CallType != chainquery.CallTypeCall || x.From != tdAddr(t, oddB) || *x.To != tdAddr(t, oddC) ||
				x.Value.Int64() != 100 || x.Gas != 0 || x.GasUsed != 0 || len(x.Input) != 0 || len(x.Output) != 0 {
				t.Errorf("%+v", x)
			}
		}},
		{name: "flatCallTracer wrapping", traces: []string{
			`{"txHash":"` + oddHash(0) + `","result":[` + oddParity(0, "call", call, `{"gasUsed":"0x1","output":"0x"}`, "") + `]}`,
		}, check: func(t *testing.T, tr []*chainquery.Trace) {
			if len(tr) != 1 || tr[0].TransactionIndex != 0 {
				t.Errorf("%+v", tr)
			}
		}},
		{name: "a transaction the node failed to trace", traces: []string{`{"txHash":"` + oddHash(0) + `","error":"execution timeout"}`}, want: "execution timeout"},
		{name: "trace of another block", traces: []string{strings.Replace(oddParity(0, "call", call, "", ""), `"blockNumber":16`, `"blockNumber":17`, 1)}, want: "block 17"},
		{name: "trace of another block hash", traces: []string{strings.Replace(oddParity(0, "call", call, "", ""), oddBlockHash, oddParent, 1)}, want: "not 0x1111"},
		{name: "trace of a transaction not in the block", traces: []string{strings.Replace(oddParity(0, "call", call, "", ""), oddHash(0), oddHash(7), 1)}, want: "not in block"},
		{name: "trace at another position", traces: []string{strings.Replace(oddParity(0, "call", call, "", ""), `"transactionPosition":0`, `"transactionPosition":1`, 1)}, want: "position 1"},
		{name: "not a trace", traces: []string{`{"foo":1}`}, want: "not a trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := oddTraceBlock(t, chainquery.Ethereum, 2)
			err := evm.DecodeParityTraces(d, json.RawMessage("["+strings.Join(tc.traces, ",")+"]"))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one containing %q", err, tc.want)
				}
				if d.Traces != nil {
					t.Error("traces set despite the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d.Traces)
		})
	}
	t.Run("null answer", func(t *testing.T) {
		if err := evm.DecodeParityTraces(oddTraceBlock(t, chainquery.Ethereum, 1), json.RawMessage(`null`)); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestDecodeCallTracesOdd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		raw    string
		check  func(t *testing.T, tr []*chainquery.Trace)
		want   string
		chain  chainquery.Chain
		blockN int
	}{
		{name: "nested frames in pre-order with trace addresses and subtraces", raw: `[{"type":"CALL","from":"` + oddA + `","to":"` + oddB + `","gas":"0x100","gasUsed":"0x50","input":"0x","value":"0x1","calls":[
			{"type":"DELEGATECALL","from":"` + oddB + `","to":"` + oddC + `","gas":"0x80","gasUsed":"0x10","input":"0xaa","calls":[
				{"type":"SELFDESTRUCT"}]},
			{"type":"STATICCALL","from":"` + oddB + `","to":"` + oddC + `","gas":"0x20","gasUsed":"0x1","input":"0xbb","output":"0xcc"},
			{"type":"CREATE2","from":"` + oddB + `","to":"` + oddC + `","gas":"0x20","gasUsed":"0x20","input":"0x60","error":"out of gas"},
			{"type":"CALLCODE","from":"` + oddB + `","to":"` + oddC + `","gas":"0x20","gasUsed":"0x2","input":"0x","value":"0x0"},
			{"type":"SUICIDE","from":"` + oddB + `","to":"` + oddA + `","value":"0x9","gas":"0x5","gasUsed":"0x5","input":"0x11"},
			{"type":"INVALID","from":"` + oddB + `","to":"` + oddC + `","gas":"0x0","gasUsed":"0x0","input":"0x","value":"0x0"}]}]`,
			check: func(t *testing.T, tr []*chainquery.Trace) {
				want := []struct {
					addr, typ, callType string
					subtraces           int
				}{
					{"", "call", "call", 6}, {"0", "call", "delegatecall", 1}, {"0.0", "suicide", "call", 0}, {"1", "call", "staticcall", 0},
					{"2", "create", "create", 0}, {"3", "call", "call", 0}, {"4", "suicide", "call", 0}, {"5", "call", "call", 0},
				}
				if len(tr) != len(want) {
					t.Fatalf("%d traces", len(tr))
				}
				for i, w := range want {
					x := tr[i]
					if chainquery.FormatTraceAddress(x.TraceAddress) != w.addr || x.Type != w.typ || x.CallType != w.callType || x.Subtraces != w.subtraces {
						t.Errorf("trace %d: %s %s/%s %d, want %+v", i, chainquery.FormatTraceAddress(x.TraceAddress), x.Type, x.CallType, x.Subtraces, w)
					}
				}
				// The legacy SELFDESTRUCT under a DELEGATECALL destroys the
				// delegating contract (the DELEGATECALL's from).
				if tr[2].From != tdAddr(t, oddB) || tr[2].To != nil || tr[2].Value.Sign() != 0 {
					t.Errorf("selfdestruct %+v", tr[2])
				}
				if tr[1].Value.Sign() != 0 || chainquery.Hex(tr[3].Output) != "0xcc" {
					t.Errorf("delegatecall value %v, staticcall output %x", tr[1].Value, tr[3].Output)
				}
				if tr[4].To != nil || tr[4].GasUsed != 0x20 || tr[4].Error != "out of gas" {
					t.Errorf("failed create2 %+v", tr[4])
				}
				if x := tr[6]; x.From != tdAddr(t, oddB) || *x.To != tdAddr(t, oddA) || x.Value.Int64() != 9 || x.Gas != 0 || x.GasUsed != 0 || len(x.Input) != 0 {
					t.Errorf("suicide %+v", x)
				}
			}},
		{name: "legacy tracer: decimal and numeric gas, time, no value", raw: `[{"result":{"type":"CALL","from":"` + oddA + `","to":"` + oddB + `","gas":"30000","gasUsed":21000,"input":"0x","time":"1.2ms"}}]`,
			check: func(t *testing.T, tr []*chainquery.Trace) {
				if tr[0].Gas != 30000 || tr[0].GasUsed != 21000 || tr[0].Value.Sign() != 0 || len(tr[0].Output) != 0 {
					t.Errorf("%+v", tr[0])
				}
			}},
		{name: "txHash elements", raw: `[{"txHash":"` + oddHash(0) + `","result":{"type":"CREATE","from":"` + oddA + `","to":"` + oddC + `","gas":"0x1","gasUsed":"0x1","input":"0x60","output":"0x61"}}]`,
			check: func(t *testing.T, tr []*chainquery.Trace) {
				if tr[0].TransactionHash != tdHash(t, oddHash(0)) || *tr[0].To != tdAddr(t, oddC) || chainquery.Hex(tr[0].Output) != "0x61" {
					t.Errorf("%+v", tr[0])
				}
			}},
		{name: "polygon state-sync traced but not listed", chain: chainquery.Polygon, blockN: 1,
			raw: `[{"type":"CALL","from":"` + oddA + `","to":"` + oddB + `","gas":"0x1","gasUsed":"0x1","input":"0x"},{"txHash":"` + oddHash(1) + `","result":{"type":"CALL","from":"0x0000000000000000000000000000000000000000","to":"0x0000000000000000000000000000000000001001","gas":"0x0","gasUsed":"0x0","input":"0x"}}]`,
			check: func(t *testing.T, tr []*chainquery.Trace) {
				if len(tr) != 2 || tr[1].TransactionIndex != 1 {
					t.Errorf("%+v", tr)
				}
			}},
		{name: "more frames than transactions", raw: `[{"type":"CALL"},{"type":"CALL"},{"type":"CALL"}]`, want: "block has 2 transactions"},
		{name: "unknown txHash", raw: `[{"txHash":"` + oddHash(9) + `","result":{"type":"CALL"}}]`, want: "not in block"},
		{name: "a transaction the node failed to trace", raw: `[{"txHash":"` + oddHash(0) + `","error":"execution timeout"}]`, want: "execution timeout"},
		{name: "not a frame", raw: `[{"foo":1}]`, want: "not a frame"},
		{name: "not an array", raw: `{"type":"CALL"}`, want: "want an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chain, n := tc.chain, tc.blockN
			if chain == "" {
				chain, n = chainquery.Ethereum, 2
			}
			d := oddTraceBlock(t, chain, n)
			err := evm.DecodeCallTraces(d, json.RawMessage(tc.raw))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d.Traces)
		})
	}
}

// TestFinishStatus checks the pre-Byzantium rule: the top-level trace
// decides, on Ethereum before block 4,370,000 only.
func TestFinishStatus(t *testing.T) {
	for _, tc := range []struct {
		chain  chainquery.Chain
		number uint64
		want   bool
	}{
		{chainquery.Ethereum, 4_369_999, false},
		{chainquery.Ethereum, 4_370_000, true},
		{chainquery.Polygon, 100, true},
	} {
		d := &chainquery.BlockData{Block: &chainquery.Block{Chain: tc.chain, Number: tc.number}}
		d.Transactions = []*chainquery.Transaction{{Index: 0, Status: true}, {Index: 1, Status: true}}
		d.Traces = []*chainquery.Trace{
			{TransactionIndex: 0, TraceAddress: []int{}, Error: "Out of gas"},
			{TransactionIndex: 1, TraceAddress: []int{}},
			{TransactionIndex: 1, TraceAddress: []int{0}, Error: "Reverted"}, // an inner failure does not fail the transaction
		}
		evm.FinishStatus(d)
		if d.Transactions[0].Status != tc.want || !d.Transactions[1].Status {
			t.Errorf("%s %d: status %v %v", tc.chain, tc.number, d.Transactions[0].Status, d.Transactions[1].Status)
		}
	}
}

// A callTracer answer whose calls hold a null is an error, not a panic.
func TestCallTracesNullCall(t *testing.T) {
	d := &chainquery.BlockData{Block: &chainquery.Block{Number: 1}}
	raw := []byte(`[{"txHash":"0x` + strings.Repeat("ab", 32) + `","result":{"type":"CALL","from":"0x` + strings.Repeat("11", 20) + `","to":"0x` + strings.Repeat("22", 20) + `","value":"0x0","gas":"0x1","gasUsed":"0x1","input":"0x","calls":[null]}}]`)
	if err := evm.DecodeCallTraces(d, raw); err == nil {
		t.Fatal("a null call was decoded")
	}
}
