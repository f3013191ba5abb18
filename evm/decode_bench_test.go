package evm

import (
	"encoding/json"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/jsonrpc"
)

// benchAnswers are the answers a node gives for one block, as the fetcher
// asks for them.
type benchAnswers struct {
	block, receipts, parity, calls json.RawMessage
}

// polygonAnswers renders n blocks of the Polygon-shaped chain (about 100
// transactions, 900 call frames and 400 logs a block, 1 MB of answers).
func polygonAnswers(b testing.TB, n int) []benchAnswers {
	b.Helper()
	c, err := polychain.New(polychain.Config{Seed: 11, Blocks: n})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]benchAnswers, 0, n)
	for num := c.First(); num <= c.Last(); num++ {
		blk := c.Block(num)
		out = append(out, benchAnswers{
			block:    polychain.Render(blk, polychain.KindBlockFull),
			receipts: polychain.Render(blk, polychain.KindReceipts),
			parity:   polychain.Render(blk, polychain.KindParity),
			calls:    polychain.Render(blk, polychain.KindCallTracer),
		})
	}
	return out
}

// BenchmarkDecode decodes a block's answers (eth_getBlockByNumber,
// eth_getBlockReceipts, and trace_block or the callTracer) the way
// Fetcher.fetchBlock does once the node has answered: one op is one block,
// so allocs/op is the garbage a block costs the ingester.
func BenchmarkDecode(b *testing.B) {
	answers := polygonAnswers(b, 8)
	for _, bc := range []struct {
		name   string
		traces string
	}{
		{"trace_block", TracesParity},
		{"callTracer", TracesCallTracer},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := NewFetcher(nil, chainquery.Polygon, Plan{BlockReceipts: true, Traces: bc.traces}, nil)
			var bytes int64
			for _, a := range answers {
				bytes += int64(len(a.block) + len(a.receipts) + len(a.traces(bc.traces)))
			}
			b.SetBytes(bytes / int64(len(answers)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				a := answers[i%len(answers)]
				if err := decodeFetched(f, a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// decodeFetched is fetchBlock after its two requests were answered.
func decodeFetched(f *Fetcher, a benchAnswers) error {
	var notes decodeNotes
	d, err := decodeBlockWithNotes(f.Chain, a.block, &notes)
	if err != nil {
		return err
	}
	receipts := []*jsonrpc.Request{{Method: "eth_getBlockReceipts", Result: a.receipts}}
	method := "trace_block"
	if f.Plan.Traces == TracesCallTracer {
		method = "debug_traceBlockByHash"
	}
	return f.complete(d, receipts, &jsonrpc.Request{Method: method, Result: a.traces(f.Plan.Traces)})
}

// traces is the answer of the trace method of a plan.
func (a benchAnswers) traces(method string) json.RawMessage {
	if method == TracesCallTracer {
		return a.calls
	}
	return a.parity
}
