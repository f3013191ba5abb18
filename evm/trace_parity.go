package evm

import (
	"encoding/json"
	"fmt"

	"github.com/chainquery/chainquery"
)

// parityTrace is one element of a trace_block result (Parity/OpenEthereum
// format, as Erigon, Nethermind, Reth and anvil answer it).
type parityTrace struct {
	Type   string        `json:"type"`
	Action *parityAction `json:"action"` // nil on the per-transaction wrappers of flatCallTracer
	// Result is a parityResult on a trace (null for errored frames and
	// suicides), and the array of traces on a flatCallTracer wrapper.
	Result              json.RawMessage `json:"result"`
	Error               json.RawMessage `json:"error"`
	TxHash              json.RawMessage `json:"txHash"` // flatCallTracer wrapper
	TraceAddress        []int           `json:"traceAddress"`
	Subtraces           int             `json:"subtraces"`
	TransactionHash     json.RawMessage `json:"transactionHash"`
	TransactionPosition json.RawMessage `json:"transactionPosition"`
	BlockNumber         json.RawMessage `json:"blockNumber"`
	BlockHash           json.RawMessage `json:"blockHash"`

	// Set by the fast path (decode_fast.go) when it decoded Result too:
	// result when it is an object, inner when it is an array.
	result   *parityResult
	inner    []parityTrace
	hasInner bool
}

// parityAction is the action of a trace.
type parityAction struct {
	CallType      string     `json:"callType"`
	From          addrField  `json:"from"`
	To            addrField  `json:"to"`
	Value         quantField `json:"value"`
	Gas           quantField `json:"gas"`
	Input         hexField   `json:"input"`
	Init          hexField   `json:"init"`          // create
	Address       addrField  `json:"address"`       // suicide: the destroyed contract
	RefundAddress addrField  `json:"refundAddress"` // suicide: the beneficiary
	Balance       quantField `json:"balance"`       // suicide: the balance sent
}

// parityResult is the result of a trace.
type parityResult struct {
	GasUsed quantField `json:"gasUsed"`
	Output  hexField   `json:"output"`
	Address addrField  `json:"address"` // create: the new contract
	Code    hexField   `json:"code"`    // create: the deployed code
}

// DecodeParityTraces converts a trace_block result into d.Traces, replacing
// what was there. It also reads the output of geth's flatCallTracer
// (debug_traceBlockByNumber with {"tracer": "flatCallTracer"}), whose
// elements wrap the same Parity-format traces per transaction.
//
// Block-reward traces and any other trace without a transaction are not
// served, so they are skipped. Types and call types follow the API (docs/api.md, Filter Traces).
// When d holds transactions, every trace must name one of them at its
// index, and every trace must name d's block; otherwise (traces of another
// fork, or a truncated answer) it is an error and d is unchanged.
func DecodeParityTraces(d *chainquery.BlockData, raw json.RawMessage) error {
	return decodeParityTracesWithNotes(d, raw, nil)
}

func decodeParityTracesWithNotes(d *chainquery.BlockData, raw json.RawMessage, notes *decodeNotes) error {
	if d == nil || d.Block == nil {
		return fmt.Errorf("evm: DecodeParityTraces: no block")
	}
	// Each element is parsed once, into parityTrace, and converted as soon
	// as it is read, while its bytes are in the cache: converted after the
	// whole answer was read, every field the conversion read again (a
	// presence test, a hash) was a cache miss into a megabyte of text
	// (docs/benchmarks.md, issue 30, session 32). The slab grows in chunks,
	// since the answer's sizes are not known before it is read.
	x := newTraceTxIndex(d)
	c := parityConverter{x: x, notes: notes, sl: growingParitySlab(len(raw))}
	mark := notes.len()
	sc := getScratch()
	null, ok := fastParityEach(raw, sc, c.element)
	sc.release()
	if !ok {
		// The scanner gave up (a malformed answer, or one it does not
		// read): encoding/json reads it, or says why not, and what was
		// converted meanwhile is dropped.
		notes.truncate(mark)
		var elems []parityTrace
		if err := json.Unmarshal(raw, &elems); err != nil {
			return fmt.Errorf("evm: block %d: trace_block: want an array: %w", d.Block.Number, err)
		}
		null = elems == nil
		c = parityConverter{x: x, notes: notes, sl: growingParitySlab(len(raw))}
		for i := range elems {
			c.element(i, &elems[i])
		}
	}
	if null {
		return fmt.Errorf("evm: block %d: trace_block answered null", d.Block.Number)
	}
	if c.err != nil {
		return fmt.Errorf("evm: block %d: trace_block: %w", d.Block.Number, c.err)
	}
	d.Traces = c.out
	return nil
}

// parityConverter converts the elements of a trace_block answer, in
// order, into traces of sl; after an error it converts nothing more.
type parityConverter struct {
	x     *traceTxIndex
	notes *decodeNotes
	sl    *traceSlab
	out   []*chainquery.Trace // nil while there is no trace, as DecodeParityTraces always left it
	err   error
}

// element converts the i-th element of the answer (or of a wrapper's list).
func (c *parityConverter) element(i int, el *parityTrace) {
	if c.err == nil {
		if err := c.add(el); err != nil {
			c.err = fmt.Errorf("element %d: %w", i, err)
		}
	}
}

