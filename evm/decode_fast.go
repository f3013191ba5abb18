package evm

import (
	"encoding/json"
	"slices"
	"sync"
)

// fastPaths turns the fast paths of the decoders on; tests turn them off to
// compare. Each fast path fills the same intermediate structs as
// json.Unmarshal would (jsonBlock, jsonReceipt, parityTrace, callFrame), in
// one pass of a scanner, with every field a slice of the answer instead of a
// copy: on Polygon-sized blocks, encoding/json's reflection, its validation
// pass before decoding and its copies were most of the ingester's CPU
// (docs/benchmarks.md, "What changed, each from a profile", Ingestion). Each
// returns false when its scanner gave up; the caller then runs
// json.Unmarshal, so that the result, or the error, is what it always was.
var fastPaths = true

// scratch holds the intermediate structs that the fast paths fill for one
// answer, kept from answer to answer in scratchPool rather than made anew:
// they are garbage once the answer is decoded, and a Polygon block's
// elements alone (900 trace elements of about 260 bytes, with their
// actions and results; 400 logs; 100 transactions and receipts) were a
// megabyte of it a block. Each list is appended to as the scanner reads,
// and handed out capped (s[i:j:j]) where it is a part of one.
//
// Nothing decoded from an answer points into its scratch: the decoders
// parse every value they keep out of these structs (which only hold slices
// of the answer). release does not clear them: every element is appended
// as a zero value before it is filled, so a stale one is never read, and
// clearing the lists' capacity (pointers, under the collector's write
// barrier) was 9% of decoding a block (BenchmarkDecode's profile,
// docs/benchmarks.md, issue 30, session 30). What a pooled scratch keeps
// alive is the last answers it read, which are themselves buffers of the
// client's pool (jsonrpc), until the scratch is used again or the pool
// drops it at a collection. A pointer into a list (an action, a receipt) taken
// before the list grew points into the array the list had then, which
// still holds the value it was given. The lists returned whole (txs,
// receiptPtrs, traces) must be contiguous: the scanner fills each of their
// elements through a pointer and appends nothing else to the same list
// meanwhile, which is why a nested trace list is not the scratch's.
type scratch struct {
	txs         []jsonTx
	receipts    []jsonReceipt
	receiptPtrs []*jsonReceipt
	logs        []jsonLog
	topics      []hashField
	traces      []parityTrace // the top-level element of a trace_block answer being read; nested lists are their own
	actions     []parityAction
	results     []parityResult
	ints        []int
	callTops    []*callFrame      // a callTracer answer's frames, one per element
	callHashes  []json.RawMessage // and their txHash
	frames      []callFrame       // never grown in place: see newFrame
	calls       []*callFrame      // every frame's list of children, each a capped part
	callStack   []*callFrame      // the children read so far of the frames being read
	data        []byte            // the bytes of the hexFields decoded as read
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// getScratch returns a scratch for one answer; release it once nothing
// reads the intermediate structs any more.
func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// release returns sc to the pool, its lists emptied (see scratch: not
// cleared).
func (sc *scratch) release() {
	sc.txs = sc.txs[:0]
	sc.receipts = sc.receipts[:0]
	sc.receiptPtrs = sc.receiptPtrs[:0]
	sc.logs = sc.logs[:0]
	sc.topics = sc.topics[:0]
	sc.traces = sc.traces[:0]
	sc.actions = sc.actions[:0]
	sc.results = sc.results[:0]
	sc.ints = sc.ints[:0]
	sc.callTops = sc.callTops[:0]
	sc.callHashes = sc.callHashes[:0]
	sc.frames = sc.frames[:0]
	sc.calls = sc.calls[:0]
	sc.callStack = sc.callStack[:0]
	sc.data = sc.data[:0]
	scratchPool.Put(sc)
}

// newScanner returns a scanner of raw whose lists go to sc, or to a
// scratch of its own when sc is nil.
func newScanner(raw []byte, sc *scratch) *scanner {
	if sc == nil {
		sc = new(scratch)
	}
	// Room for the data fields, decoded as they are read (hexField):
	// at most half the answer. Whatever is there stays: one scratch may
	// serve several answers (a receipt each) decoded before any is used.
	sc.data = slices.Grow(sc.data, len(raw)/2)
	return &scanner{data: raw, sc: sc}
}

// fastBlock decodes an eth_getBlockByNumber result into jb, its
// transactions into sc (nil: lists of their own).
func fastBlock(raw []byte, jb *jsonBlock, sc *scratch) bool {
	if !fastPaths {
		return false
	}
	s := newScanner(raw, sc)
	if !s.open('{') {
		return false
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "number":
			s.raw(&jb.Number, &seen, 0)
		case "hash":
			s.raw(&jb.Hash, &seen, 1)
		case "parenthash":
			s.raw(&jb.ParentHash, &seen, 2)
		case "timestamp":
			s.raw(&jb.Timestamp, &seen, 3)
		case "logsbloom":
			s.raw(&jb.LogsBloom, &seen, 4)
		case "transactionsroot":
			s.raw(&jb.TransactionsRoot, &seen, 5)
		case "stateroot":
			s.raw(&jb.StateRoot, &seen, 6)
		case "receiptsroot":
			s.raw(&jb.ReceiptsRoot, &seen, 7)
		case "miner":
			s.raw(&jb.Miner, &seen, 8)
		case "author":
			s.raw(&jb.Author, &seen, 9)
		case "extradata":
			s.raw(&jb.ExtraData, &seen, 10)
		case "size":
			s.raw(&jb.Size, &seen, 11)
		case "gaslimit":
			s.raw(&jb.GasLimit, &seen, 12)
		case "gasused":
			s.raw(&jb.GasUsed, &seen, 13)
		case "basefeepergas":
			s.raw(&jb.BaseFeePerGas, &seen, 14)
		case "transactions":
			s.once(&seen, 15)
			jb.Transactions = s.txs()
		default:
			s.value()
		}
	}
	s.end()
	return !s.bad
}

