package gethdev

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"

	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/jsonrpc"
)

// Traffic sends devchain.Traffic's rounds as transactions signed with
// DevKeys and sent with eth_sendRawTransaction: geth has no unlocked
// accounts for eth_sendTransaction, and signed bytes can go unchanged to
// any node of the same chain id, so two node families can be given the
// very same transactions (same hashes, senders, nonces, hence the same
// contract addresses).
//
// The transactions and their order are devchain.Traffic's: a call with
// nested CALL, DELEGATECALL, STATICCALL, CREATE, CREATE2, SELFDESTRUCT, a
// reverted inner call and logs with 0 to 4 topics; a reverted transaction;
// a plain value transfer; the events on their own; a contract creation with
// value; a transfer into a contract.
type Traffic struct {
	RPC     *jsonrpc.Client
	ChainID uint64
	// Seal mines every pending transaction into one block. For Node it is
	// Node.Seal; for anvil started with --no-mining, evm_mine.
	Seal func(ctx context.Context) error
	// Sent, when set, runs after each transaction is sent: for Node,
	// Node.Settle, so that a transaction is in the pending set before the
	// next one of the same account arrives (see Node.Settle).
	Sent func(ctx context.Context) error

	Accounts [2]common.Address // DevKeys' addresses
	Driver   common.Address
	Lib      common.Address
	Rounds   int

	keys      [2]*ecdsa.PrivateKey
	nonces    [2]uint64
	contracts compiled
}

// Round is what one Traffic.Round sent: the block holding it and the
// transaction hashes in the order sent.
type Round struct {
	Block  uint64
	Hashes []common.Hash
}

// Fee caps of every transaction: both anvil and geth start at a base fee of
// at most 1 gwei, which only falls on a chain this idle.
var (
	tipCap = big.NewInt(params.GWei)
	feeCap = big.NewInt(20 * params.GWei)
)

// Deploy deploys Lib and Driver from the first dev account, each in a block
// of its own as devchain.Deploy does, and returns a Traffic ready to send
// rounds. It fails if the node refuses a transaction, if seal fails, or if
// a contract has no code after its block.
func Deploy(ctx context.Context, rpc *jsonrpc.Client, chainID uint64, seal func(context.Context) error) (*Traffic, error) {
	t := &Traffic{RPC: rpc, ChainID: chainID, Seal: seal}
	if err := json.Unmarshal(devchain.ContractsJSON, &t.contracts); err != nil {
		return nil, fmt.Errorf("gethdev: Traffic.json: %w", err)
	}
	for i := range t.keys {
		t.keys[i] = Key(i)
		t.Accounts[i] = crypto.PubkeyToAddress(t.keys[i].PublicKey)
		var n string
		if err := rpc.Call(ctx, &n, "eth_getTransactionCount", t.Accounts[i].Hex(), "pending"); err != nil {
			return nil, fmt.Errorf("eth_getTransactionCount: %w", err)
		}
		v, ok := new(big.Int).SetString(strings.TrimPrefix(n, "0x"), 16)
		if !ok {
			return nil, fmt.Errorf("eth_getTransactionCount: %q", n)
		}
		t.nonces[i] = v.Uint64()
	}
	var err error
	if t.Lib, err = t.deploy(ctx, "Lib", nil); err != nil {
		return nil, err
	}
	if t.Driver, err = t.deploy(ctx, "Driver", common.LeftPadBytes(t.Lib.Bytes(), 32)); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Traffic) deploy(ctx context.Context, name string, args []byte) (common.Address, error) {
	code, err := t.bytecode(name)
	if err != nil {
		return common.Address{}, err
	}
	want := crypto.CreateAddress(t.Accounts[0], t.nonces[0])
	r, err := t.send(ctx, []tx{{from: 0, data: append(code, args...), gas: 3_000_000}})
	if err != nil {
		return common.Address{}, fmt.Errorf("deploy %s: %w", name, err)
	}
	var got string
	if err := t.RPC.Call(ctx, &got, "eth_getCode", want.Hex(), fmt.Sprintf("0x%x", r.Block)); err != nil {
		return common.Address{}, fmt.Errorf("deploy %s: eth_getCode: %w", name, err)
	}
	if got == "" || got == "0x" {
		return common.Address{}, fmt.Errorf("deploy %s: no code at %s after block %d", name, want, r.Block)
	}
	return want, nil
}

// tx is one transaction to sign: from is an index into DevKeys; to nil
// creates a contract.
type tx struct {
	from  int
	to    *common.Address
	value *big.Int
	data  []byte
	gas   uint64
}

// Round sends one round of transactions (devchain.Traffic.Round's, in its
// order) and seals them into one block.
func (t *Traffic) Round(ctx context.Context) (Round, error) {
	t.Rounds++
	r := uint64(t.Rounds)
	child, err := t.bytecode("Child")
	if err != nil {
		return Round{}, err
	}
	a, driver := t.Accounts[0], t.Driver
	return t.send(ctx, []tx{
		{from: 0, to: &driver, data: t.call("Driver", "nested(uint256)", r), gas: 3_000_000},
		// A reverted transaction: gas is given, since estimation would fail.
		{from: 1, to: &driver, data: t.call("Driver", "alwaysRevert(uint256)", r), gas: 200_000},
		{from: 1, to: &a, value: new(big.Int).Mul(new(big.Int).SetUint64(r), big.NewInt(1e15)), gas: 21_000},
		{from: 0, to: &driver, data: t.call("Driver", "emitAll(uint256)", r*7), gas: 200_000},
		{from: 1, data: child, value: big.NewInt(1000), gas: 500_000},
		{from: 0, to: &driver, value: big.NewInt(1), gas: 50_000},
	})
}

