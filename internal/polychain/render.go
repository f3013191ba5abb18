package polychain

import (
	"encoding/hex"
	"strconv"
)

func hexString(b []byte) string { return "0x" + hex.EncodeToString(b) }

func hexDecode(dst []byte, s string) { _, _ = hex.Decode(dst, []byte(s)) }

// jw appends JSON to a byte slice. The node's answers are written by hand
// through it rather than through encoding/json: the node renders a megabyte
// per block, and its cost must stay small next to the ingester's.
type jw struct{ b []byte }

func (w *jw) raw(s string) { w.b = append(w.b, s...) }

// key writes `"k":`.
func (w *jw) key(k string) {
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *jw) str(s string) {
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

// qty writes a JSON-RPC quantity: "0x2a".
func (w *jw) qty(n uint64) {
	w.b = append(w.b, '"', '0', 'x')
	w.b = strconv.AppendUint(w.b, n, 16)
	w.b = append(w.b, '"')
}

// data writes bytes as "0x..." hex.
func (w *jw) data(b []byte) {
	w.b = append(w.b, '"', '0', 'x')
	w.b = hex.AppendEncode(w.b, b)
	w.b = append(w.b, '"')
}

func (w *jw) hash(h [32]byte) { w.data(h[:]) }

// kv helpers write `"k":value,`.
func (w *jw) kStr(k, v string)        { w.key(k); w.str(v); w.b = append(w.b, ',') }
func (w *jw) kQty(k string, n uint64) { w.key(k); w.qty(n); w.b = append(w.b, ',') }
func (w *jw) kData(k string, b []byte) {
	w.key(k)
	w.data(b)
	w.b = append(w.b, ',')
}
func (w *jw) kHash(k string, h [32]byte) { w.key(k); w.hash(h); w.b = append(w.b, ',') }

// end replaces a trailing comma with c.
func (w *jw) end(c byte) {
	if n := len(w.b); n > 0 && w.b[n-1] == ',' {
		w.b[n-1] = c
		return
	}
	w.b = append(w.b, c)
}

// bloom is a 256-byte logs bloom made from a seed hash: real blooms of large
// blocks are dense, and their size is what matters here.
func bloom(seed [32]byte) []byte {
	b := make([]byte, 256)
	for i := 0; i < 256; i += 32 {
		copy(b[i:], seed[:])
	}
	return b
}

// RenderBlock is the eth_getBlockByNumber answer: full transaction objects,
// or their hashes.
func RenderBlock(b *Block, full bool) []byte {
	w := &jw{b: make([]byte, 0, 2048+len(b.Txs)*1200)}
	w.raw("{")
	w.kQty("baseFeePerGas", b.BaseFee)
	w.kQty("difficulty", 0x14)
	w.kData("extraData", b.ExtraData)
	w.kQty("gasLimit", b.GasLimit)
	w.kQty("gasUsed", b.GasUsed)
	w.kHash("hash", b.Hash)
	w.kData("logsBloom", bloom(b.ReceiptsRoot))
	w.kStr("miner", "0x0000000000000000000000000000000000000000")
	w.kHash("mixHash", [32]byte{})
	w.kStr("nonce", "0x0000000000000000")
	w.kQty("number", b.Number)
	w.kHash("parentHash", b.Parent)
	w.kHash("receiptsRoot", b.ReceiptsRoot)
	w.kStr("sha3Uncles", "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347")
	w.kQty("size", b.Size)
	w.kHash("stateRoot", b.StateRoot)
	w.kQty("timestamp", uint64(b.Time))
	w.kQty("totalDifficulty", 0x14*b.Number)
	w.key("transactions")
	w.raw("[")
	for _, t := range b.Txs {
		if full {
			renderTx(w, b, t)
		} else {
			w.hash(t.Hash)
		}
		w.raw(",")
	}
	w.end(']')
	w.raw(",")
	w.kHash("transactionsRoot", b.TxRoot)
	w.key("uncles")
	w.raw("[]}")
	return w.b
}

func renderTx(w *jw, b *Block, t *Tx) {
	w.raw("{")
	w.kHash("blockHash", b.Hash)
	w.kQty("blockNumber", b.Number)
	w.kStr("from", t.From)
	w.kQty("gas", t.Gas)
	w.kQty("gasPrice", t.GasPrice)
	if t.Type == 2 {
		w.kQty("maxFeePerGas", t.MaxFee)
		w.kQty("maxPriorityFeePerGas", t.MaxPrio)
	}
	w.kHash("hash", t.Hash)
	w.kData("input", t.Input)
	w.kQty("nonce", t.Nonce)
	w.key("to")
	if t.To == "" {
		w.raw("null,")
	} else {
		w.str(t.To)
		w.raw(",")
	}
	w.kQty("transactionIndex", uint64(t.Index))
	w.kQty("value", t.Value)
	w.kQty("type", uint64(t.Type))
	if t.Type == 2 {
		w.key("accessList")
		w.raw("[],")
		w.kQty("chainId", ChainID)
		w.kQty("v", uint64(t.R[0]&1))
		w.kQty("yParity", uint64(t.R[0]&1))
	} else {
		w.kQty("chainId", ChainID)
		w.kQty("v", ChainID*2+35+uint64(t.R[0]&1))
	}
	w.kHash("r", t.R)
	w.kHash("s", t.S)
	w.end('}')
}

// RenderReceipts is the eth_getBlockReceipts answer.
func RenderReceipts(b *Block) []byte {
	w := &jw{b: make([]byte, 0, len(b.Txs)*4096)}
	w.raw("[")
	for _, t := range b.Txs {
		renderReceipt(w, b, t)
		w.raw(",")
	}
	w.end(']')
	return w.b
}

// RenderReceipt is the eth_getTransactionReceipt answer for transaction i.
func RenderReceipt(b *Block, i int) []byte {
	w := &jw{}
	renderReceipt(w, b, b.Txs[i])
	return w.b
}

func renderReceipt(w *jw, b *Block, t *Tx) {
	w.raw("{")
	w.kHash("blockHash", b.Hash)
	w.kQty("blockNumber", b.Number)
	w.key("contractAddress")
	if t.Contract == "" {
		w.raw("null,")
	} else {
		w.str(t.Contract)
		w.raw(",")
	}
	w.kQty("cumulativeGasUsed", t.CumGas)
	w.kQty("effectiveGasPrice", t.EffPrice)
	w.kStr("from", t.From)
	w.kQty("gasUsed", t.GasUsed)
	w.key("logs")
	w.raw("[")
	for _, l := range t.Logs {
		w.raw("{")
		w.kStr("address", l.Address)
		w.key("topics")
		w.raw("[")
		for _, tp := range l.Topics {
			w.hash(tp)
			w.raw(",")
		}
		w.end(']')
		w.raw(",")
		w.kData("data", l.Data)
		w.kQty("blockNumber", b.Number)
		w.kHash("transactionHash", t.Hash)
		w.kQty("transactionIndex", uint64(t.Index))
		w.kHash("blockHash", b.Hash)
		w.kQty("logIndex", uint64(l.Index))
		w.raw(`"removed":false},`)
	}
	w.end(']')
	w.raw(",")
	w.kData("logsBloom", bloom(t.R))
	if t.Status {
		w.kQty("status", 1)
	} else {
		w.kQty("status", 0)
	}
	w.key("to")
	if t.To == "" {
		w.raw("null,")
	} else {
		w.str(t.To)
		w.raw(",")
	}
	w.kHash("transactionHash", t.Hash)
	w.kQty("transactionIndex", uint64(t.Index))
	w.kQty("type", uint64(t.Type))
	w.end('}')
}

// RenderParity is the trace_block answer (Parity format, as Erigon writes
// it): one element per frame, depth-first pre-order per transaction.
func RenderParity(b *Block) []byte {
	w := &jw{b: make([]byte, 0, len(b.Txs)*8192)}
	w.raw("[")
	for _, t := range b.Txs {
		renderParityFrame(w, b, t, t.Root, nil)
	}
	w.end(']')
	return w.b
}

func renderParityFrame(w *jw, b *Block, t *Tx, f *Frame, addr []int) {
	w.raw(`{"action":{`)
	typ := "call"
	switch f.Kind {
	case "CREATE", "CREATE2":
		typ = "create"
		w.kStr("from", f.From)
		w.kQty("gas", f.Gas)
		w.kData("init", f.Input)
		w.kQty("value", f.Value)
		if f.Kind == "CREATE2" {
			w.kStr("creationMethod", "create2")
		} else {
			w.kStr("creationMethod", "create")
		}
	case "SELFDESTRUCT":
		typ = "suicide"
		w.kStr("address", f.From)
		w.kStr("refundAddress", f.To)
		w.kQty("balance", f.Value)
	default:
		callType := map[string]string{"CALL": "call", "STATICCALL": "staticcall", "DELEGATECALL": "delegatecall"}[f.Kind]
		w.kStr("from", f.From)
		w.kStr("callType", callType)
		w.kQty("gas", f.Gas)
		w.kData("input", f.Input)
		w.kStr("to", f.To)
		w.kQty("value", f.Value)
	}
	w.end('}')
	w.raw(",")
	w.kHash("blockHash", b.Hash)
	w.key("blockNumber")
	w.b = strconv.AppendUint(w.b, b.Number, 10)
	w.raw(",")
	if f.Error != "" {
		w.kStr("error", f.Error)
	}
	w.key("result")
	switch {
	case f.Kind == "SELFDESTRUCT":
		w.raw("null,")
	case typ == "create":
		w.raw("{")
		if f.Error == "" {
			w.kStr("address", f.To)
		}
		w.kData("code", f.Output)
		w.kQty("gasUsed", f.GasUsed)
		w.end('}')
		w.raw(",")
	default:
		w.raw("{")
		w.kQty("gasUsed", f.GasUsed)
		w.kData("output", f.Output)
		w.end('}')
		w.raw(",")
	}
	w.key("subtraces")
	w.b = strconv.AppendInt(w.b, int64(len(f.Calls)), 10)
	w.raw(",")
	w.key("traceAddress")
	w.raw("[")
	for _, a := range addr {
		w.b = strconv.AppendInt(w.b, int64(a), 10)
		w.raw(",")
	}
	w.end(']')
	w.raw(",")
	w.kHash("transactionHash", t.Hash)
	w.key("transactionPosition")
	w.b = strconv.AppendInt(w.b, int64(t.Index), 10)
	w.raw(",")
	w.kStr("type", typ)
	w.end('}')
	w.raw(",")
	for i, c := range f.Calls {
		child := make([]int, len(addr)+1)
		copy(child, addr)
		child[len(addr)] = i
		renderParityFrame(w, b, t, c, child)
	}
}

// RenderCallTracer is the debug_traceBlockByNumber/ByHash answer with
// {"tracer":"callTracer"}, as geth and Bor write it: {"txHash", "result"}
// per transaction, the frame tree nested in calls.
func RenderCallTracer(b *Block) []byte {
	w := &jw{b: make([]byte, 0, len(b.Txs)*8192)}
	w.raw("[")
	for _, t := range b.Txs {
		w.raw("{")
		w.kHash("txHash", t.Hash)
		w.key("result")
		renderCallFrame(w, t.Root)
		w.raw("},")
	}
	w.end(']')
	return w.b
}

func renderCallFrame(w *jw, f *Frame) {
	w.raw("{")
	w.kStr("from", f.From)
	w.kQty("gas", f.Gas)
	w.kQty("gasUsed", f.GasUsed)
	w.kStr("to", f.To)
	w.kData("input", f.Input)
	if len(f.Output) > 0 {
		w.kData("output", f.Output)
	}
	if f.Error != "" {
		w.kStr("error", f.Error)
	}
	switch f.Kind {
	case "DELEGATECALL", "STATICCALL": // geth gives these no value
	default:
		w.kQty("value", f.Value)
	}
	w.kStr("type", f.Kind)
	if len(f.Calls) > 0 {
		w.key("calls")
		w.raw("[")
		for _, c := range f.Calls {
			renderCallFrame(w, c)
			w.raw(",")
		}
		w.end(']')
		w.raw(",")
	}
	w.end('}')
}
