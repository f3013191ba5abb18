package polychain

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind names one pre-rendered answer of a block.
type Kind int

// The answers rendered per block.
const (
	KindBlockFull   Kind = iota // eth_getBlockByNumber(n, true)
	KindBlockHashes             // eth_getBlockByNumber(n, false)
	KindReceipts                // eth_getBlockReceipts
	KindParity                  // trace_block
	KindCallTracer              // debug_traceBlockBy* with the callTracer
	numKinds
)

var kindNames = [numKinds]string{"block", "blockh", "receipts", "trace", "calltrace"}

// Render returns answer k of block b.
func Render(b *Block, k Kind) []byte {
	switch k {
	case KindBlockFull:
		return RenderBlock(b, true)
	case KindBlockHashes:
		return RenderBlock(b, false)
	case KindReceipts:
		return RenderReceipts(b)
	case KindParity:
		return RenderParity(b)
	case KindCallTracer:
		return RenderCallTracer(b)
	}
	panic("polychain: unknown kind")
}

// Node serves a Chain over JSON-RPC. Each block's answers are rendered once,
// when first asked for or by Prerender, and kept in memory or, with Dir set,
// in files of a cache directory (which the page cache then holds), so that
// serving costs little more than copying bytes.
type Node struct {
	Chain *Chain
	// Dir, when not empty, is the cache directory; answers there from an
	// earlier run of the same Config are reused.
	Dir string

	once    sync.Once
	byHash  map[[32]byte]uint64
	mem     []atomic.Pointer[[numKinds][]byte]
	renders sync.Map // block number -> *sync.Mutex, so that a block is made once at a time
	txOnce  sync.Once
	txIndex map[[32]byte]uint64 // transaction hash -> block<<16 | index

	Calls atomic.Int64 // JSON-RPC calls answered

	// Delay is how long the node takes over each call before answering,
	// the calls of a batch one after another (as go-ethereum's server
	// runs a batch): a real node's trace_block takes 10-400 ms a block,
	// where this one answers from memory or its cache.
	Delay time.Duration
}

func (n *Node) init() {
	n.once.Do(func() {
		c := n.Chain
		n.byHash = make(map[[32]byte]uint64, c.cfg.Blocks)
		for b := c.First(); b <= c.Last(); b++ {
			n.byHash[c.BlockHash(b)] = b
		}
		if n.Dir == "" {
			n.mem = make([]atomic.Pointer[[numKinds][]byte], c.cfg.Blocks)
		}
	})
}

// CacheDir is the directory under root that holds the answers of cfg's chain.
func CacheDir(root string, cfg Config) string {
	return filepath.Join(root, fmt.Sprintf("polychain-%s-s%d-n%d-b%d-t%d-a%d-h%g-%d",
		cacheVersion, cfg.Seed, cfg.Start, cfg.Blocks, cfg.TxPerBlock, cfg.Accounts, cfg.HotShare, cfg.StartTime))
}

// cacheVersion changes whenever the generator or the renderers do, so that
// no cache of an older shape is served.
const cacheVersion = "v1"

func (n *Node) file(b uint64, k Kind) string {
	return filepath.Join(n.Dir, strconv.FormatUint(b, 10)+"."+kindNames[k]+".json")
}

// Answer returns answer k of block b (which the chain must hold).
func (n *Node) Answer(b uint64, k Kind) ([]byte, error) {
	n.init()
	if n.Dir == "" {
		if a := n.mem[b-n.Chain.First()].Load(); a != nil {
			return a[k], nil
		}
	} else if data, err := os.ReadFile(n.file(b, k)); err == nil {
		return data, nil
	}
	mu, _ := n.renders.LoadOrStore(b, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if n.Dir == "" {
		if a := n.mem[b-n.Chain.First()].Load(); a != nil {
			return a[k], nil
		}
	} else if data, err := os.ReadFile(n.file(b, k)); err == nil {
		return data, nil
	}
	blk := n.Chain.Block(b)
	var all [numKinds][]byte
	for i := range numKinds {
		all[i] = Render(blk, i)
	}
	if n.Dir == "" {
		n.mem[b-n.Chain.First()].Store(&all)
		return all[k], nil
	}
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return nil, err
	}
	// The block file is written last: its presence says all are there.
	for _, i := range []Kind{KindBlockHashes, KindReceipts, KindParity, KindCallTracer, KindBlockFull} {
		tmp := n.file(b, i) + ".tmp"
		if err := os.WriteFile(tmp, all[i], 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, n.file(b, i)); err != nil {
			return nil, err
		}
	}
	return all[k], nil
}