func (c *parityConverter) add(el *parityTrace) error {
	// The shapes of trace_block elements: a trace has an action; geth's
	// flatCallTracer wraps each transaction's traces as {"txHash",
	// "result": [...]}; a transaction it failed to trace is {"txHash",
	// "error"}.
	switch {
	case el.Action != nil:
		t, err := parityToTrace(c.x, el, c.notes, c.sl)
		if err != nil {
			return err
		}
		if t != nil {
			if c.out == nil {
				c.out = make([]*chainquery.Trace, 0, cap(c.sl.traces))
			}
			c.out = append(c.out, t)
		}
	case len(el.Result) > 0 && el.Result[0] == '[':
		inner := el.inner
		if !el.hasInner {
			if err := json.Unmarshal(el.Result, &inner); err != nil {
				return err
			}
		}
		for i := range inner {
			if c.element(i, &inner[i]); c.err != nil {
				return c.err
			}
		}
	case present(el.Error):
		return fmt.Errorf("the node could not trace transaction %s: %s", el.TxHash, el.Error)
	default:
		return fmt.Errorf("not a trace: type %q", el.Type)
	}
	return nil
}

// growingParitySlab returns a slab for the traces of a trace_block answer
// of size bytes, sized before it is read: a first guess from the size
// (a Polygon-shaped answer has a trace per ~800 bytes, a fifth of it
// input and output, and ~2.4 levels of trace address a trace), then
// chunks as large as what is used.
func growingParitySlab(size int) *traceSlab {
	n := size/768 + 1
	sl := newTraceSlab(n, size/5, 3*n)
	sl.grow = true
	return sl
}

// parityToTrace converts one Parity trace, into a trace of sl; it returns
// nil for traces the API does not serve (rewards and other traces without
// a transaction).
func parityToTrace(x *traceTxIndex, pt *parityTrace, notes *decodeNotes, sl *traceSlab) (*chainquery.Trace, error) {
	result := pt.result
	if result == nil && present(pt.Result) {
		result = new(parityResult)
		if err := json.Unmarshal(pt.Result, result); err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
	}
	errBytes, _, err := jsonBytes(pt.Error)
	if err != nil {
		return nil, fmt.Errorf("error: %w", err)
	}
	errText := internString(errBytes) // jsonText, without a copy of the usual messages
	if pt.Type == "reward" || !present(pt.TransactionHash) && !present(pt.TransactionPosition) {
		return nil, nil
	}
	if n, err := fieldUint(pt.BlockNumber); err == nil && present(pt.BlockNumber) && n != x.block.Number {
		return nil, fmt.Errorf("trace of block %d, not %d", n, x.block.Number)
	}
	if h, ok, err := x.hash(memoBlock, pt.BlockHash); err == nil && ok && h != x.block.Hash && x.block.Hash != (chainquery.Hash{}) {
		return nil, fmt.Errorf("trace of block %s, not %s", h, x.block.Hash)
	}
	hash, hasHash, err := x.hash(memoTx, pt.TransactionHash)
	if err != nil {
		return nil, fmt.Errorf("transactionHash: %w", err)
	}
	pos := -1
	if present(pt.TransactionPosition) {
		n, err := fieldUint(pt.TransactionPosition)
		if err != nil {
			return nil, fmt.Errorf("transactionPosition: %w", err)
		}
		pos = int(n)
	}
	if hash, pos, err = x.resolve(hash, hasHash, pos); err != nil {
		return nil, err
	}

	r := fieldReader{notes: notes, record: func() string { return fmt.Sprintf("trace %s/%s", hash, chainquery.FormatTraceAddress(pt.TraceAddress)) }, slab: sl.slab}
	t := sl.newTrace()
	*t = chainquery.Trace{
		BlockNumber:      x.block.Number,
		TransactionHash:  hash,
		TransactionIndex: pos,
		TraceAddress:     sl.cloneInts(pt.TraceAddress),
		Subtraces:        pt.Subtraces,
		Error:            errText,
		Gas:              r.uintOf("gas", pt.Action.Gas),
	}
	a := pt.Action
	switch pt.Type {
	case "create":
		t.Type, t.CallType = chainquery.TraceCreate, chainquery.CallTypeCreate
		t.From = r.addressOrZeroOf("from", a.From)
		t.Value = r.bigOf("value", a.Value)
		t.Input = r.data("init", a.Init)
		if result != nil {
			t.To = r.addressOf("address", result.Address)
			t.Output = r.data("code", result.Code)
		}
	case "suicide":
		t.Type, t.CallType = chainquery.TraceSuicide, chainquery.CallTypeCall
		t.From = r.addressOrZeroOf("address", a.Address)
		t.To = r.addressOf("refundAddress", a.RefundAddress)
		t.Value = r.bigOf("balance", a.Balance)
	default: // call, and types only some node knows: see callTypeOf
		t.Type, t.CallType = callTypeOf(a.CallType)
		if t.Type != chainquery.TraceCall {
			t.Type, t.CallType = chainquery.TraceCall, chainquery.CallTypeCall
		}
		t.From = r.addressOrZeroOf("from", a.From)
		t.To = r.addressOf("to", a.To)
		t.Value = r.bigOf("value", a.Value)
		t.Input = r.data("input", a.Input)
		if result != nil {
			t.Output = r.data("output", result.Output)
		}
	}
	if result != nil {
		// An errored frame has no result, hence no gas used: it is stored
		// as 0 (docs/api.md, Filter Traces), which is where Parity and geth differ.
		t.GasUsed = r.uintOf("gasUsed", result.GasUsed)
	}
	finishTrace(t, sl.slab)
	return t, nil
}