// StarvedRound sends what devchain's rounds lack, errors other than a
// revert, in one block: Driver.nested with too little gas for the first
// CREATE (an out-of-gas inner frame in a transaction that reverts), and
// with too little for anything past the first opcodes (an out-of-gas
// transaction).
func (t *Traffic) StarvedRound(ctx context.Context) (Round, error) {
	t.Rounds++
	r := uint64(t.Rounds)
	driver := t.Driver
	return t.send(ctx, []tx{
		{from: 0, to: &driver, data: t.call("Driver", "nested(uint256)", r), gas: 100_000},
		{from: 0, to: &driver, data: t.call("Driver", "nested(uint256)", r), gas: 30_000},
	})
}

// send signs and sends txs, seals them, and checks that all of them landed
// in the one new block.
func (t *Traffic) send(ctx context.Context, txs []tx) (Round, error) {
	signer := types.LatestSignerForChainID(new(big.Int).SetUint64(t.ChainID))
	var out Round
	for _, x := range txs {
		value := x.value
		if value == nil {
			value = new(big.Int)
		}
		signed, err := types.SignNewTx(t.keys[x.from], signer, &types.DynamicFeeTx{
			ChainID: new(big.Int).SetUint64(t.ChainID), Nonce: t.nonces[x.from],
			GasTipCap: tipCap, GasFeeCap: feeCap, Gas: x.gas, To: x.to, Value: value, Data: x.data,
		})
		if err != nil {
			return out, fmt.Errorf("sign: %w", err)
		}
		raw, err := signed.MarshalBinary()
		if err != nil {
			return out, err
		}
		var hash common.Hash
		if err := t.RPC.Call(ctx, &hash, "eth_sendRawTransaction", "0x"+hex.EncodeToString(raw)); err != nil {
			return out, fmt.Errorf("eth_sendRawTransaction: %w", err)
		}
		if hash != signed.Hash() {
			return out, fmt.Errorf("eth_sendRawTransaction: the node says %s, the transaction is %s", hash, signed.Hash())
		}
		t.nonces[x.from]++
		out.Hashes = append(out.Hashes, hash)
		if t.Sent != nil {
			if err := t.Sent(ctx); err != nil {
				return out, fmt.Errorf("after sending %s: %w", hash, err)
			}
		}
	}
	if err := t.Seal(ctx); err != nil {
		return out, fmt.Errorf("seal: %w", err)
	}
	for i, h := range out.Hashes {
		n, err := t.receiptBlock(ctx, h)
		if err != nil {
			return out, err
		}
		if i == 0 {
			out.Block = n
		} else if n != out.Block {
			return out, fmt.Errorf("transaction %s is in block %d, the round's first in %d", h, n, out.Block)
		}
	}
	return out, nil
}

// receiptBlock returns the number of the block holding the transaction.
// Seal has returned, but a node may index receipts a moment later (anvil
// does), so a missing receipt is asked for again for a few seconds.
func (t *Traffic) receiptBlock(ctx context.Context, hash common.Hash) (uint64, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var r *struct {
			BlockNumber string `json:"blockNumber"`
		}
		if err := t.RPC.Call(ctx, &r, "eth_getTransactionReceipt", hash.Hex()); err != nil {
			return 0, fmt.Errorf("eth_getTransactionReceipt: %w", err)
		}
		if r != nil {
			n, ok := new(big.Int).SetString(strings.TrimPrefix(r.BlockNumber, "0x"), 16)
			if !ok {
				return 0, fmt.Errorf("receipt of %s: blockNumber %q", hash, r.BlockNumber)
			}
			return n.Uint64(), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no receipt for %s 10s after sealing", hash)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

type compiled struct {
	Contracts map[string]struct {
		Bytecode string            `json:"bytecode"`
		Methods  map[string]string `json:"methods"`
	} `json:"contracts"`
}

func (t *Traffic) bytecode(name string) ([]byte, error) {
	c, ok := t.contracts.Contracts[name]
	if !ok {
		return nil, fmt.Errorf("no contract %s in Traffic.json", name)
	}
	return hex.DecodeString(strings.TrimPrefix(c.Bytecode, "0x"))
}

// call encodes a call of a method taking one uint256.
func (t *Traffic) call(contract, method string, arg uint64) []byte {
	sel, err := hex.DecodeString(t.contracts.Contracts[contract].Methods[method])
	if err != nil || len(sel) != 4 {
		panic("no method " + contract + "." + method + " in Traffic.json")
	}
	return append(sel, common.LeftPadBytes(new(big.Int).SetUint64(arg).Bytes(), 32)...)
}
