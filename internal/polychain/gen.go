package polychain

import (
	"encoding/binary"
	"math/rand/v2"
)

// Block is one generated block with everything the node answers about it.
type Block struct {
	Number       uint64
	Time         int64
	Hash         [32]byte
	Parent       [32]byte
	StateRoot    [32]byte
	TxRoot       [32]byte
	ReceiptsRoot [32]byte
	ExtraData    []byte
	GasLimit     uint64
	GasUsed      uint64
	BaseFee      uint64
	Size         uint64
	Txs          []*Tx
}

// Tx is one transaction with its receipt and call tree.
type Tx struct {
	Index    int
	Hash     [32]byte
	From     string
	To       string // "" for a contract creation
	Nonce    uint64
	Value    uint64
	Gas      uint64
	Type     int // 0 legacy, 2 EIP-1559
	GasPrice uint64
	MaxFee   uint64
	MaxPrio  uint64
	Input    []byte
	R, S     [32]byte

	Status   bool
	GasUsed  uint64
	CumGas   uint64
	EffPrice uint64
	Contract string // the created contract, "" if none
	Logs     []*Log
	Root     *Frame
}

// Log is one log of a receipt; Index counts through the block.
type Log struct {
	Index   int
	Address string
	Topics  [][32]byte
	Data    []byte
}

// Frame is one call frame. Kind is the callTracer's name (CALL,
// DELEGATECALL, STATICCALL, CREATE, CREATE2, SELFDESTRUCT).
type Frame struct {
	Kind    string
	From    string
	To      string // the callee; the new contract of a creation; the beneficiary of a SELFDESTRUCT
	Value   uint64
	Gas     uint64
	GasUsed uint64
	Input   []byte
	Output  []byte
	Error   string
	Calls   []*Frame
}

// Runner is the account whose code and storage a frame runs on: the callee,
// except for DELEGATECALL, which runs the callee's code as the caller.
func (f *Frame) Runner() string {
	if f.Kind == "DELEGATECALL" {
		return f.From
	}
	return f.To
}

// Walk calls fn on f and its subtree in depth-first pre-order.
func (f *Frame) Walk(fn func(f *Frame, depth int)) { f.walk(fn, 1) }

func (f *Frame) walk(fn func(*Frame, int), depth int) {
	fn(f, depth)
	for _, c := range f.Calls {
		c.walk(fn, depth+1)
	}
}

// The shape's constants, tuned so that a default block has about 100
// transactions, 830 frames, 390 logs and 1 MB of JSON-RPC answers (see
// TestShape).
const (
	maxDepth       = 8   // frames per call tree, top level included
	maxFramesPerTx = 400 // a cap on the (geometric) tree sizes
	shareTransfer  = 0.15
	shareCreate    = 0.03
	shareRevert    = 0.05
	shareLegacy    = 0.25
	childRevert    = 0.02
	logsPerFrame   = 0.82 // mean logs of a frame that may log
)

// meanChildren is the mean number of calls a frame at depth d+1 makes.
var meanChildren = [maxDepth]float64{2.0, 1.2, 0.85, 0.6, 0.45, 0.36, 0.28, 0}

// feeAddress is Polygon's MRC20 contract (the native token), which logs a
// LogFeeTransfer in every transaction.
const feeAddress = "0x0000000000000000000000000000000000001010"

// logFeeTransfer is the topic of Polygon's LogFeeTransfer event.
var logFeeTransfer = [32]byte{0x4d, 0xfe, 0x1b, 0xbb, 0xcf, 0x07, 0x7d, 0xdc, 0x3e, 0x01, 0x29, 0x1e, 0xea, 0x2d, 0x5c, 0x70, 0xc2, 0xb4, 0x22, 0xb4, 0x15, 0xd9, 0x56, 0x45, 0xb9, 0xad, 0xcf, 0xd6, 0x78, 0xcb, 0x1d, 0x63}

