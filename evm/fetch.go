// Package evm reads EVM chains over standard Ethereum JSON-RPC (through
// package jsonrpc): decoding of blocks, receipts and traces (Parity
// trace_block and geth's callTracer) into chainquery records, the probe of
// what a node answers, and a fetcher that assembles complete blocks.
//
// The decoders read the values of JSON-RPC answers (hexutil.go) leniently
// where real nodes differ from the letter of the spec (quantities with
// leading zeros, "0x" for zero, decimal JSON numbers in Parity traces, odd
// digit counts in data, absent or null fields) and strictly where a wrong
// value would file a record under the wrong key: hashes must be 32 bytes and
// addresses 20.
package evm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/jsonrpc"
)

// Trace methods a node may answer.
const (
	TracesAuto       = "auto"        // probe: trace_block, else debug_traceBlockByNumber
	TracesParity     = "trace_block" // Erigon, Nethermind, Reth, anvil
	TracesCallTracer = "debug_trace" // geth, Bor: debug_traceBlockByNumber with callTracer
	TracesOff        = "off"
)

// Plan says which call fills which table.
type Plan struct {
	BlockReceipts bool   // eth_getBlockReceipts; else eth_getTransactionReceipt per transaction
	Traces        string // TracesParity, TracesCallTracer or TracesOff
}

// String describes the plan for the start-up log.
func (p Plan) String() string {
	var b strings.Builder
	b.WriteString("eth_getBlockByNumber(full) fills blocks and transactions; ")
	calls := "1"
	if p.BlockReceipts {
		b.WriteString("eth_getBlockReceipts fills receipts and logs; ")
		calls = "2"
	} else {
		b.WriteString("eth_getTransactionReceipt (one per transaction) fills receipts and logs; ")
		calls = "1 + one per transaction"
	}
	switch p.Traces {
	case TracesParity:
		b.WriteString("trace_block fills traces; ")
		calls += " + 1"
	case TracesCallTracer:
		b.WriteString("debug_traceBlockByNumber (callTracer) fills traces; ")
		calls += " + 1"
	default:
		b.WriteString("traces off; ")
	}
	return b.String() + "calls per block: " + calls
}

// Probe asks the node which methods it answers and returns the plan to
// follow. traces is one of the Traces* values; TracesAuto picks what the node
// supports and fails if it supports neither.
func Probe(ctx context.Context, c *jsonrpc.Client, traces string) (Plan, error) {
	var head string
	if err := c.Call(ctx, &head, "eth_blockNumber"); err != nil {
		return Plan{}, fmt.Errorf("eth_blockNumber: %w", err)
	}
	supports := func(method string, params ...any) (bool, error) {
		var v json.RawMessage
		err := c.Call(ctx, &v, method, params...)
		if err == nil {
			return true, nil
		} else if jsonrpc.IsMethodNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("%s: %w", method, err)
	}
	var p Plan
	var err error
	if p.BlockReceipts, err = supports("eth_getBlockReceipts", head); err != nil {
		return p, err
	}
	parity := func() (bool, error) { return supports("trace_block", head) }
	callTracer := func() (bool, error) {
		return supports("debug_traceBlockByNumber", head, map[string]any{"tracer": "callTracer"})
	}
	var ok bool
	switch traces {
	case TracesOff, "":
		p.Traces = TracesOff
	case TracesParity:
		if ok, err = parity(); err == nil && !ok {
			err = errors.New("the node does not answer trace_block")
		}
		p.Traces = TracesParity
	case TracesCallTracer:
		if ok, err = callTracer(); err == nil && !ok {
			err = errors.New("the node does not answer debug_traceBlockByNumber")
		}
		p.Traces = TracesCallTracer
	case TracesAuto:
		if ok, err = parity(); err == nil && ok {
			p.Traces = TracesParity
		} else if err == nil {
			if ok, err = callTracer(); err == nil && ok {
				p.Traces = TracesCallTracer
			} else if err == nil {
				err = errors.New("the node answers neither trace_block nor debug_traceBlockByNumber; use --traces off")
			}
		}
	default:
		err = fmt.Errorf("unknown trace method %q: use auto, trace_block, debug_trace or off", traces)
	}
	return p, err
}

// Fetcher assembles complete blocks from a node following a Plan. It
// implements ingest.EVMSource.
type Fetcher struct {
	Client *jsonrpc.Client
	Chain  chainquery.Chain
	Plan   Plan
	Logger *slog.Logger

	// A block the node does not have yet, or answers for incompletely (null
	// or empty receipts or traces for a block with transactions, as replicas
	// that lag do), is asked for again up to Attempts times, Wait apart.
	Attempts int
	Wait     time.Duration
}

