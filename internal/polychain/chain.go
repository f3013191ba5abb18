// Package polychain makes a deterministic Polygon-shaped EVM chain and serves
// it over JSON-RPC, for benchmarks at the scale of real Polygon blocks.
//
// Every block is a pure function of (seed, block number): any block can be
// made on its own, in any order, by any process, and is the same each time.
// The shape follows Polygon PoS mainnet: chain id 137, a block every 2 s,
// about 100 transactions per block (legacy and EIP-1559; value transfers,
// contract calls, creations and reverts), about 830 call frames and 390 logs
// per block, call trees up to depth 8, and about 1 MB of JSON-RPC per block.
// Addresses are drawn from a Zipf distribution over a fixed set of accounts,
// whose exponent is chosen so that the hottest account is the callee (`to`)
// of a given share of all call frames (10% by default).
//
// The Node answers the calls the ingester makes (eth_chainId,
// eth_blockNumber, eth_getBlockByNumber/ByHash, eth_getBlockReceipts,
// eth_getTransactionReceipt, trace_block, debug_traceBlockByNumber/ByHash
// with the callTracer), singly or in batches, from answers rendered once per
// block into memory or a cache directory.
package polychain

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"time"
)

// ChainID is Polygon PoS mainnet's chain id, which the ingester checks.
const ChainID = 137

// Defaults of Config.
const (
	DefaultStart      = 65_000_000
	DefaultTxPerBlock = 100
	DefaultAccounts   = 200_000
	DefaultHotShare   = 0.107 // Zipf rank 1; transfers, creations and self-destructs dilute it to ~10% of traces
	BlockInterval     = 2     // seconds between blocks, as on Polygon PoS
)

// DefaultStartTime is the timestamp of the first block: inside the
// service's trace history (which starts on 2025-01-01).
var DefaultStartTime = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).Unix()

// Config sets the size and shape of a chain. The zero value of each field
// means its default; Blocks must be set.
type Config struct {
	Seed       uint64
	Start      uint64  // number of the first block
	Blocks     int     // number of blocks
	TxPerBlock int     // mean transactions per block; each block has 80% to 120% of it
	Accounts   int     // accounts the addresses are drawn from
	HotShare   float64 // probability that a Zipf draw is the hottest account (rank 1)
	StartTime  int64   // Unix time of the first block
}

// Chain is a deterministic chain. Its methods are safe for concurrent use.
type Chain struct {
	cfg      Config
	zipfS    float64  // exponent of the Zipf draws
	accounts [][]byte // account address by index: 20 bytes
	hexAddr  []string // the same, as 0x-prefixed lowercase hex
	senders  []int    // account index of the sender of Zipf rank r (a permutation)
}

// New returns the chain of cfg.
func New(cfg Config) (*Chain, error) {
	if cfg.Blocks <= 0 {
		return nil, fmt.Errorf("polychain: Blocks must be positive")
	}
	if cfg.Start == 0 {
		cfg.Start = DefaultStart
	}
	if cfg.TxPerBlock <= 0 {
		cfg.TxPerBlock = DefaultTxPerBlock
	}
	if cfg.Accounts <= 0 {
		cfg.Accounts = DefaultAccounts
	}
	if cfg.Accounts < 16 {
		return nil, fmt.Errorf("polychain: at least 16 accounts")
	}
	if cfg.HotShare <= 0 {
		cfg.HotShare = DefaultHotShare
	}
	if cfg.HotShare >= 1 {
		return nil, fmt.Errorf("polychain: HotShare must be below 1")
	}
	if cfg.StartTime == 0 {
		cfg.StartTime = DefaultStartTime
	}
	c := &Chain{cfg: cfg, zipfS: zipfExponent(cfg.Accounts, cfg.HotShare)}
	c.accounts = make([][]byte, cfg.Accounts)
	c.hexAddr = make([]string, cfg.Accounts)
	for i := range c.accounts {
		h := c.hash("account", uint64(i))
		c.accounts[i] = h[12:32]
		c.hexAddr[i] = "0x" + hex.EncodeToString(h[12:32])
	}
	// Senders are drawn from the same Zipf law, but rank r of the senders
	// is another account than rank r of the callees, so that the hottest
	// sender is not the hottest contract.
	c.senders = make([]int, cfg.Accounts)
	step := uint64(7919) // prime: a permutation for any account count it does not divide
	for gcd(step, uint64(cfg.Accounts)) != 1 {
		step += 2
	}
	for r := range c.senders {
		c.senders[r] = int((uint64(r)*step + uint64(cfg.Accounts)/2) % uint64(cfg.Accounts))
	}
	return c, nil
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// zipfExponent returns the exponent s > 1 of a Zipf law over n ranks
// (probability of rank r proportional to r^-s) whose rank 1 has probability
// share, or the nearest allowed value (math/rand's Zipf needs s > 1).
func zipfExponent(n int, share float64) float64 {
	p1 := func(s float64) float64 {
		var sum float64
		for r := 1; r <= n; r++ {
			sum += math.Pow(float64(r), -s)
		}
		return 1 / sum
	}
	lo, hi := 1.0001, 8.0
	if p1(lo) >= share {
		return lo
	}
	for range 60 {
		mid := (lo + hi) / 2
		if p1(mid) < share {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// Config returns the chain's configuration, defaults filled in.
func (c *Chain) Config() Config { return c.cfg }

// First and Last are the numbers of the chain's first and last blocks.
func (c *Chain) First() uint64 { return c.cfg.Start }
func (c *Chain) Last() uint64  { return c.cfg.Start + uint64(c.cfg.Blocks) - 1 }

// Has reports whether the chain holds block n.
func (c *Chain) Has(n uint64) bool { return n >= c.First() && n <= c.Last() }

// Time is the timestamp of block n.
func (c *Chain) Time(n uint64) int64 {
	return c.cfg.StartTime + int64(n-c.cfg.Start)*BlockInterval
}

// ZipfExponent is the exponent of the chain's Zipf draws.
func (c *Chain) ZipfExponent() float64 { return c.zipfS }

// ZipfShare is the expected share of Zipf draws that give rank r (1 is the
// hottest).
func (c *Chain) ZipfShare(r int) float64 {
	return c.cfg.HotShare * math.Pow(float64(r), -c.zipfS)
}

// Callee returns the address of the account of Zipf rank r (1-based) among
// callees: rank 1 is the hottest contract, the `to` of about HotShare of
// the call frames drawn from the law.
func (c *Chain) Callee(r int) string { return c.hexAddr[r-1] }

// Sender returns the address of the account of Zipf rank r among
// transaction senders.
func (c *Chain) Sender(r int) string { return c.hexAddr[c.senders[r-1]] }

// BlockHash returns the hash of block n, which depends on (seed, n) only, so
// that the parent hash of any block is known without making its parent.
func (c *Chain) BlockHash(n uint64) [32]byte { return c.hash("block", n) }

// EventTopic is the topic0 of the chain's event k (0 to 47): contracts
// emit each alike.
func (c *Chain) EventTopic(k uint64) [32]byte { return c.hash("event", k) }

// hash is the chain's deterministic 32-byte value for (kind, numbers...).
func (c *Chain) hash(kind string, nums ...uint64) [32]byte {
	buf := make([]byte, 0, 8+len(kind)+8*len(nums))
	buf = binary.BigEndian.AppendUint64(buf, c.cfg.Seed)
	buf = append(buf, kind...)
	for _, n := range nums {
		buf = binary.BigEndian.AppendUint64(buf, n)
	}
	return sha256.Sum256(buf)
}