// gen holds the state of making one block.
type gen struct {
	c       *Chain
	r       *rand.Rand
	callee  *rand.Zipf
	sender  *rand.Zipf
	n       uint64
	tx      int
	created int // contracts created so far in the transaction
	frames  int
	vocab   [][32]byte // the transaction's words so far: calls pass them on
}

// TxCount is the number of transactions of block n, known without making it.
func (c *Chain) TxCount(n uint64) int {
	h := c.hash("count", n)
	base := c.cfg.TxPerBlock
	spread := base*2/5 + 1 // 80% to 120% of the mean
	return base - base/5 + int(binary.BigEndian.Uint64(h[:8])%uint64(spread))
}

// TxHash is the hash of transaction i of block n.
func (c *Chain) TxHash(n uint64, i int) [32]byte { return c.hash("tx", n, uint64(i)) }

// Block makes block n, or returns nil if the chain does not hold it.
func (c *Chain) Block(n uint64) *Block {
	if !c.Has(n) {
		return nil
	}
	g := &gen{c: c, n: n, r: rand.New(rand.NewPCG(c.cfg.Seed, n))}
	imax := uint64(c.cfg.Accounts - 1)
	g.callee = rand.NewZipf(g.r, c.zipfS, 1, imax)
	g.sender = rand.NewZipf(g.r, c.zipfS, 1, imax)
	b := &Block{
		Number:       n,
		Time:         c.Time(n),
		Hash:         c.BlockHash(n),
		Parent:       c.BlockHash(n - 1),
		StateRoot:    c.hash("state", n),
		TxRoot:       c.hash("txroot", n),
		ReceiptsRoot: c.hash("receiptsroot", n),
		GasLimit:     30_000_000,
		BaseFee:      30_000_000_000 + g.r.Uint64N(120_000_000_000),
	}
	seal := c.hash("seal", n)
	b.ExtraData = append(append(make([]byte, 32, 97), seal[:]...), seal[:]...)
	b.ExtraData = append(b.ExtraData, 0)
	count := c.TxCount(n)
	logIndex := 0
	size := uint64(700)
	for i := range count {
		t := g.transaction(b, i)
		for _, l := range t.Logs {
			l.Index = logIndex
			logIndex++
		}
		b.GasUsed += t.GasUsed
		t.CumGas = b.GasUsed
		size += 110 + uint64(len(t.Input))
		b.Txs = append(b.Txs, t)
	}
	if b.GasUsed > b.GasLimit {
		b.GasLimit = b.GasUsed
	}
	b.Size = size
	return b
}

// calleeAddr draws a callee by Zipf rank.
func (g *gen) calleeAddr() string { return g.c.hexAddr[g.callee.Uint64()] }

// senderAddr draws a transaction sender by Zipf rank.
func (g *gen) senderAddr() string { return g.c.hexAddr[g.c.senders[g.sender.Uint64()]] }

// geometric draws a count with the given mean (0, 1, 2, ... with a long tail).
func (g *gen) geometric(mean float64) int {
	if mean <= 0 {
		return 0
	}
	p := 1 / (1 + mean)
	k := 0
	for g.r.Float64() >= p && k < 64 {
		k++
	}
	return k
}

// calldata is a 4-byte selector (one of a few hundred) and k 32-byte words.
func (g *gen) calldata(k int) []byte {
	b := make([]byte, 4+32*k)
	sel := g.c.hash("selector", uint64(g.callee.Uint64()%256))
	copy(b, sel[:4])
	g.fillWords(b[4:])
	return b
}

// reuseWord is the share of a transaction's words that repeat one it had.
const reuseWord = 0.85

// words returns k ABI-shaped words. Real calldata, return data and log data
// are ABI words, and their entropy is what a store of history compresses:
// an address or an amount left-padded with zeros, a small count, offset or
// flag, zero, now and then a hash. Pseudo-random bytes would make every byte
// count, and a measure of disk per block on this chain would say nothing of
// mainnet's (what real Polygon rows compress to: docs/benchmarks.md, "Disk
// per block"; TestPayloadEntropy holds the generator to the recorded block).
func (g *gen) words(k int) []byte {
	b := make([]byte, 32*k)
	g.fillWords(b)
	return b
}

