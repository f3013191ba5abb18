package history

import (
	"encoding/binary"
	"slices"

	"github.com/chainquery/chainquery"
)

// traceMagic starts a trace segment; the byte after it is its version.
var traceMagic = []byte("cqT")

const traceVersion = 1

// Codes of a trace's type and call type, packed in one byte.
var (
	traceTypes = []string{chainquery.TraceCall, chainquery.TraceCreate, chainquery.TraceSuicide}
	callTypes  = []string{chainquery.CallTypeCall, chainquery.CallTypeDelegateCall, chainquery.CallTypeStaticCall, chainquery.CallTypeCreate}
)

// maxTraces bounds the count of a segment's header, so that a damaged one
// cannot make the decoder allocate for billions of rows (a Polygon block
// has ~900 traces; the largest Ethereum blocks tens of thousands).
const maxTraces = 1 << 22

// AppendTraces appends the segment of traces, the traces of one block in
// their order, to dst. It fails on a trace the segment cannot hold: an
// unknown type or call type, a negative value or index.
func AppendTraces(dst []byte, traces []*chainquery.Trace) ([]byte, error) {
	return (*Dict)(nil).AppendTraces(dst, traces)
}

// AppendTraces is the package's AppendTraces compressed with d (nil: none).
func (d *Dict) AppendTraces(dst []byte, traces []*chainquery.Trace) ([]byte, error) {
	sc := getScratch()
	addrs := &sc.addrs
	var errs []string
	var errIndex map[string]uint64

	n := len(traces)
	txs, paths, kinds, froms, tos := sc.col(0, n), sc.col(1, 4*n), sc.col(2, n), sc.col(3, 2*n), sc.col(4, 2*n)
	gas, used, values, subs, errCol := sc.col(5, 4*n), sc.col(6, 3*n), sc.col(7, 2*n), sc.col(8, n), sc.col(9, n)
	inputs := sc.col(10, lenBytesSize(traces, func(t *chainquery.Trace) []byte { return t.Input }))
	outputs := sc.col(11, lenBytesSize(traces, func(t *chainquery.Trace) []byte { return t.Output }))
	prevTx := 0
	for i, t := range traces {
		if t.TransactionIndex < prevTx || t.Subtraces < 0 {
			return nil, corrupt("trace %d: transaction index %d after %d, or subtraces %d", i, t.TransactionIndex, prevTx, t.Subtraces)
		}
		txs = binary.AppendUvarint(txs, uint64(t.TransactionIndex-prevTx))
		prevTx = t.TransactionIndex
		paths = binary.AppendUvarint(paths, uint64(len(t.TraceAddress)))
		for _, n := range t.TraceAddress {
			if n < 0 {
				return nil, corrupt("trace %d: trace address %v", i, t.TraceAddress)
			}
			paths = binary.AppendUvarint(paths, uint64(n))
		}
		ty, ct := slices.Index(traceTypes, t.Type), slices.Index(callTypes, t.CallType)
		if ty < 0 || ct < 0 {
			return nil, corrupt("trace %d: type %q, call type %q", i, t.Type, t.CallType)
		}
		kinds = append(kinds, byte(ty)|byte(ct)<<2)
		froms = binary.AppendUvarint(froms, addrs.id(t.From))
		if t.To == nil {
			tos = append(tos, 0)
		} else {
			tos = binary.AppendUvarint(tos, addrs.id(*t.To)+1)
		}
		gas = binary.AppendUvarint(gas, t.Gas)
		used = binary.AppendUvarint(used, t.GasUsed)
		var ok bool
		if values, ok = appendBig(values, t.Value); !ok {
			return nil, corrupt("trace %d: negative value", i)
		}
		subs = binary.AppendUvarint(subs, uint64(t.Subtraces))
		if t.Error == "" {
			errCol = append(errCol, 0)
		} else {
			j, ok := errIndex[t.Error]
			if !ok {
				if errIndex == nil {
					errIndex = map[string]uint64{}
				}
				j = uint64(len(errs))
				errIndex[t.Error] = j
				errs = append(errs, t.Error)
			}
			errCol = binary.AppendUvarint(errCol, j+1)
		}
		inputs = appendLenBytes(inputs, t.Input)
		outputs = appendLenBytes(outputs, t.Output)
	}

	raw := sc.header(traceMagic, traceVersion)
	raw = binary.AppendUvarint(raw, uint64(len(traces)))
	raw = binary.AppendUvarint(raw, uint64(len(addrs.values)))
	for _, a := range addrs.values {
		raw = append(raw, a[:]...)
	}
	raw = binary.AppendUvarint(raw, uint64(len(errs)))
	for _, e := range errs {
		raw = appendLenBytes(raw, []byte(e))
	}
	dst = finish(d, dst, raw, txs, paths, kinds, froms, tos, gas, used, values, subs, errCol, inputs, outputs)
	sc.keep(raw, txs, paths, kinds, froms, tos, gas, used, values, subs, errCol, inputs, outputs)
	return dst, nil
}

