// Package gethdev runs an in-process go-ethereum dev node for tests: the
// node family (geth, Bor) whose traces come from debug_traceBlockByNumber
// with the callTracer, next to anvil's Parity-style trace_block. It also
// sends the devchain traffic as signed raw transactions, which geth needs
// (it has no unlocked accounts) and any other node accepts, so both node
// families can run the very same transactions.
//
// The node is built the way go-ethereum's ethclient/simulated builds its
// backend, plus the tracers API that package leaves out, and it never opens
// a socket off loopback: no P2P listener, no discovery, no NAT, no IPC, and
// HTTP on 127.0.0.1 only.
package gethdev

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/eth/tracers"
	_ "github.com/ethereum/go-ethereum/eth/tracers/native" // registers callTracer
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

// Hardfork is the fork the dev chain runs from genesis. Gas costs change
// from fork to fork, so a node compared with this one must run the same
// fork (anvil: --hardfork Hardfork). go-ethereum's own dev config runs
// Osaka and the unreleased Bogota (Amsterdam's state-gas repricing), which
// anvil does not have.
const Hardfork = "prague"

// GasLimit is the block gas limit, anvil's default, so that a contract that
// reads GASLIMIT sees the same value on both nodes.
const GasLimit = 30_000_000

// DevKeys are the private keys of anvil's first two default accounts
// (mnemonic "test test ... junk"). Funding the same keys on geth gives both
// nodes the same senders, hence the same nonces and contract addresses.
var DevKeys = []string{
	"ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", // 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266
	"59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d", // 0x70997970C51812dc3A010C7d01b50e0d17dc79C8
}

// Key returns the private key DevKeys[i]; it panics if i is out of range.
func Key(i int) *ecdsa.PrivateKey {
	k, err := crypto.HexToECDSA(DevKeys[i])
	if err != nil {
		panic(err) // a constant above is broken
	}
	return k
}

// Address returns the address of DevKeys[i].
func Address(i int) common.Address { return crypto.PubkeyToAddress(Key(i).PublicKey) }

// Node is a running in-process go-ethereum node. It seals a block only when
// Seal is called, so the caller decides which transactions share a block.
type Node struct {
	URL     string // JSON-RPC over HTTP on 127.0.0.1
	ChainID uint64

	stack  *node.Node
	eth    *eth.Ethereum
	mu     sync.Mutex // the simulated beacon is not safe for concurrent use
	beacon *catalyst.SimulatedBeacon
}

// Start starts a dev node with the chain id on a free loopback port, with
// each of the DevKeys accounts funded with 10,000 ether (as anvil funds
// them). It serves the eth, debug (with the native tracers), net, web3 and
// txpool namespaces.
func Start(chainID uint64) (*Node, error) {
	nodeConf := node.DefaultConfig
	nodeConf.DataDir = "" // in memory
	nodeConf.IPCPath = "" // no IPC socket file
	nodeConf.P2P = p2p.Config{NoDiscovery: true, NoDial: true, MaxPeers: 0, ListenAddr: ""}
	nodeConf.HTTPHost = "127.0.0.1"
	nodeConf.HTTPPort = 0
	nodeConf.HTTPModules = []string{"eth", "debug", "net", "web3", "txpool"}
	nodeConf.WSHost = ""
	// No API is authenticated, so the engine endpoint never starts; should
	// one appear, it must still stay on loopback and on a free port.
	nodeConf.AuthAddr, nodeConf.AuthPort = "127.0.0.1", 0

	config := *params.AllDevChainProtocolChanges
	config.ChainID = new(big.Int).SetUint64(chainID)
	config.OsakaTime, config.BogotaTime = nil, nil // Prague: see Hardfork

	// Prague blocks call the system contracts (EIP-2935, 4788, 7002,
	// 7251), so they must exist from genesis.
	alloc := core.SystemContractAllocs()
	funds := new(big.Int).Mul(big.NewInt(10_000), big.NewInt(params.Ether))
	for i := range DevKeys {
		alloc[Address(i)] = types.Account{Balance: funds}
	}
	ethConf := ethconfig.Defaults
	ethConf.Genesis = &core.Genesis{Config: &config, GasLimit: GasLimit, Alloc: alloc}
	ethConf.Miner.GasCeil = GasLimit
	ethConf.SyncMode = ethconfig.FullSync
	ethConf.TxPool.NoLocals = true

	stack, err := node.New(&nodeConf)
	if err != nil {
		return nil, fmt.Errorf("gethdev: %w", err)
	}
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("gethdev: %w", err)
	}
	filterSystem := filters.NewFilterSystem(backend.APIBackend, filters.Config{})
	stack.RegisterAPIs([]rpc.API{{Namespace: "eth", Service: filters.NewFilterAPI(filterSystem)}})
	// What ethclient/simulated leaves out: debug_traceBlockByNumber and
	// friends.
	stack.RegisterAPIs(tracers.APIs(backend.APIBackend))
	if err := stack.Start(); err != nil {
		stack.Close()
		return nil, fmt.Errorf("gethdev: start: %w", err)
	}
	// Period 0: no block is sealed until Seal asks for one.
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("gethdev: beacon: %w", err)
	}
	if err := beacon.Fork(backend.BlockChain().GetCanonicalHash(0)); err != nil {
		stack.Close()
		return nil, fmt.Errorf("gethdev: beacon: %w", err)
	}
	return &Node{URL: stack.HTTPEndpoint(), ChainID: chainID, stack: stack, eth: backend, beacon: beacon}, nil
}