// fillWords fills b, a whole number of words, with ABI-shaped words.
func (g *gen) fillWords(b []byte) {
	for i := 0; i+32 <= len(b); i += 32 {
		g.word(b[i : i+32])
	}
}

// word fills w (32 zero bytes) with one ABI-shaped word. Most words of a
// transaction are words it already had (a token, an amount, a recipient
// passed down the call tree and logged on the way: in the recorded block
// only a third of the words are distinct), the others new.
func (g *gen) word(w []byte) {
	if n := len(g.vocab); n > 0 && g.r.Float64() < reuseWord {
		v := g.vocab[n-1-g.r.IntN(min(n, 64))]
		copy(w, v[:])
		return
	}
	defer func() { g.vocab = append(g.vocab, [32]byte(w)) }()
	switch u := g.r.Float64(); {
	case u < 0.35: // an address the chain uses, by the callees' Zipf rank
		hexDecode(w[12:], g.calleeAddr()[2:])
	case u < 0.65: // an amount or id: 1 to 9 significant bytes
		n := 1 + g.r.IntN(9)
		for j := 32 - n; j < 32; j++ {
			w[j] = byte(g.r.Uint32())
		}
	case u < 0.80: // a count, offset, length or flag
		w[31] = byte(g.r.IntN(256))
		if g.r.IntN(4) == 0 {
			w[30] = byte(g.r.IntN(16))
		}
	case u < 0.97: // zero
	default: // a hash or a packed value
		for j := 0; j < 32; j += 8 {
			binary.LittleEndian.PutUint64(w[j:], g.r.Uint64())
		}
	}
}

// code returns n bytes of contract code: 32-byte pieces, most drawn from a
// library of 64 shared by every contract of the chain (most contracts
// created on Polygon are clones and proxies of a few factories' templates,
// and the compiler's runtime repeats in the rest), the others its own.
func (g *gen) code(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 32 {
		var piece [32]byte
		if g.r.Float64() < 0.97 {
			piece = g.c.hash("code", g.callee.Uint64()%64)
		} else {
			for j := 0; j < 32; j += 8 {
				binary.LittleEndian.PutUint64(piece[j:], g.r.Uint64())
			}
		}
		copy(b[i:], piece[:])
	}
	return b
}

// newContract is the address of the next contract the transaction creates.
func (g *gen) newContract() string {
	h := g.c.hash("contract", g.n, uint64(g.tx), uint64(g.created))
	g.created++
	return hexString(h[12:])
}

func (g *gen) value(p float64, max uint64) uint64 {
	if g.r.Float64() >= p {
		return 0
	}
	return 1 + g.r.Uint64N(max)
}

