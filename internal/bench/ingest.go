package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/jsonrpc"
)

// IngestOptions says what to ingest, from where, and how.
type IngestOptions struct {
	Chainquery  string // the chainquery binary
	DSN         string // a database DSN; it should hold no polygon blocks yet
	RPC         string // the node
	From, To    uint64
	Traces      string // evm.TracesParity or evm.TracesCallTracer
	Batch       int    // blocks per fetch (the ingester's --batch)
	Concurrency int    // fetches in flight (the ingester's --concurrency)
	CPUs        string // taskset CPU list for the ingester, or ""
	// Progress, when set, is called with each stage's description.
	Progress func(string)
}

// IngestResult is one ingestion next to the raw fetch of the same calls.
type IngestResult struct {
	DSN         string
	Traces      string
	Blocks      uint64
	RawSecs     [2]float64 // raw fetches just before and just after the ingestion
	RawBytes    int64      // bytes of answers one raw fetch read
	IngestSecs  float64
	PeakRSS     int64   // of the ingester, bytes
	CPUSecs     float64 // the ingester's, user and system, start-up included
	RawBlocksPS float64
	BlocksPS    float64
}

// CPUPerBlock is the ingester's CPU time a block, in milliseconds.
func (r *IngestResult) CPUPerBlock() float64 { return r.CPUSecs * 1000 / float64(r.Blocks) }

// Ratio is the ingestion rate over the raw fetch rate.
func (r *IngestResult) Ratio() float64 { return r.BlocksPS / r.RawBlocksPS }