// txs reads the transactions of a block: full objects only (hashes are
// encoding/json's type error, which DecodeBlock explains).
func (s *scanner) txs() []jsonTx {
	if s.null() {
		return nil
	}
	if !s.open('[') {
		return nil
	}
	out := s.sc.txs[:0]
	for first := true; s.more(']', &first); {
		out = append(out, jsonTx{})
		s.tx(&out[len(out)-1])
	}
	s.sc.txs = out
	if len(out) == 0 {
		return []jsonTx{}
	}
	return out
}

func (s *scanner) tx(jt *jsonTx) {
	if !s.open('{') {
		return
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "hash":
			s.raw(&jt.Hash, &seen, 0)
		case "transactionindex":
			s.raw(&jt.TransactionIndex, &seen, 1)
		case "from":
			s.addr(&jt.From, &seen, 2)
		case "to":
			s.addr(&jt.To, &seen, 3)
		case "value":
			s.quant(&jt.Value, &seen, 4)
		case "gas":
			s.quant(&jt.Gas, &seen, 5)
		case "gasprice":
			s.raw(&jt.GasPrice, &seen, 6)
		case "maxfeepergas":
			s.raw(&jt.MaxFeePerGas, &seen, 7)
		case "maxpriorityfeepergas":
			s.raw(&jt.MaxPriorityFeePerGas, &seen, 8)
		case "nonce":
			s.raw(&jt.Nonce, &seen, 9)
		case "input":
			s.hex(&jt.Input, &seen, 10)
		case "data":
			s.hex(&jt.Data, &seen, 11)
		case "type":
			s.raw(&jt.Type, &seen, 12)
		default:
			s.value()
		}
	}
}

// fastReceipts decodes an eth_getBlockReceipts result into sc (nil: lists
// of their own); null elements stay nil.
func fastReceipts(raw []byte, sc *scratch) ([]*jsonReceipt, bool) {
	if !fastPaths {
		return nil, false
	}
	s := newScanner(raw, sc)
	if !s.open('[') {
		return nil, false
	}
	out := s.sc.receiptPtrs[:0]
	for first := true; s.more(']', &first); {
		if s.null() {
			out = append(out, nil)
			continue
		}
		jr := s.newReceipt()
		s.receipt(jr)
		out = append(out, jr)
	}
	s.sc.receiptPtrs = out
	s.end()
	if out == nil {
		out = []*jsonReceipt{}
	}
	return out, !s.bad
}

