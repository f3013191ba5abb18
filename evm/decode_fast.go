package evm

import "encoding/json"

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

// fastBlock decodes an eth_getBlockByNumber result into jb.
func fastBlock(raw []byte, jb *jsonBlock) bool {
	if !fastPaths {
		return false
	}
	s := &scanner{data: raw}
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
	out := []jsonTx{}
	for first := true; s.more(']', &first); {
		out = append(out, jsonTx{})
		s.tx(&out[len(out)-1])
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
			s.raw(&jt.From, &seen, 2)
		case "to":
			s.raw(&jt.To, &seen, 3)
		case "value":
			s.raw(&jt.Value, &seen, 4)
		case "gas":
			s.raw(&jt.Gas, &seen, 5)
		case "gasprice":
			s.raw(&jt.GasPrice, &seen, 6)
		case "maxfeepergas":
			s.raw(&jt.MaxFeePerGas, &seen, 7)
		case "maxpriorityfeepergas":
			s.raw(&jt.MaxPriorityFeePerGas, &seen, 8)
		case "nonce":
			s.raw(&jt.Nonce, &seen, 9)
		case "input":
			s.raw(&jt.Input, &seen, 10)
		case "data":
			s.raw(&jt.Data, &seen, 11)
		case "type":
			s.raw(&jt.Type, &seen, 12)
		default:
			s.value()
		}
	}
}

// fastReceipts decodes an eth_getBlockReceipts result; null elements stay
// nil.
func fastReceipts(raw []byte) ([]*jsonReceipt, bool) {
	if !fastPaths {
		return nil, false
	}
	s := &scanner{data: raw}
	if !s.open('[') {
		return nil, false
	}
	out := []*jsonReceipt{}
	var backing []jsonReceipt // one allocation for the receipts of a block
	for first := true; s.more(']', &first); {
		if s.null() {
			out = append(out, nil)
			continue
		}
		if len(backing) == cap(backing) {
			backing = make([]jsonReceipt, 0, max(16, 2*cap(backing)))
		}
		backing = append(backing, jsonReceipt{})
		jr := &backing[len(backing)-1]
		s.receipt(jr)
		out = append(out, jr)
	}
	s.end()
	return out, !s.bad
}

// fastReceipt decodes one eth_getTransactionReceipt result into jr.
func fastReceipt(raw []byte, jr *jsonReceipt) bool {
	if !fastPaths {
		return false
	}
	s := &scanner{data: raw}
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
			s.raw(&jr.From, &seen, 4)
		case "to":
			s.raw(&jr.To, &seen, 5)
		case "type":
			s.raw(&jr.Type, &seen, 6)
		case "status":
			s.raw(&jr.Status, &seen, 7)
		case "gasused":
			s.raw(&jr.GasUsed, &seen, 8)
		case "cumulativegasused":
			s.raw(&jr.CumulativeGasUsed, &seen, 9)
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
	out := []jsonLog{}
	for first := true; s.more(']', &first); {
		if s.peek() == 'n' {
			s.fail() // a null log: encoding/json keeps a zero element
			return nil
		}
		out = append(out, jsonLog{})
		s.log(&out[len(out)-1])
	}
	return out
}

func (s *scanner) log(jl *jsonLog) {
	if !s.open('{') {
		return
	}
	var seen uint32
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "address":
			s.raw(&jl.Address, &seen, 0)
		case "topics":
			s.once(&seen, 1)
			jl.Topics = s.rawList()
		case "data":
			s.raw(&jl.Data, &seen, 2)
		case "logindex":
			s.raw(&jl.LogIndex, &seen, 3)
		default:
			s.value()
		}
	}
}

// rawList reads a []json.RawMessage: null is nil, [] is empty.
func (s *scanner) rawList() []json.RawMessage {
	if s.null() {
		return nil
	}
	if !s.open('[') {
		return nil
	}
	var buf [4]json.RawMessage // topics: at most four in a valid log
	out := buf[:0]
	for first := true; s.more(']', &first); {
		out = append(out, s.value())
	}
	return append([]json.RawMessage{}, out...)
}

// fastParity decodes a trace_block result (or geth's flatCallTracer
// output) into its elements.
func fastParity(raw []byte) ([]parityTrace, bool) {
	if !fastPaths {
		return nil, false
	}
	s := &scanner{data: raw}
	out := s.parityList()
	s.end()
	return out, !s.bad
}

// parityList reads an array of parityTrace; null is nil.
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
			pt.Action = new(parityAction)
			s.parityAction(pt.Action)
		case "result":
			s.once(&seen, 2)
			// The result is a trace's parityResult, or the traces of a
			// flatCallTracer wrapper; each is decoded here when it reads
			// as one, and the slices left for parityToTrace otherwise.
			switch s.peek() {
			case '{':
				start := s.i
				pt.result = new(parityResult)
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
			s.raw(&a.From, &seen, 1)
		case "to":
			s.raw(&a.To, &seen, 2)
		case "value":
			s.raw(&a.Value, &seen, 3)
		case "gas":
			s.raw(&a.Gas, &seen, 4)
		case "input":
			s.raw(&a.Input, &seen, 5)
		case "init":
			s.raw(&a.Init, &seen, 6)
		case "address":
			s.raw(&a.Address, &seen, 7)
		case "refundaddress":
			s.raw(&a.RefundAddress, &seen, 8)
		case "balance":
			s.raw(&a.Balance, &seen, 9)
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
			s.raw(&r.GasUsed, &seen, 0)
		case "output":
			s.raw(&r.Output, &seen, 1)
		case "address":
			s.raw(&r.Address, &seen, 2)
		case "code":
			s.raw(&r.Code, &seen, 3)
		default:
			s.value()
		}
	}
}

// fastCallTraces decodes a debug_traceBlock* result made with the
// callTracer into one frame per element and the element's txHash. It gives
// up on every element that is not a frame (a transaction the node failed to
// trace): DecodeCallTraces explains those.
func fastCallTraces(raw []byte) (frames []*callFrame, txHashes []json.RawMessage, ok bool) {
	if !fastPaths {
		return nil, nil, false
	}
	s := &scanner{data: raw}
	if !s.open('[') {
		return nil, nil, false
	}
	for first := true; s.more(']', &first); {
		f, h := s.callElement()
		frames, txHashes = append(frames, f), append(txHashes, h)
	}
	s.end()
	return frames, txHashes, !s.bad && frames != nil
}

// callElement reads one element: a bare frame (its type set), or a
// {"txHash", "result": frame} wrapper.
func (s *scanner) callElement() (*callFrame, json.RawMessage) {
	var el callFrame // the element read as a frame
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
			result = new(callFrame)
			s.callFrame(result)
		case "error":
			s.raw(&errRaw, &seen, 3)
		default:
			s.frameField(k, &el, &seen)
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
		return &el, txHash
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
		s.raw(&f.From, seen, 4)
	case "to":
		s.raw(&f.To, seen, 5)
	case "value":
		s.raw(&f.Value, seen, 6)
	case "gas":
		s.raw(&f.Gas, seen, 7)
	case "gasused":
		s.raw(&f.GasUsed, seen, 8)
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

func (s *scanner) calls() []*callFrame {
	if s.null() {
		return nil
	}
	if !s.open('[') {
		return nil
	}
	out := []*callFrame{}
	for first := true; s.more(']', &first); {
		if s.peek() == 'n' {
			s.fail() // a null child: left to encoding/json
			return nil
		}
		c := new(callFrame)
		s.callFrame(c)
		out = append(out, c)
	}
	return out
}