// Prerender renders every block's answers with the given number of workers
// (0: one per CPU), skipping blocks already in the cache directory.
func (n *Node) Prerender(ctx context.Context, workers int) error {
	n.init()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := atomic.Uint64{}
	next.Store(n.Chain.First())
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				b := next.Add(1) - 1
				if b > n.Chain.Last() {
					return
				}
				if n.Dir != "" {
					if _, err := os.Stat(n.file(b, KindBlockFull)); err == nil {
						continue
					}
				}
				if _, err := n.Answer(b, KindBlockFull); err != nil {
					errs <- err
					return
				}
				n.renders.Delete(b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// rpcCall is one JSON-RPC request.
type rpcCall struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	code int
	msg  string
}

// ServeHTTP answers a JSON-RPC call or batch.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.init()
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		return
	}
	body = bytes.TrimSpace(body)
	batch := len(body) > 0 && body[0] == '['
	var calls []rpcCall
	if batch {
		err = json.Unmarshal(body, &calls)
	} else {
		calls = make([]rpcCall, 1)
		err = json.Unmarshal(body, &calls[0])
	}
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
		return
	}
	var out bytes.Buffer
	if batch {
		out.WriteByte('[')
	}
	for i, c := range calls {
		if i > 0 {
			out.WriteByte(',')
		}
		id := c.ID
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(id)
		if n.Delay > 0 {
			time.Sleep(n.Delay)
		}
		result, rerr := n.call(&c)
		if rerr != nil {
			fmt.Fprintf(&out, `,"error":{"code":%d,"message":%q}}`, rerr.code, rerr.msg)
			continue
		}
		out.WriteString(`,"result":`)
		out.Write(result)
		out.WriteByte('}')
		n.Calls.Add(1)
	}
	if batch {
		out.WriteByte(']')
	}
	w.Header().Set("Content-Length", strconv.Itoa(out.Len()))
	_, _ = w.Write(out.Bytes())
}

var null = []byte("null")

// call answers one call.
func (n *Node) call(c *rpcCall) ([]byte, *rpcError) {
	param := func(i int) string {
		if i >= len(c.Params) {
			return ""
		}
		var s string
		if json.Unmarshal(c.Params[i], &s) != nil {
			return string(c.Params[i])
		}
		return s
	}
	invalid := func(what string) *rpcError { return &rpcError{-32602, "invalid params: " + what} }
	answer := func(b uint64, ok bool, k Kind) ([]byte, *rpcError) {
		if !ok {
			return null, nil
		}
		data, err := n.Answer(b, k)
		if err != nil {
			return nil, &rpcError{-32000, err.Error()}
		}
		return data, nil
	}
	switch c.Method {
	case "eth_chainId":
		return []byte(`"0x89"`), nil
	case "net_version":
		return []byte(`"137"`), nil
	case "web3_clientVersion":
		return []byte(`"polychain/` + cacheVersion + `"`), nil
	case "eth_blockNumber":
		return []byte(`"0x` + strconv.FormatUint(n.Chain.Last(), 16) + `"`), nil
	case "eth_getBlockByNumber", "eth_getBlockByHash":
		var b uint64
		var ok bool
		if c.Method == "eth_getBlockByNumber" {
			b, ok = n.number(param(0))
		} else {
			b, ok = n.hashNumber(param(0))
		}
		full := len(c.Params) > 1 && strings.TrimSpace(string(c.Params[1])) == "true"
		if full {
			return answer(b, ok, KindBlockFull)
		}
		return answer(b, ok, KindBlockHashes)
	case "eth_getBlockReceipts":
		b, ok := n.number(param(0))
		if !ok {
			b, ok = n.hashNumber(param(0))
		}
		return answer(b, ok, KindReceipts)
	case "trace_block":
		b, ok := n.number(param(0))
		return answer(b, ok, KindParity)
	case "debug_traceBlockByNumber", "debug_traceBlockByHash":
		var opts struct {
			Tracer string `json:"tracer"`
		}
		if len(c.Params) < 2 || json.Unmarshal(c.Params[1], &opts) != nil || opts.Tracer != "callTracer" {
			return nil, invalid(`only {"tracer":"callTracer"} is served`)
		}
		var b uint64
		var ok bool
		if c.Method == "debug_traceBlockByNumber" {
			b, ok = n.number(param(0))
		} else {
			b, ok = n.hashNumber(param(0))
		}
		return answer(b, ok, KindCallTracer)
	case "eth_getTransactionReceipt":
		b, i, ok := n.txLocation(param(0))
		if !ok {
			return null, nil
		}
		return RenderReceipt(n.Chain.Block(b), i), nil
	}
	return nil, &rpcError{-32601, "the method " + c.Method + " does not exist/is not available"}
}

// number reads a block number or tag.
func (n *Node) number(s string) (uint64, bool) {
	switch s {
	case "latest", "safe", "finalized", "pending":
		return n.Chain.Last(), true
	case "earliest":
		return n.Chain.First(), true
	}
	if !strings.HasPrefix(s, "0x") || len(s) == 66 {
		return 0, false
	}
	b, err := strconv.ParseUint(s[2:], 16, 64)
	return b, err == nil && n.Chain.Has(b)
}

func parseHash(s string) ([32]byte, bool) {
	var h [32]byte
	if len(s) != 66 || !strings.HasPrefix(s, "0x") {
		return h, false
	}
	_, err := hex.Decode(h[:], []byte(s[2:]))
	return h, err == nil
}

// hashNumber finds the block of a hash.
func (n *Node) hashNumber(s string) (uint64, bool) {
	h, ok := parseHash(s)
	if !ok {
		return 0, false
	}
	b, ok := n.byHash[h]
	return b, ok
}

// txLocation finds a transaction by hash; the index of all transaction
// hashes is built on first use (only nodes without eth_getBlockReceipts
// are asked for receipts one by one).
func (n *Node) txLocation(s string) (uint64, int, bool) {
	h, ok := parseHash(s)
	if !ok {
		return 0, 0, false
	}
	n.txOnce.Do(func() {
		c := n.Chain
		n.txIndex = map[[32]byte]uint64{}
		for b := c.First(); b <= c.Last(); b++ {
			for i := range c.TxCount(b) {
				n.txIndex[c.TxHash(b, i)] = b<<16 | uint64(i)
			}
		}
	})
	v, ok := n.txIndex[h]
	return v >> 16, int(v & 0xffff), ok
}
