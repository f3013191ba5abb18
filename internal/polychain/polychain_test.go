package polychain_test

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/polyrows"
	"github.com/chainquery/chainquery/internal/testenv"
	"github.com/chainquery/chainquery/jsonrpc"
)

func tinyChain(t testing.TB) *polychain.Chain {
	t.Helper()
	c, err := polychain.New(polychain.Config{Seed: 7, Blocks: 6, TxPerBlock: 40, Accounts: 2000})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// decode makes block n's rows with the project's decoders from the
// rendered answers, with traces of the given kind.
func decode(t *testing.T, c *polychain.Chain, n uint64, traces polychain.Kind) *chainquery.BlockData {
	t.Helper()
	d, err := polyrows.Decode(c, n, traces)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDecode decodes every block of a small chain with the project's
// decoders, checks the rows are complete and match the generator's model,
// and that trace_block and the callTracer give the same trace rows.
func TestDecode(t *testing.T) {
	c := tinyChain(t)
	kinds := map[string]bool{}
	for n := c.First(); n <= c.Last(); n++ {
		b := c.Block(n)
		p := decode(t, c, n, polychain.KindParity)
		ct := decode(t, c, n, polychain.KindCallTracer)
		if p.Block.Hash != chainquery.Hash(b.Hash) || p.Block.ParentHash != chainquery.Hash(c.BlockHash(n-1)) {
			t.Errorf("block %d: hash or parent hash differ from the model", n)
		}
		if p.Block.Timestamp != c.Time(n) {
			t.Errorf("block %d: timestamp %d, want %d", n, p.Block.Timestamp, c.Time(n))
		}
		if len(p.Transactions) != c.TxCount(n) {
			t.Errorf("block %d: %d transactions, want %d", n, len(p.Transactions), c.TxCount(n))
		}
		frames, logs := 0, 0
		for _, tx := range b.Txs {
			tx.Root.Walk(func(f *polychain.Frame, depth int) {
				frames++
				kinds[f.Kind] = true
				if f.Error != "" {
					kinds["error"] = true
				}
			})
			logs += len(tx.Logs)
			if !tx.Status {
				kinds["reverted tx"] = true
			}
			kinds[fmt.Sprintf("type %d", tx.Type)] = true
		}
		if len(p.Traces) != frames || len(p.Logs) != logs {
			t.Errorf("block %d: %d traces and %d logs, want %d and %d", n, len(p.Traces), len(p.Logs), frames, logs)
		}
		for i, tx := range p.Transactions {
			m := b.Txs[i]
			if tx.Hash != chainquery.Hash(m.Hash) || tx.Status != m.Status || tx.GasUsed != m.GasUsed || tx.EffectiveGasPrice.Uint64() != m.EffPrice {
				t.Errorf("block %d tx %d: %+v differs from the model", n, i, tx)
			}
		}
		if len(p.Traces) != len(ct.Traces) {
			t.Fatalf("block %d: %d trace_block rows, %d callTracer rows", n, len(p.Traces), len(ct.Traces))
		}
		for i := range p.Traces {
			if a, b := traceString(p.Traces[i]), traceString(ct.Traces[i]); a != b {
				t.Errorf("block %d row %d:\ntrace_block %s\ncallTracer  %s", n, i, a, b)
			}
		}
	}
	for _, k := range []string{"CALL", "STATICCALL", "DELEGATECALL", "CREATE", "CREATE2", "SELFDESTRUCT", "error", "reverted tx", "type 0", "type 2"} {
		if !kinds[k] {
			t.Errorf("the chain has no %s", k)
		}
	}
}

func traceString(t *chainquery.Trace) string {
	to := "nil"
	if t.To != nil {
		to = t.To.Hex()
	}
	return fmt.Sprintf("%d %s %d [%s] %s/%s %s->%s gas %d used %d value %s sub %d in %x out %x err %q",
		t.BlockNumber, t.TransactionHash.Hex(), t.TransactionIndex, chainquery.FormatTraceAddress(t.TraceAddress),
		t.Type, t.CallType, t.From.Hex(), to, t.Gas, t.GasUsed, chainquery.BigString(t.Value), t.Subtraces, t.Input, t.Output, t.Error)
}

// TestDeterministic checks that a block is the same whether made alone, in
// another order, or by another Chain of the same Config.
func TestDeterministic(t *testing.T) {
	a, b := tinyChain(t), tinyChain(t)
	last := string(polychain.Render(a.Block(a.Last()), polychain.KindParity))
	for n := b.Last(); n >= b.First(); n-- {
		b.Block(n)
	}
	if string(polychain.Render(b.Block(b.Last()), polychain.KindParity)) != last {
		t.Fatal("the same block rendered twice differs")
	}
	other, _ := polychain.New(polychain.Config{Seed: 8, Blocks: 6, TxPerBlock: 40, Accounts: 2000})
	if string(polychain.Render(other.Block(other.Last()), polychain.KindParity)) == last {
		t.Fatal("another seed gave the same block")
	}
}

// TestFetcher serves the chain over HTTP and fetches it with the ingester's
// own fetcher, once per trace dialect: the probe finds both methods and the
// two give the same rows.
func TestFetcher(t *testing.T) {
	c := tinyChain(t)
	for _, dir := range []string{"", t.TempDir()} {
		node := &polychain.Node{Chain: c, Dir: dir}
		if dir != "" {
			if err := node.Prerender(context.Background(), 2); err != nil {
				t.Fatal(err)
			}
		}
		url := serve(t, node)
		ctx := context.Background()
		rpc := jsonrpc.NewClient(url)
		var rows [2][]*chainquery.BlockData
		for i, traces := range []string{evm.TracesParity, evm.TracesCallTracer} {
			plan, err := evm.Probe(ctx, rpc, traces)
			if err != nil {
				t.Fatal(err)
			}
			if !plan.BlockReceipts {
				t.Fatal("the probe did not find eth_getBlockReceipts")
			}
			f := evm.NewFetcher(rpc, chainquery.Polygon, plan, nil)
			if rows[i], err = f.Blocks(ctx, c.First(), c.Last()); err != nil {
				t.Fatal(err)
			}
			if h, err := f.BlockHash(ctx, c.Last()); err != nil || h != chainquery.Hash(c.BlockHash(c.Last())) {
				t.Fatalf("BlockHash: %s, %v", h, err)
			}
		}
		for j := range rows[0] {
			p, ct := rows[0][j], rows[1][j]
			if !slices.EqualFunc(p.Traces, ct.Traces, func(a, b *chainquery.Trace) bool { return traceString(a) == traceString(b) }) {
				t.Errorf("block %d: the two dialects differ", p.Block.Number)
			}
		}
		// eth_getTransactionReceipt, for nodes probed without block receipts.
		var r struct {
			TransactionHash string `json:"transactionHash"`
			GasUsed         string `json:"gasUsed"`
		}
		hash := chainquery.Hash(c.TxHash(c.First(), 3)).Hex()
		if err := rpc.Call(ctx, &r, "eth_getTransactionReceipt", hash); err != nil || r.TransactionHash != hash {
			t.Fatalf("eth_getTransactionReceipt: %+v %v", r, err)
		}
	}
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestShape measures a default-sized chain (200,000 accounts, 100
// transactions per block) over a few blocks and checks it is Polygon-shaped:
// about 830 frames, 390 logs and 1 MB of answers per block, depth up to 8,
// and the hottest callee the to of about 10% of the frames.
func TestShape(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	c, err := polychain.New(polychain.Config{Seed: 1, Blocks: 40})
	if err != nil {
		t.Fatal(err)
	}
	s := polychain.Measure(c, c.First(), c.Last())
	t.Logf("%s", s)
	within := func(name string, v, lo, hi float64) {
		if v < lo || v > hi {
			t.Errorf("%s = %.1f, want %.0f to %.0f", name, v, lo, hi)
		}
	}
	within("transactions per block", s.TxPerBlock, 90, 110)
	within("frames per block", s.TracesPerBlock, 700, 960)
	within("logs per block", s.LogsPerBlock, 330, 450)
	within("KB per block", s.BytesPerBlock/1000, 800, 1300)
	within("hot callee share %", s.HotShare*100, 8, 12)
	if s.MaxDepth != 8 {
		t.Errorf("max depth %d, want 8", s.MaxDepth)
	}
	_ = big.NewInt
}

// TestPayloadEntropy holds the generator's call inputs, outputs and log
// data to the entropy of real ones: a block's payloads, compressed as one
// piece, must shrink by a ratio within a factor of two of what the recorded
// Polygon block 38,102,393 shrinks by. Pseudo-random payloads, as the
// generator had before, hardly shrink at all, and would make any measure of
// a compressed history's disk per block on this chain meaningless (both
// ratios: docs/benchmarks.md, "Disk per block").
func TestPayloadEntropy(t *testing.T) {
	var real bytes.Buffer
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range []string{"input", "output", "data"} {
				if s, ok := v[k].(string); ok && strings.HasPrefix(s, "0x") {
					b, err := hex.DecodeString(s[2:])
					if err != nil {
						t.Fatal(err)
					}
					real.Write(b)
				}
			}
			for _, k := range []string{"calls", "logs"} {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, name := range []string{"debug_traceBlockByHash_callTracer__38102393__chainstorage.json", "receipts__38102393__chainstorage.json"} {
		var v any
		if err := json.Unmarshal(testenv.ReadTestdata(t, "evm", "polygon", name), &v); err != nil {
			t.Fatal(err)
		}
		walk(v)
	}

	c, err := polychain.New(polychain.Config{Seed: 1, Blocks: 3})
	if err != nil {
		t.Fatal(err)
	}
	var gen bytes.Buffer
	d := decode(t, c, c.First()+1, polychain.KindCallTracer)
	for _, tr := range d.Traces {
		gen.Write(tr.Input)
		gen.Write(tr.Output)
	}
	for _, l := range d.Logs {
		gen.Write(l.Data)
	}
	ratio := func(b []byte) float64 {
		var z bytes.Buffer
		w, _ := flate.NewWriter(&z, 6)
		w.Write(b)
		w.Close()
		return float64(len(b)) / float64(z.Len())
	}
	r, g := ratio(real.Bytes()), ratio(gen.Bytes())
	t.Logf("payloads compress %.1fx (recorded block, %d KB) and %.1fx (generated, %d KB)", r, real.Len()/1000, g, gen.Len()/1000)
	if r < 4 {
		t.Fatalf("the recorded block's payloads compress only %.1fx: the fixture is not what this test was written for", r)
	}
	if g < r/2 || g > r*2 {
		t.Errorf("generated payloads compress %.1fx, want within a factor of two of the recorded block's %.1fx", g, r)
	}
}

// TestNodeDelay: a node with a Delay answers a batch's calls one after
// another, each after the delay, so that a batch of n calls takes at least
// n delays; its answers are the same as without one.
func TestNodeDelay(t *testing.T) {
	c := tinyChain(t)
	const delay = 20 * time.Millisecond
	ctx := context.Background()
	var answers [2][]json.RawMessage
	for i, d := range []time.Duration{0, delay} {
		rpc := jsonrpc.NewClient(serve(t, &polychain.Node{Chain: c, Delay: d}))
		reqs := make([]*jsonrpc.Request, 3)
		for j := range reqs {
			reqs[j] = &jsonrpc.Request{Method: "eth_getBlockByNumber", Params: []any{fmt.Sprintf("0x%x", c.First()+uint64(j)), false}}
		}
		start := time.Now()
		if err := rpc.BatchCall(ctx, reqs); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); d > 0 && took < time.Duration(len(reqs))*d {
			t.Errorf("a batch of %d calls took %s, want at least %s", len(reqs), took, time.Duration(len(reqs))*d)
		}
		for _, r := range reqs {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			answers[i] = append(answers[i], r.Result)
		}
	}
	for j := range answers[0] {
		if !bytes.Equal(answers[0][j], answers[1][j]) {
			t.Errorf("call %d: the delayed node answered otherwise", j)
		}
	}
}