// NewFetcher returns a fetcher with default patience: about five minutes for
// a block to become complete.
func NewFetcher(c *jsonrpc.Client, chain chainquery.Chain, p Plan, logger *slog.Logger) *Fetcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Fetcher{Client: c, Chain: chain, Plan: p, Logger: logger, Attempts: 60, Wait: 5 * time.Second}
}

// Head returns the node's latest block number.
func (f *Fetcher) Head(ctx context.Context) (uint64, error) {
	var head quantity
	err := f.Client.Call(ctx, &head, "eth_blockNumber")
	return uint64(head), err
}

// quantity is a JSON-RPC quantity ("0x2a"). Decoding into it checks the
// answer, so that Client.Call asks again when a node answers nonsense.
type quantity uint64

func (q *quantity) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("want a hex quantity, got %s", snippet(b))
	}
	n, err := parseUint64(s)
	*q = quantity(n)
	return err
}

// blockHeader is the part of a block that BlockHash reads; decoding into it
// checks that the answer is a block with a hash (or null: no such block).
type blockHeader struct {
	Hash chainquery.Hash
}

func (h *blockHeader) UnmarshalJSON(b []byte) error {
	var v struct {
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var err error
	h.Hash, err = chainquery.ParseHash("hash", v.Hash)
	return err
}

// BlockHash returns the hash of the node's block at number. A node that
// does not have the block yet is asked again, Wait apart, up to Attempts
// times.
func (f *Fetcher) BlockHash(ctx context.Context, number uint64) (chainquery.Hash, error) {
	for attempt := 1; ; attempt++ {
		var b *blockHeader
		if err := f.Client.Call(ctx, &b, "eth_getBlockByNumber", hexNumber(number), false); err != nil {
			return chainquery.Hash{}, err
		}
		if b != nil {
			return b.Hash, nil
		}
		if attempt >= f.Attempts {
			return chainquery.Hash{}, fmt.Errorf("eth_getBlockByNumber %d: the node has no such block", number)
		}
		if !chainquery.Sleep(ctx, f.Wait) {
			return chainquery.Hash{}, ctx.Err()
		}
	}
}

// Blocks returns the complete blocks from..to in order.
func (f *Fetcher) Blocks(ctx context.Context, from, to uint64) ([]*chainquery.BlockData, error) {
	out := make([]*chainquery.BlockData, 0, to-from+1)
	pending := make([]uint64, 0, to-from+1)
	for n := from; n <= to; n++ {
		pending = append(pending, n)
	}
	done := map[uint64]*chainquery.BlockData{}
	for attempt := 1; len(pending) > 0; attempt++ {
		got, failed := f.fetch(ctx, pending)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for n, d := range got {
			done[n] = d
		}
		if len(failed) == 0 {
			break
		}
		var first uint64
		var firstErr error
		for n, err := range failed {
			if firstErr == nil || n < first {
				first, firstErr = n, err
			}
		}
		if attempt >= f.Attempts {
			return nil, fmt.Errorf("block %d: %w (after %d attempts)", first, firstErr, attempt)
		}
		f.Logger.Warn("blocks incomplete, asking again", "chain", f.Chain, "blocks", len(failed), "block", first, "error", firstErr, "attempt", attempt)
		if !chainquery.Sleep(ctx, f.Wait) {
			return nil, ctx.Err()
		}
		pending = pending[:0]
		for n := range failed {
			pending = append(pending, n)
		}
		slices.Sort(pending)
	}
	for n := from; n <= to; n++ {
		out = append(out, done[n])
	}
	return out, nil
}

// fetch asks for the given blocks, each in its own requests, all at once,
// and returns the complete ones and why the others are not. A node takes
// its time over each call (a trace_block 10-400 ms), and a node such as
// go-ethereum's answers a batch's calls one after another: one batch of a
// fetch's blocks, then its receipts and traces, kept the ingester waiting
// on the node (docs/benchmarks.md, "Issue 30, first measurements"). Each
// block's answers are decoded as they come and their buffers let go, so a
// fetch holds at most its own blocks' answers at once.
func (f *Fetcher) fetch(ctx context.Context, numbers []uint64) (map[uint64]*chainquery.BlockData, map[uint64]error) {
	got := make([]*chainquery.BlockData, len(numbers))
	errs := make([]error, len(numbers))
	var wg sync.WaitGroup
	for i, n := range numbers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = f.fetchBlock(ctx, n)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, allFailed(numbers, err)
	}
	blocks, failed := map[uint64]*chainquery.BlockData{}, map[uint64]error{}
	for i, n := range numbers {
		if errs[i] != nil {
			failed[n] = errs[i]
		} else {
			blocks[n] = got[i]
		}
	}
	return blocks, failed
}