// Seal seals one block holding every transaction in the pool and returns
// its number. It fails if a transaction cannot be mined (a nonce gap) or
// was left out, or if no new block became the head (the simulated beacon
// only logs its errors).
func (n *Node) Seal() (uint64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.beacon == nil {
		return 0, errors.New("gethdev: the node is closed")
	}
	// eth_sendRawTransaction returns once a transaction is in the pool's
	// queue; it is promoted to pending, which is what a block takes, in
	// the background, and a block sealed before then leaves it out (seen
	// here about once in a few hundred runs).
	if err := n.settle(func(_, queued int) bool { return queued == 0 }); err != nil {
		return 0, fmt.Errorf("gethdev: before sealing: %w", err)
	}
	before := n.eth.BlockChain().CurrentBlock().Number.Uint64()
	n.beacon.Commit()
	after := n.eth.BlockChain().CurrentBlock().Number.Uint64()
	if after != before+1 {
		return after, fmt.Errorf("gethdev: sealing a block on %d left the head at %d", before, after)
	}
	if err := n.settle(func(pending, queued int) bool { return pending+queued == 0 }); err != nil {
		return after, fmt.Errorf("gethdev: block %d left transactions out: %w", after, err)
	}
	return after, nil
}

// Settle waits until every transaction sent so far is executable (none is
// left in the pool's queue). geth adds a sent transaction to its pool in the
// background; when several transactions of one account arrive in quick
// succession under load, the pool was seen to leave the later ones queued
// behind an already pending one for good (about once in 40 runs on a loaded
// machine), so senders settle after each transaction.
func (n *Node) Settle(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.settle(func(_, queued int) bool { return queued == 0 })
}

// settle waits until the pool's counts of pending and queued transactions
// satisfy done, running the pool's reset (which applies a new head and
// promotes queued transactions) before each look.
func (n *Node) settle(done func(pending, queued int) bool) error {
	pool := n.eth.TxPool()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := pool.Sync(); err != nil {
			return err
		}
		pending, queued := pool.Stats()
		if done(pending, queued) {
			return nil
		}
		if time.Now().After(deadline) {
			p, q := pool.Content()
			var desc []string
			for _, group := range []map[common.Address][]*types.Transaction{p, q} {
				for a, txs := range group {
					for _, tx := range txs {
						desc = append(desc, fmt.Sprintf("%s nonce %d (state nonce %d)", a.Hex()[:10], tx.Nonce(), pool.Nonce(a)))
					}
				}
			}
			return fmt.Errorf("after 10s the pool holds %d pending and %d queued transactions: %s", pending, queued, strings.Join(desc, "; "))
		}
		time.Sleep(time.Millisecond)
	}
}

// Close stops the node; it can be called more than once.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var err error
	if n.beacon != nil {
		err = n.beacon.Stop()
		n.beacon = nil
	}
	if n.stack != nil {
		err = errors.Join(err, n.stack.Close())
		n.stack = nil
	}
	return err
}