// DecodeTraces returns the traces of the segment src, with BlockNumber set
// to block and the frame's own fields filled; the enclosing block's and
// transactions' fields are left zero for the store to fill.
func DecodeTraces(src []byte, block uint64) ([]*chainquery.Trace, error) {
	raw, err := decompress(src)
	if err != nil {
		return nil, err
	}
	r := &reader{b: raw}
	if magic := r.bytes(len(traceMagic)); r.err != nil || string(magic) != string(traceMagic) {
		return nil, corrupt("not a trace segment")
	}
	if v := r.byte_(); v != traceVersion {
		return nil, corrupt("trace segment version %d, this binary reads %d", v, traceVersion)
	}
	n := r.int(maxTraces)
	addrs := make([]chainquery.Address, r.int(len(r.b)/20))
	for i := range addrs {
		copy(addrs[i][:], r.bytes(20))
	}
	errs := make([]string, r.int(len(r.b)))
	for i := range errs {
		errs[i] = string(r.lenBytes())
	}
	if r.err != nil {
		return nil, r.err
	}
	if n > len(r.b) { // every trace takes at least a byte in each column
		return nil, corrupt("%d traces in %d bytes", n, len(r.b))
	}
	if n > 0 && len(addrs) == 0 {
		return nil, corrupt("%d traces and no address", n)
	}
	traces := make([]*chainquery.Trace, n)
	rows := make([]chainquery.Trace, n)
	for i := range traces {
		traces[i] = &rows[i]
		traces[i].BlockNumber = block
	}
	tx := 0
	for _, t := range traces {
		tx += r.int(maxTraces)
		t.TransactionIndex = tx
	}
	for _, t := range traces {
		k := r.int(1024)
		if k > 0 {
			t.TraceAddress = make([]int, k)
			for j := range t.TraceAddress {
				t.TraceAddress[j] = r.int(maxTraces)
			}
		} else {
			t.TraceAddress = []int{}
		}
	}
	for _, t := range traces {
		b := r.byte_()
		ty, ct := int(b&3), int(b>>2)
		if ty >= len(traceTypes) || ct >= len(callTypes) {
			r.fail("kind byte %#x", b)
			break
		}
		t.Type, t.CallType = traceTypes[ty], callTypes[ct]
	}
	for _, t := range traces {
		t.From = addrs[r.int(len(addrs)-1)]
	}
	for _, t := range traces {
		if j := r.int(len(addrs)); j > 0 {
			a := addrs[j-1]
			t.To = &a
		}
	}
	for _, t := range traces {
		t.Gas = r.uvarint()
	}
	for _, t := range traces {
		t.GasUsed = r.uvarint()
	}
	for _, t := range traces {
		t.Value = r.big()
	}
	for _, t := range traces {
		t.Subtraces = r.int(maxTraces)
	}
	for _, t := range traces {
		if j := r.int(len(errs)); j > 0 {
			t.Error = errs[j-1]
		}
	}
	for _, t := range traces {
		t.Input = r.lenBytes()
	}
	for _, t := range traces {
		t.Output = r.lenBytes()
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, corrupt("%d bytes after the last column", len(r.b))
	}
	return traces, nil
}