// transaction makes transaction i of block b.
func (g *gen) transaction(b *Block, i int) *Tx {
	g.tx, g.created, g.frames, g.vocab = i, 0, 0, g.vocab[:0]
	t := &Tx{Index: i, Hash: g.c.TxHash(b.Number, i), From: g.senderAddr(), Status: true}
	t.R, t.S = g.c.hash("r", b.Number, uint64(i)), g.c.hash("s", b.Number, uint64(i))
	t.Nonce = g.r.Uint64N(100_000)
	prio := 30_000_000_000 + g.r.Uint64N(20_000_000_000)
	if g.r.Float64() < shareLegacy {
		t.Type, t.GasPrice = 0, b.BaseFee+prio
		t.EffPrice = t.GasPrice
	} else {
		t.Type, t.MaxPrio = 2, prio
		t.MaxFee = b.BaseFee*2 + prio
		t.EffPrice = b.BaseFee + prio
		t.GasPrice = t.EffPrice
	}
	u := g.r.Float64()
	switch {
	case u < shareTransfer: // a plain transfer between two accounts
		t.To = g.senderAddr()
		t.Value = 1 + g.r.Uint64N(5_000_000_000_000_000_000)
		t.Input = []byte{}
		t.Root = &Frame{Kind: "CALL", From: t.From, To: t.To, Value: t.Value, Input: []byte{}, Output: []byte{}}
	case u < shareTransfer+shareCreate: // a contract creation
		t.Input = g.code(400 + g.r.IntN(2400))
		addr := g.newContract()
		t.Contract = addr
		t.Root = &Frame{Kind: "CREATE", From: t.From, To: addr, Input: t.Input, Output: g.code(len(t.Input) * 4 / 5)}
		g.frames = 1
		g.grow(t.Root, 1, true)
	default: // a contract call, which may revert
		t.To = g.calleeAddr()
		k := g.geometric(4)
		if g.r.Float64() < 0.05 {
			k += 16 + g.r.IntN(48)
		}
		t.Input = g.calldata(k)
		t.Value = g.value(0.08, 2_000_000_000_000_000_000)
		t.Root = &Frame{Kind: "CALL", From: t.From, To: t.To, Value: t.Value, Input: t.Input, Output: g.words(g.geometric(1.5))}
		g.frames = 1
		g.grow(t.Root, 1, true)
		if u > 1-shareRevert {
			t.Root.Error = "execution reverted"
			t.Root.Output = g.revertData()
			t.Status = false
		}
	}
	intrinsic := 21_000 + 16*uint64(len(t.Input))
	g.settleGas(t.Root)
	t.Gas = intrinsic + t.Root.Gas
	t.GasUsed = intrinsic + t.Root.GasUsed
	if t.Status {
		g.logs(t, t.Root, true)
	}
	// Every Polygon transaction pays its fee through the MRC20 contract,
	// which logs LogFeeTransfer(token, from, validator, ...).
	t.Logs = append(t.Logs, &Log{
		Address: feeAddress,
		Topics:  [][32]byte{logFeeTransfer, padAddr(feeAddress), padAddr(t.From)},
		Data:    g.words(5),
	})
	return t
}

// revertReasons are the messages of the Error(string) reverts.
var revertReasons = []string{
	"ERC20: transfer amount exceeds balance", "UniswapV2: INSUFFICIENT_OUTPUT_AMOUNT", "Ownable: caller is not the owner",
	"SafeERC20: low-level call failed", "Pausable: paused", "TransferHelper: TRANSFER_FROM_FAILED", "expired", "slippage",
}

// revertData is the ABI encoding of Error(string) with a short message:
// selector, offset 0x20, length, the message padded to whole words.
func (g *gen) revertData() []byte {
	msg := revertReasons[g.r.IntN(len(revertReasons))]
	b := make([]byte, 4+64+(len(msg)+31)/32*32)
	copy(b, []byte{0x08, 0xc3, 0x79, 0xa0})
	b[4+31] = 0x20
	b[4+63] = byte(len(msg))
	copy(b[4+64:], msg)
	return b
}

// grow gives f (at the given depth) its calls, recursively.
func (g *gen) grow(f *Frame, depth int, mayLog bool) {
	if depth >= maxDepth {
		return
	}
	k := g.geometric(meanChildren[depth-1])
	for range k {
		if g.frames >= maxFramesPerTx {
			return
		}
		g.frames++
		c := g.child(f, depth)
		f.Calls = append(f.Calls, c)
		if c.Kind != "SELFDESTRUCT" {
			g.grow(c, depth+1, mayLog && c.Error == "")
		}
	}
}

