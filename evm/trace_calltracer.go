package evm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chainquery/chainquery"
)

// callFrame is one frame of geth's callTracer (native, or the legacy
// JavaScript tracer whose output also has "time" and may give gas in
// decimal). Arbitrum adds beforeEVMTransfers/afterEVMTransfers and
// revertReason comes with some errors; both are ignored.
type callFrame struct {
	Type    string          `json:"type"`
	From    addrField       `json:"from"`
	To      addrField       `json:"to"`
	Value   quantField      `json:"value"`
	Gas     quantField      `json:"gas"`
	GasUsed quantField      `json:"gasUsed"`
	Input   json.RawMessage `json:"input"`
	Output  json.RawMessage `json:"output"`
	Error   string          `json:"error"`
	Calls   []*callFrame    `json:"calls"`
}

// callElement is one element of a debug_traceBlock* result: a bare frame
// (older geth and Bor), {"result": frame} or {"txHash", "result": frame}
// (newer geth), or {"txHash", "error"} for a transaction the node failed to
// trace.
type callElement struct {
	Type   *string         `json:"type"`
	TxHash json.RawMessage `json:"txHash"`
	Result *callFrame      `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// DecodeCallTraces converts a debug_traceBlockByNumber/ByHash result made
// with {"tracer": "callTracer"} (geth, Bor) into d.Traces, replacing what was
// there. Each frame tree is flattened depth-first pre-order with
// trace_address and subtraces as trace_block gives them, and types mapped as
// the API says (docs/api.md, Filter Traces): CALLCODE is call, CREATE2 is create, SELFDESTRUCT
// (SUICIDE in old tracers) is suicide with call_type call, from the
// destroyed contract to the beneficiary with the balance as value.
//
// Elements without txHash are matched to d's transactions by position, so
// DecodeBlock must have filled d first; with txHash they must name d's
// transactions. A transaction the node failed to trace is an error. On
// error d is unchanged.
func DecodeCallTraces(d *chainquery.BlockData, raw json.RawMessage) error {
	return decodeCallTracesWithNotes(d, raw, nil)
}

func decodeCallTracesWithNotes(d *chainquery.BlockData, raw json.RawMessage, notes *decodeNotes) error {
	if d == nil || d.Block == nil {
		return fmt.Errorf("evm: DecodeCallTraces: no block")
	}
	x := newTraceTxIndex(d)
	var out []*chainquery.Trace
	var sl *traceSlab
	add := func(i int, frame *callFrame, txHash json.RawMessage) error {
		hash, hasHash, err := fieldHash(txHash)
		if err != nil {
			return fmt.Errorf("evm: block %d: callTracer element %d: txHash: %w", d.Block.Number, i, err)
		}
		hash, idx, err := x.resolve(hash, hasHash, i)
		if err != nil {
			return fmt.Errorf("evm: block %d: callTracer: %w", d.Block.Number, err)
		}
		if hasNilFrame(frame) {
			return fmt.Errorf("evm: block %d: callTracer element %d: a call that is null, not a frame", d.Block.Number, i)
		}
		f := &frameFlattener{block: d.Block, hash: hash, index: idx, notes: notes, out: out, slab: sl}
		f.flatten(frame, []int{}, chainquery.Address{}, false)
		out = f.out
		return nil
	}
	sc := getScratch()
	defer sc.release()
	if frames, txHashes, ok := fastCallTraces(raw, sc); ok {
		sl = newCallSlab(frames)
		if n := cap(sl.traces); n > 0 {
			out = make([]*chainquery.Trace, 0, n)
		}
		for i, frame := range frames {
			if err := add(i, frame, txHashes[i]); err != nil {
				return err
			}
		}
		d.Traces = out
		return nil
	}

	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return fmt.Errorf("evm: block %d: callTracer: want an array: %w", d.Block.Number, err)
	}
	if elems == nil {
		return fmt.Errorf("evm: block %d: callTracer answered null", d.Block.Number)
	}
	for i, el := range elems {
		var ce callElement
		if err := json.Unmarshal(el, &ce); err != nil {
			return fmt.Errorf("evm: block %d: callTracer element %d: %w", d.Block.Number, i, err)
		}
		frame := ce.Result
		switch {
		case ce.Type != nil: // a bare frame
			frame = new(callFrame)
			if err := json.Unmarshal(el, frame); err != nil {
				return fmt.Errorf("evm: block %d: callTracer element %d: %w", d.Block.Number, i, err)
			}
		case frame == nil && present(ce.Error):
			return fmt.Errorf("evm: block %d: the node could not trace transaction %d (%s): %s", d.Block.Number, i, ce.TxHash, ce.Error)
		case frame == nil:
			return fmt.Errorf("evm: block %d: callTracer element %d is not a frame: %.80s", d.Block.Number, i, el)
		}
		sl = newCallSlab([]*callFrame{frame}) // the frames come one element at a time here
		if err := add(i, frame, ce.TxHash); err != nil {
			return err
		}
	}
	d.Traces = out
	return nil
}

// newCallSlab sizes the slab of the traces of frame trees: one trace, to
// address and value per frame, and room for their trace addresses (as
// long as their depth), input and output.
func newCallSlab(frames []*callFrame) *traceSlab {
	var n, ints, data int
	var count func(f *callFrame, depth int)
	count = func(f *callFrame, depth int) {
		if f == nil {
			return // not a frame: flatten's to deal with
		}
		n++
		ints += depth
		data += hexBytes(f.Input) + hexBytes(f.Output)
		for _, c := range f.Calls {
			count(c, depth+1)
		}
	}
	for _, f := range frames {
		count(f, 0)
	}
	return newTraceSlab(n, data, ints)
}

// hasNilFrame reports whether the tree of f holds a null call ("calls":
// [null]), which flatten cannot read.
func hasNilFrame(f *callFrame) bool {
	if f == nil {
		return true
	}
	for _, c := range f.Calls {
		if hasNilFrame(c) {
			return true
		}
	}
	return false
}

// frameFlattener turns the frame tree of one transaction into trace rows.
type frameFlattener struct {
	block *chainquery.Block
	hash  chainquery.Hash
	index int
	notes *decodeNotes
	out   []*chainquery.Trace
	slab  *traceSlab // where the rows and their values come from
}

// flatten appends f and its subtree in depth-first pre-order. self, when
// known, is the account whose code ran the parent frame: the contract a
// SELFDESTRUCT child destroys when the tracer leaves its from empty (the
// legacy JS tracer did).
func (ff *frameFlattener) flatten(f *callFrame, addr []int, self chainquery.Address, knowSelf bool) {
	r := fieldReader{notes: ff.notes, record: func() string { return fmt.Sprintf("frame %s/%s", ff.hash, chainquery.FormatTraceAddress(addr)) }, slab: ff.slab.slab}
	t := ff.slab.newTrace()
	*t = chainquery.Trace{
		BlockNumber:      ff.block.Number,
		TransactionHash:  ff.hash,
		TransactionIndex: ff.index,
		TraceAddress:     addr,
		Subtraces:        len(f.Calls),
		Error:            f.Error,
		From:             r.addressOrZeroOf("from", f.From),
		To:               r.addressOf("to", f.To),
		Value:            r.bigOf("value", f.Value),
		Gas:              r.uintOf("gas", f.Gas),
		GasUsed:          r.uintOf("gasUsed", f.GasUsed),
		Input:            r.bytes("input", f.Input),
		Output:           r.bytes("output", f.Output),
	}
	t.Type, t.CallType = callTypeOf(f.Type)
	if t.Type == chainquery.TraceSuicide && !f.From.present() && knowSelf {
		t.From = self
	}
	finishTrace(t, ff.slab.slab)
	ff.out = append(ff.out, t)

	// The account whose code runs in this frame: the callee, except for
	// DELEGATECALL and CALLCODE, which run the callee's code as the caller.
	// A value, not a pointer to one: that was an allocation per frame.
	var runner chainquery.Address
	knowRunner := t.To != nil
	if knowRunner {
		runner = *t.To
	}
	switch strings.ToUpper(f.Type) {
	case "DELEGATECALL", "CALLCODE":
		runner, knowRunner = t.From, true
	}
	for i, c := range f.Calls {
		child := ff.slab.takeInts(len(addr) + 1)
		copy(child, addr)
		child[len(addr)] = i
		ff.flatten(c, child, runner, knowRunner)
	}
}
