package polychain

import "fmt"

// Shape is what a range of blocks holds, per block on average.
type Shape struct {
	Blocks         int
	TxPerBlock     float64
	TracesPerBlock float64
	LogsPerBlock   float64
	// BytesPerBlock counts the answers the ingester asks for: the block
	// with full transactions, its receipts and trace_block.
	BytesPerBlock float64
	// CallTracerBytesPerBlock is the callTracer answer alone.
	CallTracerBytesPerBlock float64
	MaxDepth                int
	HotShare                float64 // share of frames whose to is Callee(1)
	Reverted                float64 // share of transactions that failed
}

func (s Shape) String() string {
	return fmt.Sprintf("%d blocks: %.1f transactions, %.0f traces, %.0f logs, %.0f KB of JSON-RPC (block, receipts, trace_block; callTracer %.0f KB) per block; call depth up to %d; hottest callee %.1f%% of traces; %.1f%% of transactions reverted",
		s.Blocks, s.TxPerBlock, s.TracesPerBlock, s.LogsPerBlock, s.BytesPerBlock/1000, s.CallTracerBytesPerBlock/1000, s.MaxDepth, s.HotShare*100, s.Reverted*100)
}

// Measure makes and renders blocks from..to and reports their shape.
func Measure(c *Chain, from, to uint64) Shape {
	var s Shape
	var txs, frames, logs, hot, reverted, bytes, ctBytes int
	hotAddr := c.Callee(1)
	for n := from; n <= to; n++ {
		b := c.Block(n)
		s.Blocks++
		txs += len(b.Txs)
		for _, t := range b.Txs {
			logs += len(t.Logs)
			if !t.Status {
				reverted++
			}
			t.Root.Walk(func(f *Frame, depth int) {
				frames++
				s.MaxDepth = max(s.MaxDepth, depth)
				if f.To == hotAddr {
					hot++
				}
			})
		}
		bytes += len(RenderBlock(b, true)) + len(RenderReceipts(b)) + len(RenderParity(b))
		ctBytes += len(RenderCallTracer(b))
	}
	nb := float64(s.Blocks)
	s.TxPerBlock = float64(txs) / nb
	s.TracesPerBlock = float64(frames) / nb
	s.LogsPerBlock = float64(logs) / nb
	s.BytesPerBlock = float64(bytes) / nb
	s.CallTracerBytesPerBlock = float64(ctBytes) / nb
	s.HotShare = float64(hot) / float64(frames)
	s.Reverted = float64(reverted) / float64(txs)
	return s
}