// newReceipt returns a zero jsonReceipt of the scratch.
func (s *scanner) newReceipt() *jsonReceipt {
	s.sc.receipts = append(s.sc.receipts, jsonReceipt{})
	return &s.sc.receipts[len(s.sc.receipts)-1]
}

// fastReceipt decodes one eth_getTransactionReceipt result into jr, its
// logs into sc (nil: lists of their own).
func fastReceipt(raw []byte, jr *jsonReceipt, sc *scratch) bool {
	if !fastPaths {
		return false
	}
	s := newScanner(raw, sc)
	s.receipt(jr)
	s.end()
	return !s.bad
}

func (s *scanner) receipt(jr *jsonReceipt) {
	if !s.open('{') {
		return
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "transactionhash":
			s.raw(&jr.TransactionHash, &seen, 0)
		case "transactionindex":
			s.raw(&jr.TransactionIndex, &seen, 1)
		case "blockhash":
			s.raw(&jr.BlockHash, &seen, 2)
		case "blocknumber":
			s.raw(&jr.BlockNumber, &seen, 3)
		case "from":
			s.addr(&jr.From, &seen, 4)
		case "to":
			s.addr(&jr.To, &seen, 5)
		case "type":
			s.raw(&jr.Type, &seen, 6)
		case "status":
			s.raw(&jr.Status, &seen, 7)
		case "gasused":
			s.quant(&jr.GasUsed, &seen, 8)
		case "cumulativegasused":
			s.quant(&jr.CumulativeGasUsed, &seen, 9)
		case "effectivegasprice":
			s.raw(&jr.EffectiveGasPrice, &seen, 10)
		case "contractaddress":
			s.raw(&jr.ContractAddress, &seen, 11)
		case "logs":
			s.once(&seen, 12)
			jr.Logs = s.logs()
		default:
			s.value()
		}
	}
}

func (s *scanner) logs() []jsonLog {
	if s.null() {
		return nil
	}
	if !s.open('[') {
		return nil
	}
	start := len(s.sc.logs)
	for first := true; s.more(']', &first); {
		if s.peek() == 'n' {
			s.fail() // a null log: encoding/json keeps a zero element
			return nil
		}
		s.sc.logs = append(s.sc.logs, jsonLog{})
		s.log(&s.sc.logs[len(s.sc.logs)-1]) // appends to topics only
	}
	if len(s.sc.logs) == start {
		return []jsonLog{}
	}
	return s.sc.logs[start:len(s.sc.logs):len(s.sc.logs)]
}

func (s *scanner) log(jl *jsonLog) {
	if !s.open('{') {
		return
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "address":
			s.addr(&jl.Address, &seen, 0)
		case "topics":
			s.once(&seen, 1)
			jl.Topics = s.hashList()
		case "data":
			s.hex(&jl.Data, &seen, 2)
		case "logindex":
			s.raw(&jl.LogIndex, &seen, 3)
		default:
			s.value()
		}
	}
}

// fastParityEach reads a trace_block result (or geth's flatCallTracer
// output) and hands each element to each as soon as it is read, in sc,
// whose lists start over after each element: nothing each is given
// outlives its call. null reports a null answer; ok false, that the
// scanner gave up (each may have been given some elements by then).
func fastParityEach(raw []byte, sc *scratch, each func(i int, el *parityTrace)) (null, ok bool) {
	if !fastPaths {
		return false, false
	}
	s := newScanner(raw, sc)
	if s.null() {
		s.end()
		return true, !s.bad
	}
	if !s.open('[') {
		return false, false
	}
	for i, first := 0, true; s.more(']', &first); i++ {
		if s.peek() == 'n' {
			s.fail() // a null element: encoding/json keeps a zero element
			break
		}
		sc := s.sc
		sc.traces = append(sc.traces[:0], parityTrace{})
		if s.parityTrace(&sc.traces[0]); s.bad {
			break
		}
		each(i, &sc.traces[0])
		sc.actions, sc.results, sc.ints, sc.data = sc.actions[:0], sc.results[:0], sc.ints[:0], sc.data[:0]
	}
	s.end()
	return false, !s.bad
}