// Ingest measures a raw fetch, the real ingester, and a raw fetch again: the
// node's speed drifts over a run, so the ceiling is the mean of the two.
func Ingest(ctx context.Context, o IngestOptions) (*IngestResult, error) {
	if o.Batch <= 0 {
		o.Batch = 10
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	res := &IngestResult{DSN: o.DSN, Traces: o.Traces, Blocks: o.To - o.From + 1}
	raw := func(i int) error {
		say("raw fetch %d of blocks %d-%d (%s)", i+1, o.From, o.To, o.Traces)
		start := time.Now()
		n, err := RawFetch(ctx, o.RPC, o.Traces, o.From, o.To, o.Batch, o.Concurrency)
		res.RawSecs[i] = time.Since(start).Seconds()
		res.RawBytes = n
		return err
	}
	if err := raw(0); err != nil {
		return nil, err
	}
	say("ingesting blocks %d-%d into %s", o.From, o.To, RedactDSN(o.DSN))
	argv := Command(o.CPUs, o.Chainquery, "ingest", "evm", "--db", o.DSN, "--chain", "polygon", "--rpc", o.RPC,
		"--from", strconv.FormatUint(o.From, 10), "--to", strconv.FormatUint(o.To, 10), "--confirmations", "0",
		"--traces", o.Traces, "--batch", strconv.Itoa(o.Batch), "--concurrency", strconv.Itoa(o.Concurrency),
		"--log-format", "json")
	start := time.Now()
	p, err := Start(argv)
	if err != nil {
		return nil, err
	}
	if err := p.Wait(); err != nil {
		return nil, err
	}
	res.IngestSecs = time.Since(start).Seconds()
	res.PeakRSS = p.PeakRSS()
	res.CPUSecs = p.CPUSecs()
	// A rate is only the ingester's if it stored the whole range in this
	// run: a database that held some of it already would resume past them
	// and report a rate over fewer blocks.
	if n, head, ok := ingested(p.Tail()); !ok {
		return nil, fmt.Errorf("the ingester did not log its done line:\n%s", p.Tail())
	} else if n != res.Blocks || head != o.To {
		return nil, fmt.Errorf("the ingester stored %d blocks up to %d, not %d up to %d: %s held some of them already (use a fresh database)",
			n, head, res.Blocks, o.To, RedactDSN(o.DSN))
	}
	if err := raw(1); err != nil {
		return nil, err
	}
	res.RawBlocksPS = float64(res.Blocks) / ((res.RawSecs[0] + res.RawSecs[1]) / 2)
	res.BlocksPS = float64(res.Blocks) / res.IngestSecs
	return res, nil
}

// doneLine is the last line of `chainquery ingest evm --log-format json`.
var doneLine = regexp.MustCompile(`"msg":"done".*"blocks":([0-9]+).*"stored_head":([0-9]+)`)

// ingested reads the blocks an ingester stored and its stored head from its
// output's done line.
func ingested(tail string) (blocks, head uint64, ok bool) {
	m := doneLine.FindAllStringSubmatch(tail, -1)
	if m == nil {
		return 0, 0, false
	}
	last := m[len(m)-1]
	blocks, err1 := strconv.ParseUint(last[1], 10, 64)
	head, err2 := strconv.ParseUint(last[2], 10, 64)
	return blocks, head, err1 == nil && err2 == nil
}

// RedactDSN drops a PostgreSQL DSN's password and parameters.
func RedactDSN(dsn string) string {
	if !strings.HasPrefix(dsn, "postgres") {
		return dsn
	}
	if at := strings.LastIndex(dsn, "@"); at >= 0 {
		if i := strings.Index(dsn, "://"); i >= 0 {
			user := dsn[i+3 : at]
			if c := strings.Index(user, ":"); c >= 0 {
				user = user[:c]
			}
			dsn = dsn[:i+3] + user + dsn[at:]
		}
	}
	if q := strings.Index(dsn, "?"); q >= 0 {
		dsn = dsn[:q]
	}
	return dsn
}

// RawFetch makes the calls the ingester's fetcher makes for blocks
// from..to, as it makes them (evm.Fetcher.fetchBlock): for trace_block, or
// no traces, a block's eth_getBlockByNumber(full), eth_getBlockReceipts
// and trace_block sent at once, each alone, their results left unread
// (jsonrpc.Request.Loose); for the callTracer, the block first, then its
// receipts and debug_traceBlockByHash in one batch. batch*concurrency
// blocks are in flight, the ingester's window. It returns the bytes of
// answers read: the ceiling no ingester can pass.
//
// It reads nothing it does not need. Until session 33 it sent a batch of
// ten blocks, then a batch of their receipts and traces, read every
// answer's envelope and each block's hash with encoding/json: ~3.2 ms of
// CPU a block against the ingester's pattern's ~1.1, on two cores that the
// node shares, and half the blocks a second of the leaner fetch
// (docs/benchmarks.md, issue 30, session 33).
func RawFetch(ctx context.Context, url, traces string, from, to uint64, batch, concurrency int) (int64, error) {
	rpc := jsonrpc.NewClient(url)
	var wg sync.WaitGroup
	var bytes atomic.Int64
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	// read checks the answers of reqs and counts their bytes.
	read := func(n uint64, reqs ...*jsonrpc.Request) error {
		for _, r := range reqs {
			if r.Err != nil {
				return fmt.Errorf("block %d: %s: %w", n, r.Method, r.Err)
			}
			if len(r.Result) == 0 || string(r.Result[:min(4, len(r.Result))]) == "null" {
				return fmt.Errorf("block %d: %s: no result", n, r.Method)
			}
			bytes.Add(int64(len(r.Result)))
		}
		return nil
	}
	one := func(n uint64) error {
		num := hexNum(n)
		block := &jsonrpc.Request{Method: "eth_getBlockByNumber", Params: []any{num, true}, Loose: traces != evm.TracesCallTracer}
		receipts := &jsonrpc.Request{Method: "eth_getBlockReceipts", Params: []any{num}, Loose: true}
		if traces != evm.TracesCallTracer {
			groups := [][]*jsonrpc.Request{{block}, {receipts}}
			all := []*jsonrpc.Request{block, receipts}
			if traces == evm.TracesParity {
				tr := &jsonrpc.Request{Method: "trace_block", Params: []any{num}, Loose: true}
				groups, all = append(groups, []*jsonrpc.Request{tr}), append(all, tr)
			}
			return rpc.GroupsThen(ctx, groups, nil, func() error { return read(n, all...) })
		}
		var hash string
		err := rpc.BatchCallThen(ctx, []*jsonrpc.Request{block}, func() error {
			var head struct {
				Hash string `json:"hash"`
			}
			if err := read(n, block); err != nil {
				return err
			}
			if err := json.Unmarshal(block.Result, &head); err != nil || head.Hash == "" {
				return fmt.Errorf("block %d: no block (%v)", n, err)
			}
			hash = head.Hash
			return nil
		})
		if err != nil {
			return err
		}
		receipts.Loose = false
		tr := &jsonrpc.Request{Method: "debug_traceBlockByHash", Params: []any{hash, map[string]any{"tracer": "callTracer"}}}
		return rpc.BatchCallThen(ctx, []*jsonrpc.Request{receipts, tr}, func() error { return read(n, receipts, tr) })
	}
	sem := make(chan struct{}, max(batch*concurrency, 1))
	for n := from; n <= to && ctx.Err() == nil; n++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := one(n); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr == nil && bytes.Load() == 0 {
		firstErr = errors.New("raw fetch read nothing")
	}
	return bytes.Load(), firstErr
}

func hexNum(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }

// IngestTable is the markdown table of ingestion results.
func IngestTable(rs []*IngestResult) string {
	var b strings.Builder
	b.WriteString("| store | traces | blocks | raw fetch | ingestion | % of raw | JSON-RPC read | ingester CPU a block | ingester peak RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		store := "SQLite"
		if strings.HasPrefix(r.DSN, "postgres") {
			store = "PostgreSQL"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.1f blocks/s | %.1f blocks/s | %.0f%% | %.1f MB/s | %.2f ms | %s |\n",
			store, r.Traces, r.Blocks, r.RawBlocksPS, r.BlocksPS, r.Ratio()*100,
			float64(r.RawBytes)/(1<<20)/((r.RawSecs[0]+r.RawSecs[1])/2), r.CPUPerBlock(), MB(r.PeakRSS))
	}
	return b.String()
}
