package evm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"testing"
	"unsafe"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/jsonrpc"
)

// The decoders hand out values from slabs (slab.go): no two values may
// share memory, not even in the capacity beyond a slice's length, or an
// append to one (or arithmetic on an amount) could change another.
func TestDecodedValuesShareNothing(t *testing.T) {
	answers := polygonAnswers(t, 2)
	for _, traces := range []string{TracesParity, TracesCallTracer} {
		f := NewFetcher(nil, chainquery.Polygon, Plan{BlockReceipts: true, Traces: traces}, nil)
		for i, a := range answers {
			d, err := decodeFetchedBlock(f, a)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkShareNothing(d); err != nil {
				t.Errorf("%s, block %d: %v", traces, i, err)
			}
		}
	}
}

// TestDecodedValuesShareNothingPerReceipt is the same for receipts
// answered one per transaction (eth_getTransactionReceipt).
func TestDecodedValuesShareNothingPerReceipt(t *testing.T) {
	a := polygonAnswers(t, 1)[0]
	d, err := decodeBlockWithNotes(chainquery.Polygon, a.block, nil)
	if err != nil {
		t.Fatal(err)
	}
	var receipts []json.RawMessage
	if err := json.Unmarshal(a.receipts, &receipts); err != nil {
		t.Fatal(err)
	}
	if err := ApplyReceipts(d, receipts); err != nil {
		t.Fatal(err)
	}
	if err := checkShareNothing(d); err != nil {
		t.Error(err)
	}
}

// decodeFetchedBlock is decodeFetched that returns the block.
func decodeFetchedBlock(f *Fetcher, a benchAnswers) (*chainquery.BlockData, error) {
	d, err := decodeBlockWithNotes(f.Chain, a.block, nil)
	if err != nil {
		return nil, err
	}
	receipts := []*jsonrpc.Request{{Method: "eth_getBlockReceipts", Result: a.receipts}}
	method := "trace_block"
	if f.Plan.Traces == TracesCallTracer {
		method = "debug_traceBlockByHash"
	}
	return d, f.complete(d, receipts, &jsonrpc.Request{Method: method, Result: a.traces(f.Plan.Traces)})
}

// checkShareNothing checks that the slices of d's rows (their capacity
// included), the magnitudes of their amounts, and their address and
// amount pointers are all distinct. A log's TransactionTo is its
// transaction's To by design, and is left out.
func checkShareNothing(d *chainquery.BlockData) error {
	type span struct {
		start, end uintptr
		what       string
	}
	var spans []span
	add := func(p unsafe.Pointer, capBytes uintptr, what string) {
		if capBytes > 0 {
			spans = append(spans, span{uintptr(p), uintptr(p) + capBytes, what})
		}
	}
	bytesOf := func(b []byte, what string) { add(unsafe.Pointer(unsafe.SliceData(b)), uintptr(cap(b)), what) }
	intsOf := func(v []int, what string) {
		add(unsafe.Pointer(unsafe.SliceData(v)), uintptr(cap(v))*unsafe.Sizeof(0), what)
	}
	bigOf := func(v *big.Int, what string) {
		if v != nil {
			w := v.Bits()
			add(unsafe.Pointer(unsafe.SliceData(w)), uintptr(cap(w))*unsafe.Sizeof(big.Word(0)), what)
			add(unsafe.Pointer(v), unsafe.Sizeof(*v), what+" (the Int)")
		}
	}
	addrOf := func(a *chainquery.Address, what string) {
		if a != nil {
			add(unsafe.Pointer(a), unsafe.Sizeof(*a), what)
		}
	}
	bytesOf(d.Block.LogsBloom, "logsBloom")
	bytesOf(d.Block.ExtraData, "extraData")
	bigOf(d.Block.BaseFeePerGas, "baseFee")
	for i, t := range d.Transactions {
		w := fmt.Sprintf("tx %d ", i)
		bytesOf(t.Input, w+"input")
		addrOf(t.To, w+"to")
		addrOf(t.ContractAddress, w+"contract")
		bigOf(t.Value, w+"value")
		bigOf(t.GasPrice, w+"gasPrice")
		bigOf(t.EffectiveGasPrice, w+"effectiveGasPrice")
		bigOf(t.MaxFeePerGas, w+"maxFee")
		bigOf(t.MaxPriorityFeePerGas, w+"maxPriorityFee")
	}
	for i, l := range d.Logs {
		w := fmt.Sprintf("log %d ", i)
		bytesOf(l.Data, w+"data")
		add(unsafe.Pointer(unsafe.SliceData(l.Topics)), uintptr(cap(l.Topics))*unsafe.Sizeof(chainquery.Hash{}), w+"topics")
	}
	for i, t := range d.Traces {
		w := fmt.Sprintf("trace %d ", i)
		bytesOf(t.Input, w+"input")
		bytesOf(t.Output, w+"output")
		intsOf(t.TraceAddress, w+"traceAddress")
		addrOf(t.To, w+"to")
		bigOf(t.Value, w+"value")
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return fmt.Errorf("%s and %s share memory", spans[i-1].what, spans[i].what)
		}
	}
	return nil
}