// parityList reads an array of parityTrace (a flatCallTracer wrapper's);
// null is nil. The list is made here, not the scratch's: its elements are
// read while an element of the top-level list is being filled through a
// pointer.
func (s *scanner) parityList() []parityTrace {
	if s.null() {
		return nil
	}
	if !s.open('[') {
		return nil
	}
	out := []parityTrace{}
	for first := true; s.more(']', &first); {
		if s.peek() == 'n' {
			s.fail() // a null element: encoding/json keeps a zero element
			return nil
		}
		out = append(out, parityTrace{})
		s.parityTrace(&out[len(out)-1])
	}
	return out
}

func (s *scanner) parityTrace(pt *parityTrace) {
	if !s.open('{') {
		return
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "type":
			s.str(&pt.Type, &seen, 0)
		case "action":
			s.once(&seen, 1)
			if s.null() {
				pt.Action = nil
				continue
			}
			s.sc.actions = append(s.sc.actions, parityAction{})
			pt.Action = &s.sc.actions[len(s.sc.actions)-1]
			s.parityAction(pt.Action)
		case "result":
			s.once(&seen, 2)
			// The result is a trace's parityResult, or the traces of a
			// flatCallTracer wrapper; each is decoded here when it reads
			// as one, and the slices left for parityToTrace otherwise.
			switch s.peek() {
			case '{':
				start := s.i
				s.sc.results = append(s.sc.results, parityResult{})
				pt.result = &s.sc.results[len(s.sc.results)-1]
				s.parityResult(pt.result)
				pt.Result = s.data[start:s.i]
			case '[':
				start := s.i
				pt.inner = s.parityList()
				pt.hasInner = true
				pt.Result = s.data[start:s.i]
			default:
				pt.Result = s.value()
			}
		case "error":
			s.raw(&pt.Error, &seen, 3)
		case "txhash":
			s.raw(&pt.TxHash, &seen, 4)
		case "traceaddress":
			s.ints(&pt.TraceAddress, &seen, 5)
		case "subtraces":
			s.int(&pt.Subtraces, &seen, 6)
		case "transactionhash":
			s.raw(&pt.TransactionHash, &seen, 7)
		case "transactionposition":
			s.raw(&pt.TransactionPosition, &seen, 8)
		case "blocknumber":
			s.raw(&pt.BlockNumber, &seen, 9)
		case "blockhash":
			s.raw(&pt.BlockHash, &seen, 10)
		default:
			s.value()
		}
	}
}

func (s *scanner) parityAction(a *parityAction) {
	if !s.open('{') {
		return
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "calltype":
			s.str(&a.CallType, &seen, 0)
		case "from":
			s.addr(&a.From, &seen, 1)
		case "to":
			s.addr(&a.To, &seen, 2)
		case "value":
			s.quant(&a.Value, &seen, 3)
		case "gas":
			s.quant(&a.Gas, &seen, 4)
		case "input":
			s.hex(&a.Input, &seen, 5)
		case "init":
			s.hex(&a.Init, &seen, 6)
		case "address":
			s.addr(&a.Address, &seen, 7)
		case "refundaddress":
			s.addr(&a.RefundAddress, &seen, 8)
		case "balance":
			s.quant(&a.Balance, &seen, 9)
		default:
			s.value()
		}
	}
}

func (s *scanner) parityResult(r *parityResult) {
	if !s.open('{') {
		return
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "gasused":
			s.quant(&r.GasUsed, &seen, 0)
		case "output":
			s.hex(&r.Output, &seen, 1)
		case "address":
			s.addr(&r.Address, &seen, 2)
		case "code":
			s.hex(&r.Code, &seen, 3)
		default:
			s.value()
		}
	}
}

// fastCallTraces decodes a debug_traceBlock* result made with the
// callTracer into one frame per element and the element's txHash, in sc
// (nil: lists of their own). It gives up on every element that is not a
// frame (a transaction the node failed to trace): DecodeCallTraces
// explains those.
func fastCallTraces(raw []byte, sc *scratch) (frames []*callFrame, txHashes []json.RawMessage, ok bool) {
	if !fastPaths {
		return nil, nil, false
	}
	s := newScanner(raw, sc)
	if !s.open('[') {
		return nil, nil, false
	}
	frames, txHashes = s.sc.callTops[:0], s.sc.callHashes[:0]
	for first := true; s.more(']', &first); {
		f, h := s.callElement()
		frames, txHashes = append(frames, f), append(txHashes, h)
	}
	s.sc.callTops, s.sc.callHashes = frames, txHashes
	s.end()
	return frames, txHashes, !s.bad && len(frames) > 0
}

