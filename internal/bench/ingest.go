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
// from..to (a batch of eth_getBlockByNumber(full), then a batch of
// eth_getBlockReceipts and trace_block or debug_traceBlockByHash with the
// callTracer per batch of blocks; concurrency batches in flight) with the
// project's JSON-RPC client, reads the block hashes and discards the rest:
// the ceiling no ingester can pass. It returns the bytes of answers read.
func RawFetch(ctx context.Context, url, traces string, from, to uint64, batch, concurrency int) (int64, error) {
	rpc := jsonrpc.NewClient(url)
	var wg sync.WaitGroup
	var bytes atomic.Int64
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	sem := make(chan struct{}, concurrency)
	for lo := from; lo <= to && ctx.Err() == nil; lo += uint64(batch) {
		hi := min(lo+uint64(batch)-1, to)
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			var reqs []*jsonrpc.Request
			for n := lo; n <= hi; n++ {
				reqs = append(reqs, &jsonrpc.Request{Method: "eth_getBlockByNumber", Params: []any{hexNum(n), true}})
			}
			if err := rpc.BatchCall(ctx, reqs); err != nil {
				fail(err)
				return
			}
			var more []*jsonrpc.Request
			for i, r := range reqs {
				var head struct {
					Hash string `json:"hash"`
				}
				if r.Err != nil {
					fail(fmt.Errorf("block %d: %s: %w", lo+uint64(i), r.Method, r.Err))
					return
				}
				bytes.Add(int64(len(r.Result)))
				if err := json.Unmarshal(r.Result, &head); err != nil || head.Hash == "" {
					fail(fmt.Errorf("block %d: no block (%v)", lo+uint64(i), err))
					return
				}
				n := hexNum(lo + uint64(i))
				more = append(more, &jsonrpc.Request{Method: "eth_getBlockReceipts", Params: []any{n}})
				switch traces {
				case evm.TracesParity:
					more = append(more, &jsonrpc.Request{Method: "trace_block", Params: []any{n}})
				case evm.TracesCallTracer:
					more = append(more, &jsonrpc.Request{Method: "debug_traceBlockByHash", Params: []any{head.Hash, map[string]any{"tracer": "callTracer"}}})
				}
			}
			if err := rpc.BatchCall(ctx, more); err != nil {
				fail(err)
				return
			}
			for _, r := range more {
				if r.Err != nil {
					fail(fmt.Errorf("%s: %w", r.Method, r.Err))
					return
				}
				bytes.Add(int64(len(r.Result)))
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