// child makes one call frame made by f.
func (g *gen) child(f *Frame, depth int) *Frame {
	from := f.Runner()
	u := g.r.Float64()
	var c *Frame
	switch {
	case u < 0.50:
		c = &Frame{Kind: "CALL", From: from, To: g.calleeAddr(), Value: g.value(0.05, 1_000_000_000_000_000_000)}
	case u < 0.80:
		c = &Frame{Kind: "STATICCALL", From: from, To: g.calleeAddr()}
	case u < 0.95:
		c = &Frame{Kind: "DELEGATECALL", From: from, To: g.calleeAddr()}
	case u < 0.97:
		c = &Frame{Kind: "CREATE", From: from, To: g.newContract()}
	case u < 0.985 || depth < 2:
		c = &Frame{Kind: "CREATE2", From: from, To: g.newContract()}
	default:
		return &Frame{Kind: "SELFDESTRUCT", From: from, To: g.senderAddr(), Value: g.value(0.7, 500_000_000_000_000_000), Input: []byte{}, Output: []byte{}}
	}
	if c.Kind == "CREATE" || c.Kind == "CREATE2" {
		c.Input = g.code(200 + g.r.IntN(600))
		c.Output = g.code(len(c.Input) * 3 / 4)
	} else {
		c.Input = g.calldata(g.geometric(2))
		c.Output = g.words(g.geometric(1))
	}
	if g.r.Float64() < childRevert {
		c.Error = "execution reverted"
		c.Output = g.revertData()
		if c.Kind == "CREATE" || c.Kind == "CREATE2" {
			c.Output = []byte{}
		}
	}
	return c
}

// settleGas fills gas and gas used bottom-up: a frame uses its own work and
// its calls' gas, and was given somewhat more than it used.
func (g *gen) settleGas(f *Frame) {
	if f.Kind == "SELFDESTRUCT" {
		return // a suicide has no gas of its own in either trace dialect
	}
	used := 2_000 + g.r.Uint64N(28_000)
	if f.Kind == "CREATE" || f.Kind == "CREATE2" {
		used += 200 * uint64(len(f.Output))
	}
	if len(f.Input) == 0 && len(f.Calls) == 0 && f.Kind == "CALL" {
		used = 0 // a plain transfer runs no code
	}
	for _, c := range f.Calls {
		g.settleGas(c)
		used += c.Gas // the gas handed over, whatever part of it came back
	}
	f.GasUsed = used
	f.Gas = used + used/4 + g.r.Uint64N(10_000)
	if used == 0 {
		f.Gas = 0
	}
}

// logs adds the logs of f's subtree to t, in execution order (pre-order):
// only frames that may change state and did not fail, below no failed frame.
func (g *gen) logs(t *Tx, f *Frame, ok bool) {
	ok = ok && f.Error == ""
	if !ok {
		return
	}
	switch f.Kind {
	case "CALL", "DELEGATECALL", "CREATE", "CREATE2":
		if len(f.Input) > 0 {
			for range g.geometric(logsPerFrame) {
				t.Logs = append(t.Logs, g.log(f.Runner()))
			}
		}
	}
	for _, c := range f.Calls {
		if c.Kind != "STATICCALL" {
			g.logs(t, c, ok)
		}
	}
}

// log makes one log of the contract addr: 0 to 4 topics (mostly 3, as
// ERC-20 Transfer), 0 to 4 words of data.
func (g *gen) log(addr string) *Log {
	l := &Log{Address: addr}
	var nt int
	switch u := g.r.Float64(); {
	case u < 0.03:
		nt = 0
	case u < 0.10:
		nt = 1
	case u < 0.20:
		nt = 2
	case u < 0.85:
		nt = 3
	default:
		nt = 4
	}
	for j := range nt {
		switch j {
		case 0:
			l.Topics = append(l.Topics, g.c.hash("event", g.r.Uint64N(48)))
		case 1, 2:
			l.Topics = append(l.Topics, padAddr(g.calleeAddr()))
		default:
			var w [32]byte
			g.word(w[:])
			l.Topics = append(l.Topics, w)
		}
	}
	l.Data = g.words(g.r.IntN(5))
	return l
}

// padAddr is an address as a 32-byte topic.
func padAddr(a string) [32]byte {
	var w [32]byte
	hexDecode(w[12:], a[2:])
	return w
}