// newFrame returns a zero callFrame of the scratch. A frame is filled
// while its children are read, through a pointer that must stay valid, so
// the list of frames is never grown in place: when it is full, a new one
// takes its place, and the frames handed out stay where they are.
func (s *scanner) newFrame() *callFrame {
	if len(s.sc.frames) == cap(s.sc.frames) {
		s.sc.frames = make([]callFrame, 0, max(256, 2*cap(s.sc.frames)))
	}
	s.sc.frames = append(s.sc.frames, callFrame{})
	return &s.sc.frames[len(s.sc.frames)-1]
}

// callElement reads one element: a bare frame (its type set), or a
// {"txHash", "result": frame} wrapper.
func (s *scanner) callElement() (*callFrame, json.RawMessage) {
	el := s.newFrame() // the element read as a frame
	var result *callFrame
	var txHash, errRaw json.RawMessage
	var typed bool
	if !s.open('{') {
		return nil, nil
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch k := s.key(); string(k) {
		case "type":
			typed = s.peek() != 'n'
			s.str(&el.Type, &seen, 0)
		case "txhash":
			s.raw(&txHash, &seen, 1)
		case "result":
			s.once(&seen, 2)
			if s.null() {
				result = nil
				continue
			}
			result = s.newFrame()
			s.callFrame(result)
		case "error":
			s.raw(&errRaw, &seen, 3)
		default:
			s.frameField(k, el, &seen)
		}
	}
	if s.bad {
		return nil, nil
	}
	if typed {
		// A bare frame: its error must read as a frame's error string.
		if present(errRaw) {
			if errRaw[0] != '"' {
				s.fail()
				return nil, nil
			}
			if err := json.Unmarshal(errRaw, &el.Error); err != nil {
				s.fail()
				return nil, nil
			}
		}
		return el, txHash
	}
	if result == nil {
		s.fail()
		return nil, nil
	}
	return result, txHash
}

func (s *scanner) callFrame(f *callFrame) {
	if !s.open('{') {
		return
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch k := s.key(); string(k) {
		case "type":
			s.str(&f.Type, &seen, 0)
		case "error":
			s.str(&f.Error, &seen, 3)
		default:
			s.frameField(k, f, &seen)
		}
	}
}

// frameField reads the member of a frame whose key k was just read, other
// than type and error.
func (s *scanner) frameField(k []byte, f *callFrame, seen *uint32) {
	switch string(k) {
	case "from":
		s.addr(&f.From, seen, 4)
	case "to":
		s.addr(&f.To, seen, 5)
	case "value":
		s.quant(&f.Value, seen, 6)
	case "gas":
		s.quant(&f.Gas, seen, 7)
	case "gasused":
		s.quant(&f.GasUsed, seen, 8)
	case "input":
		s.raw(&f.Input, seen, 9)
	case "output":
		s.raw(&f.Output, seen, 10)
	case "calls":
		s.once(seen, 11)
		f.Calls = s.calls()
	default:
		s.value()
	}
}

// calls reads a frame's children. Their frames' own children are read
// in between, so each child goes on a stack once it is read, and the
// frame's list is copied off the stack, into one list for all frames,
// when the last child is read.
func (s *scanner) calls() []*callFrame {
	if s.null() {
		return nil
	}
	if !s.open('[') {
		return nil
	}
	base := len(s.sc.callStack)
	for first := true; s.more(']', &first); {
		if s.peek() == 'n' {
			s.fail() // a null child: left to encoding/json
			return nil
		}
		c := s.newFrame()
		s.callFrame(c)
		s.sc.callStack = append(s.sc.callStack, c)
	}
	start := len(s.sc.calls)
	s.sc.calls = append(s.sc.calls, s.sc.callStack[base:]...)
	s.sc.callStack = s.sc.callStack[:base]
	if len(s.sc.calls) == start {
		return []*callFrame{}
	}
	return s.sc.calls[start:len(s.sc.calls):len(s.sc.calls)]
}
