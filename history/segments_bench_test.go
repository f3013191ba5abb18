package history_test

import (
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/polychain"
)

// benchChain is eight blocks of the Polygon-shaped chain (about 100
// transactions, 900 call frames and 400 logs a block).
var benchChain = polychain.Config{Seed: 11, Blocks: 8}

// BenchmarkSegments encodes a block's transaction, log and trace segments,
// as the ingester does (without the chain's dictionaries): one op is one
// block; B/block is their size together.
func BenchmarkSegments(b *testing.B) {
	blocks := polygonBlocks(b, benchChain, polychain.KindParity)
	size := 0
	for _, d := range blocks {
		for _, seg := range encodeSegments(b, d) {
			size += len(seg)
		}
	}
	for i := 0; b.Loop(); i++ {
		d := blocks[i%len(blocks)]
		encodeSegments(b, d)
	}
	b.ReportMetric(float64(size)/float64(len(blocks)), "B/block")
}

// BenchmarkDecodeTraces decodes a block's trace segment, as an uncached
// read of its traces does: one op is one block.
func BenchmarkDecodeTraces(b *testing.B) {
	var segs [][]byte
	for _, d := range polygonBlocks(b, benchChain, polychain.KindParity) {
		s, err := history.AppendTraces(nil, d.Traces)
		if err != nil {
			b.Fatal(err)
		}
		segs = append(segs, s)
	}
	for i := 0; b.Loop(); i++ {
		if _, err := history.DecodeTraces(segs[i%len(segs)], 1); err != nil {
			b.Fatal(err)
		}
	}
}

// encodeSegments returns the segments of block d.
func encodeSegments(b *testing.B, d *chainquery.BlockData) [3][]byte {
	b.Helper()
	var out [3][]byte
	var err [3]error
	out[0], err[0] = history.AppendTransactions(nil, d.Transactions)
	out[1], err[1] = history.AppendLogs(nil, d.Logs)
	out[2], err[2] = history.AppendTraces(nil, d.Traces)
	for _, e := range err {
		if e != nil {
			b.Fatal(e)
		}
	}
	return out
}
