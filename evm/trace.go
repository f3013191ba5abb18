package evm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chainquery/chainquery"
)

// traceTxIndex finds the transaction a trace belongs to and checks that the
// traces and the block agree, so that traces of another fork are refused
// rather than filed under the wrong transaction.
type traceTxIndex struct {
	block  *chainquery.Block
	txs    []*chainquery.Transaction
	byHash map[chainquery.Hash]*chainquery.Transaction

	// The last hashes read, by their text: every trace names its block's
	// hash and its transaction's, the same text trace after trace, and
	// decoding 64 hex digits each time was a tenth of decoding the traces.
	hashes [2]hashMemo
}

// hashMemo is a hash field's text and what fieldHash made of it.
type hashMemo struct {
	raw     []byte
	h       chainquery.Hash
	present bool
	err     error
}

// Which of traceTxIndex.hashes.
const (
	memoBlock = iota
	memoTx
)

// hash is fieldHash(raw), remembered as hashes[which] for the next field
// of the same text.
func (x *traceTxIndex) hash(which int, raw json.RawMessage) (chainquery.Hash, bool, error) {
	m := &x.hashes[which]
	if m.raw == nil || !bytes.Equal(m.raw, raw) {
		h, present, err := fieldHash(raw)
		*m = hashMemo{raw: raw, h: h, present: present, err: err}
	}
	return m.h, m.present, m.err
}

func newTraceTxIndex(d *chainquery.BlockData) *traceTxIndex {
	x := &traceTxIndex{block: d.Block, txs: d.Transactions, byHash: make(map[chainquery.Hash]*chainquery.Transaction, len(d.Transactions))}
	for _, t := range d.Transactions {
		x.byHash[t.Hash] = t
	}
	return x
}

// traceSlab is the slab of the traces of one answer: their values, and
// the traces themselves.
type traceSlab struct {
	*slab
	traces []chainquery.Trace // within capacity, so that pointers stay valid
}

// newTraceSlab returns a slab with room for n traces with data bytes of
// input and output and ints of trace addresses in all.
func newTraceSlab(n, data, ints int) *traceSlab {
	// Per trace: its to address and its value.
	return &traceSlab{slab: newSlab(data, n, n, ints), traces: make([]chainquery.Trace, 0, n)}
}

// newTrace returns a zero trace of the slab.
func (sl *traceSlab) newTrace() *chainquery.Trace {
	if sl.traces = room(sl.grow, sl.traces, 1); len(sl.traces) == cap(sl.traces) {
		return new(chainquery.Trace)
	}
	sl.traces = append(sl.traces, chainquery.Trace{})
	return &sl.traces[len(sl.traces)-1]
}

// resolve returns the hash and index of the transaction that a trace names
// by hash (when hasHash) and position. Without transactions in d (traces
// decoded on their own) the trace is trusted; otherwise the hash must be one
// of the block's, at the same position. The one exception is a polygon
// state-sync transaction, which some Bor versions trace but do not list in
// the block (its receipt adds it later; CheckComplete checks the result).
func (x *traceTxIndex) resolve(hash chainquery.Hash, hasHash bool, pos int) (chainquery.Hash, int, error) {
	if !hasHash {
		if pos >= 0 && pos < len(x.txs) {
			return x.txs[pos].Hash, x.txs[pos].Index, nil
		}
		return hash, pos, fmt.Errorf("trace of transaction %d names no hash and the block has %d transactions", pos, len(x.txs))
	}
	if len(x.txs) == 0 {
		return hash, pos, nil
	}
	if t := x.byHash[hash]; t != nil {
		if pos >= 0 && pos != t.Index {
			return hash, pos, fmt.Errorf("trace of %s is at position %d, the transaction at %d", hash, pos, t.Index)
		}
		return hash, t.Index, nil
	}
	if x.block.Chain == chainquery.Polygon && pos >= len(x.txs) {
		return hash, pos, nil
	}
	return hash, pos, fmt.Errorf("trace of transaction %s, which is not in block %d", hash, x.block.Number)
}

// callTypeOf maps the call kinds of both node families to the API's
// call_type (docs/api.md, Filter Traces): callcode is reported as call, create2 as
// create, and anything unknown as call.
func callTypeOf(kind string) (traceType, callType string) {
	var buf [16]byte
	switch string(lowerKind(kind, buf[:])) {
	case "delegatecall":
		return chainquery.TraceCall, chainquery.CallTypeDelegateCall
	case "staticcall":
		return chainquery.TraceCall, chainquery.CallTypeStaticCall
	case "create", "create2":
		return chainquery.TraceCreate, chainquery.CallTypeCreate
	case "selfdestruct", "suicide":
		return chainquery.TraceSuicide, chainquery.CallTypeCall
	}
	// call, callcode, and kinds only one chain knows (Arbitrum's INVALID
	// frames): the API has no other type, and dropping the frame would
	// renumber its siblings against what the node says.
	return chainquery.TraceCall, chainquery.CallTypeCall
}

// lowerKind returns strings.ToLower(kind), in buf when kind is short
// ASCII (every kind a node sends), where ToLower allocated for the
// upper-case kinds of the callTracer.
func lowerKind(kind string, buf []byte) []byte {
	if len(kind) > len(buf) {
		return []byte(strings.ToLower(kind))
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		switch {
		case c >= 0x80:
			return []byte(strings.ToLower(kind)) // Unicode's rules
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(kind)]
}

// finishTrace applies the rules both decoders share: a failed creation has
// no address, a suicide has no gas, input or output, and input, output and
// value are never nil so that both paths give equal rows. A zero value
// comes from sl.
func finishTrace(t *chainquery.Trace, sl *slab) {
	if t.Type == chainquery.TraceCreate && t.Error != "" {
		t.To = nil
	}
	if t.Type == chainquery.TraceSuicide {
		t.Gas, t.GasUsed = 0, 0
		t.Input, t.Output = nil, nil
	}
	if t.Input == nil {
		t.Input = []byte{}
	}
	if t.Output == nil {
		t.Output = []byte{}
	}
	if t.Value == nil {
		t.Value = sl.newBig()
	}
	if t.TraceAddress == nil {
		t.TraceAddress = []int{}
	}
}