// fetchBlock asks for block n, then for its receipts and traces in one
// request, and returns it complete, or why it is not. The answers' buffers
// are used again once decoded (jsonrpc.Client.BatchCallThen): the decoders
// copy what they keep.
func (f *Fetcher) fetchBlock(ctx context.Context, n uint64) (*chainquery.BlockData, error) {
	r := &jsonrpc.Request{Method: "eth_getBlockByNumber", Params: []any{hexNumber(n), true}}
	if f.Plan.BlockReceipts && f.Plan.Traces != TracesCallTracer {
		return f.fetchAtOnce(ctx, n, r)
	}
	var d *chainquery.BlockData
	err := f.Client.BatchCallThen(ctx, []*jsonrpc.Request{r}, func() error {
		var err error
		d, err = f.blockAnswer(n, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(d.Transactions) == 0 {
		return d, f.complete(d, nil, nil)
	}
	var receipts []*jsonrpc.Request
	if f.Plan.BlockReceipts {
		receipts = []*jsonrpc.Request{{Method: "eth_getBlockReceipts", Params: []any{hexNumber(n)}}}
	} else {
		for _, tx := range d.Transactions {
			receipts = append(receipts, &jsonrpc.Request{Method: "eth_getTransactionReceipt", Params: []any{tx.Hash.Hex()}})
		}
	}
	var traces *jsonrpc.Request
	switch f.Plan.Traces {
	case TracesParity:
		traces = &jsonrpc.Request{Method: "trace_block", Params: []any{hexNumber(n)}}
	case TracesCallTracer:
		traces = &jsonrpc.Request{Method: "debug_traceBlockByHash", Params: []any{d.Block.Hash.Hex(), map[string]any{"tracer": "callTracer"}}}
	}
	reqs := receipts
	if traces != nil {
		reqs = append(reqs[:len(reqs):len(reqs)], traces)
	}
	if err := f.Client.BatchCallThen(ctx, reqs, func() error { return f.complete(d, receipts, traces) }); err != nil {
		return nil, err
	}
	return d, nil
}

// fetchAtOnce is fetchBlock when no call names what another answers (the
// block's hash, its transactions' hashes): the block, its receipts and its
// traces are asked for in three requests at once, so that a node's
// latency is waited for once a block, not once for the block and then for
// each call of the batch after it (a node runs a batch's calls one after
// another). Against the Polygon-shaped node answering each call after
// 100 ms, that was 300 ms a block (docs/benchmarks.md, issue 30). A block
// without transactions leaves the other two answers unread. Receipts and
// traces name their block's hash: answers from two sides of a reorg fail
// the block (decodeReceipt, parityToTrace), and the loop asks again.
//
// Each is sent alone, so each result is bounded loosely (jsonrpc.Request.Loose):
// the decoders find where it ends.
func (f *Fetcher) fetchAtOnce(ctx context.Context, n uint64, block *jsonrpc.Request) (*chainquery.BlockData, error) {
	block.Loose = true
	receipts := []*jsonrpc.Request{{Method: "eth_getBlockReceipts", Params: []any{hexNumber(n)}, Loose: true}}
	groups := [][]*jsonrpc.Request{{block}, receipts}
	var traces *jsonrpc.Request
	if f.Plan.Traces == TracesParity {
		traces = &jsonrpc.Request{Method: "trace_block", Params: []any{hexNumber(n)}, Loose: true}
		groups = append(groups, []*jsonrpc.Request{traces})
	}
	// Without the block, the other calls are of no use: a node that does
	// not have it yet may answer them with an error that would be retried.
	lead := func() bool { return block.Err == nil && !isNull(block.Result) }
	var d *chainquery.BlockData
	err := f.Client.GroupsThen(ctx, groups, lead, func() error {
		err := exactly(block, func() (err error) {
			d, err = f.blockAnswer(n, block)
			return err
		})
		if err != nil {
			return err
		}
		if len(d.Transactions) == 0 {
			return f.complete(d, nil, nil)
		}
		return f.complete(d, receipts, traces)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// blockAnswer decodes r, the answer of eth_getBlockByNumber for block n.
func (f *Fetcher) blockAnswer(n uint64, r *jsonrpc.Request) (*chainquery.BlockData, error) {
	switch {
	case r.Err != nil:
		return nil, fmt.Errorf("eth_getBlockByNumber: %w", r.Err)
	case isNull(r.Result):
		return nil, errors.New("eth_getBlockByNumber: the node does not have this block yet")
	}
	var notes decodeNotes
	d, err := decodeBlockWithNotes(f.Chain, r.Result, &notes)
	f.logNotes(n, "eth_getBlockByNumber", notes)
	if err != nil {
		return nil, fmt.Errorf("eth_getBlockByNumber: %w", err)
	} else if d.Block.Number != n {
		return nil, fmt.Errorf("eth_getBlockByNumber: asked for block %d, got %d", n, d.Block.Number)
	}
	return d, nil
}

// complete applies receipts and traces to d and checks that nothing is
// missing.
func (f *Fetcher) complete(d *chainquery.BlockData, receipts []*jsonrpc.Request, traces *jsonrpc.Request) error {
	if len(d.Transactions) == 0 {
		return CheckComplete(d, f.Plan.Traces != TracesOff)
	}
	// A decoder that fails leaves d as it was, so it can run again.
	if err := exactly(receipts[0], func() error { return f.applyReceipts(d, receipts) }); err != nil {
		return err
	}
	if traces != nil {
		if err := exactly(traces, func() error { return f.applyTraces(d, traces) }); err != nil {
			return err
		}
		FinishStatus(d)
	}
	return CheckComplete(d, traces != nil)
}

// exactly runs decode, the decoding of r's answer, and once more when it
// failed on a loosely bounded result that reads otherwise member by member
// (jsonrpc.Request.Loose, Exact).
func exactly(r *jsonrpc.Request, decode func() error) error {
	err := decode()
	if err != nil && r.Exact() {
		err = decode()
	}
	return err
}

// applyReceipts applies the answers of receipts (one eth_getBlockReceipts,
// or an eth_getTransactionReceipt for each transaction) to d.
func (f *Fetcher) applyReceipts(d *chainquery.BlockData, receipts []*jsonrpc.Request) error {
	var raw []json.RawMessage
	for _, r := range receipts {
		if r.Err != nil {
			return fmt.Errorf("%s: %w", r.Method, r.Err)
		}
		if isNull(r.Result) {
			return fmt.Errorf("%s: null answer for a block with %d transactions", r.Method, len(d.Transactions))
		}
		raw = append(raw, r.Result)
	}
	var notes decodeNotes
	var err error
	if receipts[0].Method == "eth_getBlockReceipts" {
		err = applyBlockReceipts(d, raw[0], &notes)
	} else {
		err = applyReceiptsWithNotes(d, raw, &notes)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", receipts[0].Method, err)
	}
	f.logNotes(d.Block.Number, receipts[0].Method, notes)
	return nil
}

// applyTraces decodes the answer of traces into d.Traces.
func (f *Fetcher) applyTraces(d *chainquery.BlockData, traces *jsonrpc.Request) error {
	if traces.Err != nil {
		return fmt.Errorf("%s: %w", traces.Method, traces.Err)
	}
	if isNull(traces.Result) {
		return fmt.Errorf("%s: null answer for a block with %d transactions", traces.Method, len(d.Transactions))
	}
	var notes decodeNotes
	var err error
	if f.Plan.Traces == TracesParity {
		err = decodeParityTracesWithNotes(d, traces.Result, &notes)
	} else {
		err = decodeCallTracesWithNotes(d, traces.Result, &notes)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", traces.Method, err)
	}
	f.logNotes(d.Block.Number, traces.Method, notes)
	return nil
}

// logNotes logs the fields a decoder could not read and left empty: the
// record is stored with what is known, and a person can look at the rest.
func (f *Fetcher) logNotes(block uint64, method string, notes decodeNotes) {
	for i, n := range notes {
		if i == 10 {
			f.Logger.Warn("more odd fields left empty", "chain", f.Chain, "block", block, "method", method, "count", len(notes)-i)
			return
		}
		f.Logger.Warn("odd field left empty", "chain", f.Chain, "block", block, "method", method, "note", n)
	}
}

func allFailed(numbers []uint64, err error) map[uint64]error {
	m := make(map[uint64]error, len(numbers))
	for _, n := range numbers {
		m[n] = err
	}
	return m
}

func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null" || string(s) == "[]" || string(s) == "{}"
}

// snippet is the start of a node's answer, for an error message.
func snippet(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func hexNumber(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }
