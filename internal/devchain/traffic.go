package devchain

import (
	"context"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/chainquery/chainquery/jsonrpc"
)

// ContractsJSON is contracts/Traffic.json: the ABI selectors and creation
// bytecode of the test contracts, for other nodes' traffic (internal/gethdev).
//
//go:embed contracts/Traffic.json
var ContractsJSON []byte

type compiled struct {
	Contracts map[string]struct {
		Bytecode string            `json:"bytecode"`
		Methods  map[string]string `json:"methods"`
	} `json:"contracts"`
}

// Traffic sends a varied stream of transactions to a dev node whose accounts
// are unlocked (anvil's are): every round is one block holding a call with
// nested CALL, DELEGATECALL, STATICCALL, CREATE, CREATE2 and SELFDESTRUCT and
// logs with 0 to 4 topics, a reverted transaction, a plain value transfer, a
// contract creation and a transfer into a contract.
type Traffic struct {
	RPC      *jsonrpc.Client
	Accounts []string
	Driver   string
	Lib      string
	Rounds   int

	abi compiled
}

// Deploy deploys the contracts and returns a Traffic ready to send rounds.
func Deploy(ctx context.Context, rpc *jsonrpc.Client) (*Traffic, error) {
	t, err := newTraffic(ctx, rpc)
	if err != nil {
		return nil, err
	}
	if t.Lib, err = t.deploy(ctx, "Lib", ""); err != nil {
		return nil, err
	}
	if t.Driver, err = t.deploy(ctx, "Driver", word(t.Lib)); err != nil {
		return nil, err
	}
	return t, nil
}

// Attach returns a Traffic that sends rounds to the contracts an earlier
// Deploy made at lib and driver on the same chain (a kept dev chain). It
// fails if either address holds no code.
func Attach(ctx context.Context, rpc *jsonrpc.Client, lib, driver string) (*Traffic, error) {
	t, err := newTraffic(ctx, rpc)
	if err != nil {
		return nil, err
	}
	for _, a := range []string{lib, driver} {
		var code string
		if err := rpc.Call(ctx, &code, "eth_getCode", a, "latest"); err != nil {
			return nil, fmt.Errorf("eth_getCode %s: %w", a, err)
		}
		if code == "" || code == "0x" {
			return nil, fmt.Errorf("no contract at %s", a)
		}
	}
	t.Lib, t.Driver = lib, driver
	return t, nil
}

// newTraffic reads the compiled contracts and the node's accounts.
func newTraffic(ctx context.Context, rpc *jsonrpc.Client) (*Traffic, error) {
	t := &Traffic{RPC: rpc}
	if err := json.Unmarshal(ContractsJSON, &t.abi); err != nil {
		return nil, fmt.Errorf("contracts/Traffic.json: %w", err)
	}
	if err := rpc.Call(ctx, &t.Accounts, "eth_accounts"); err != nil {
		return nil, fmt.Errorf("eth_accounts: %w", err)
	}
	if len(t.Accounts) < 2 {
		return nil, fmt.Errorf("the node has %d unlocked accounts, need 2", len(t.Accounts))
	}
	return t, nil
}

func (t *Traffic) deploy(ctx context.Context, name, args string) (string, error) {
	c, ok := t.abi.Contracts[name]
	if !ok {
		return "", fmt.Errorf("no contract %s in Traffic.json", name)
	}
	hash, err := t.send(ctx, map[string]any{"from": t.Accounts[0], "data": c.Bytecode + args, "gas": "0x2dc6c0"})
	if err != nil {
		return "", fmt.Errorf("deploy %s: %w", name, err)
	}
	raw, err := t.WaitReceipt(ctx, hash)
	if err != nil {
		return "", fmt.Errorf("deploy %s: %w", name, err)
	}
	var receipt struct {
		ContractAddress string `json:"contractAddress"`
		Status          string `json:"status"`
	}
	if err := json.Unmarshal(raw, &receipt); err != nil || receipt.Status != "0x1" || receipt.ContractAddress == "" {
		return "", fmt.Errorf("deploy %s failed: receipt %.300s", name, raw)
	}
	return receipt.ContractAddress, nil
}

// WaitReceipt polls for a transaction's receipt: anvil's automine seals the
// block a moment after eth_sendTransaction returns.
func (t *Traffic) WaitReceipt(ctx context.Context, hash string) (json.RawMessage, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var raw json.RawMessage
		if err := t.RPC.Call(ctx, &raw, "eth_getTransactionReceipt", hash); err != nil {
			return nil, fmt.Errorf("eth_getTransactionReceipt: %w", err)
		}
		if string(raw) != "null" {
			return raw, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no receipt for %s after 10s", hash)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Round sends one round of transactions and mines them into one block. It
// returns the transaction hashes in the order sent.
func (t *Traffic) Round(ctx context.Context) ([]string, error) {
	t.Rounds++
	r := uint64(t.Rounds)
	if err := t.RPC.Call(ctx, new(json.RawMessage), "evm_setAutomine", false); err != nil {
		return nil, fmt.Errorf("evm_setAutomine: %w", err)
	}
	defer t.RPC.Call(context.WithoutCancel(ctx), new(json.RawMessage), "evm_setAutomine", true)
	a, b := t.Accounts[0], t.Accounts[1]
	txs := []map[string]any{
		{"from": a, "to": t.Driver, "data": t.call("Driver", "nested(uint256)", r), "gas": "0x2dc6c0"},
		// A reverted transaction: gas is given, since estimation would fail.
		{"from": b, "to": t.Driver, "data": t.call("Driver", "alwaysRevert(uint256)", r), "gas": "0x30d40"},
		{"from": b, "to": a, "value": hexBig(new(big.Int).Mul(big.NewInt(int64(r)), big.NewInt(1e15))), "gas": "0x5208"},
		{"from": a, "to": t.Driver, "data": t.call("Driver", "emitAll(uint256)", r*7), "gas": "0x30d40"},
		{"from": b, "data": t.abi.Contracts["Child"].Bytecode, "gas": "0x7a120", "value": "0x3e8"},
		{"from": a, "to": t.Driver, "value": "0x1", "gas": "0xc350"},
	}
	var hashes []string
	for _, tx := range txs {
		h, err := t.send(ctx, tx)
		if err != nil {
			return nil, err
		}
		hashes = append(hashes, h)
	}
	if err := t.RPC.Call(ctx, new(json.RawMessage), "evm_mine"); err != nil {
		return nil, fmt.Errorf("evm_mine: %w", err)
	}
	return hashes, nil
}

// MineEmpty mines n blocks without transactions.
func (t *Traffic) MineEmpty(ctx context.Context, n int) error {
	return t.RPC.Call(ctx, new(json.RawMessage), "anvil_mine", fmt.Sprintf("0x%x", n))
}

func (t *Traffic) send(ctx context.Context, tx map[string]any) (string, error) {
	var hash string
	if err := t.RPC.Call(ctx, &hash, "eth_sendTransaction", tx); err != nil {
		return "", fmt.Errorf("eth_sendTransaction: %w", err)
	}
	return hash, nil
}

// call encodes a call of a method taking one uint256.
func (t *Traffic) call(contract, method string, arg uint64) string {
	sel := t.abi.Contracts[contract].Methods[method]
	if sel == "" {
		panic("no method " + contract + "." + method + " in Traffic.json")
	}
	return "0x" + sel + word(fmt.Sprintf("0x%x", arg))
}

// word left-pads a 0x-prefixed hex value (address or number) to one ABI word.
func word(v string) string {
	v = strings.TrimPrefix(v, "0x")
	if len(v)%2 == 1 {
		v = "0" + v
	}
	b, _ := hex.DecodeString(v)
	out := make([]byte, 32)
	copy(out[32-len(b):], b)
	return hex.EncodeToString(out)
}

func hexBig(v *big.Int) string { return "0x" + v.Text(16) }
