package solana

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/jsonrpc"
)

// Client calls a Solana node. Solana RPC is JSON-RPC 2.0 over HTTP, so it
// uses package jsonrpc's batching and retries, as the EVM reader does.
type Client struct {
	RPC *jsonrpc.Client
}

// NewClient returns a client of the node at url.
func NewClient(url string) *Client { return &Client{RPC: jsonrpc.NewClient(url)} }

// confirmed is the commitment every read uses: confirmed blocks are final in
// practice and are what getBlocks lists without lagging half a minute.
var confirmed = map[string]any{"commitment": "confirmed"}

// Slot returns the node's confirmed slot.
func (c *Client) Slot(ctx context.Context) (uint64, error) {
	var n uint64
	err := c.RPC.Call(ctx, &n, "getSlot", confirmed)
	return n, err
}

// maxBlocksRange is the widest range getBlocks accepts.
const maxBlocksRange = 500_000

// Blocks returns the slots between from and to inclusive that hold a
// confirmed block; skipped slots are absent. Ranges wider than the node
// accepts are asked in parts.
func (c *Client) Blocks(ctx context.Context, from, to uint64) ([]uint64, error) {
	var out []uint64
	for lo := from; lo <= to; lo += maxBlocksRange {
		hi := min(to, lo+maxBlocksRange-1)
		var part []uint64
		if err := c.RPC.Call(ctx, &part, "getBlocks", lo, hi, confirmed); err != nil {
			return nil, err
		}
		for _, s := range part {
			if s < lo || s > hi || (len(out) > 0 && s <= out[len(out)-1]) {
				return nil, fmt.Errorf("getBlocks(%d, %d) answered slot %d out of range or order", lo, hi, s)
			}
		}
		out = append(out, part...)
		if hi == to {
			break
		}
	}
	return out, nil
}

// blockConfig asks for what token balances need: full transactions, version
// 0 included (a node refuses a block holding one otherwise), no rewards.
// rewardsConfig adds the rewards, which SOL balances need too.
var (
	blockConfig = map[string]any{
		"encoding":                       "json",
		"maxSupportedTransactionVersion": 0,
		"transactionDetails":             "full",
		"rewards":                        false,
		"commitment":                     "confirmed",
	}
	rewardsConfig = map[string]any{
		"encoding":                       "json",
		"maxSupportedTransactionVersion": 0,
		"transactionDetails":             "full",
		"rewards":                        true,
		"commitment":                     "confirmed",
	}
)

// RawBlocks fetches the blocks of slots in one batch and returns each raw
// result in the same order; a result is JSON null where the node has no
// block (yet). With rewards, the blocks hold their rewards. A call that
// still fails after the client's retries is an error.
func (c *Client) RawBlocks(ctx context.Context, slots []uint64, rewards bool) ([]json.RawMessage, error) {
	config := blockConfig
	if rewards {
		config = rewardsConfig
	}
	reqs := make([]*jsonrpc.Request, len(slots))
	for i, s := range slots {
		reqs[i] = &jsonrpc.Request{Method: "getBlock", Params: []any{s, config}}
	}
	if err := c.RPC.BatchCall(ctx, reqs); err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(slots))
	for i, r := range reqs {
		if r.Err != nil {
			return nil, fmt.Errorf("getBlock %d: %w", slots[i], r.Err)
		}
		out[i] = r.Result
	}
	return out, nil
}

// headerConfig asks getBlock for the block without its transactions or
// rewards: what checking a blockhash needs.
var headerConfig = map[string]any{
	"encoding":                       "json",
	"maxSupportedTransactionVersion": 0,
	"transactionDetails":             "none",
	"rewards":                        false,
	"commitment":                     "confirmed",
}

// BlockHash returns the blockhash of the confirmed block at slot, and ok
// false when the node has no block there: the slot was skipped, the node no
// longer keeps it (pruned, and no long-term storage), or it has not confirmed
// it yet. getBlocks for that one slot tells these apart from a block it has:
// getBlock answers them with error codes that differ between node versions
// and that the client would retry. The blockhash must be 32 bytes in base58.
func (c *Client) BlockHash(ctx context.Context, slot uint64) (hash string, ok bool, err error) {
	listed, err := c.Blocks(ctx, slot, slot)
	if err != nil {
		return "", false, fmt.Errorf("getBlocks %d: %w", slot, err)
	}
	if len(listed) == 0 {
		return "", false, nil
	}
	var raw json.RawMessage
	if err := c.RPC.Call(ctx, &raw, "getBlock", slot, headerConfig); err != nil {
		return "", false, fmt.Errorf("getBlock %d: %w", slot, err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	var b struct {
		Blockhash string `json:"blockhash"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return "", false, fmt.Errorf("getBlock %d: %w", slot, err)
	}
	if h, ok := chainquery.Base58Decode(b.Blockhash); !ok || len(h) != 32 {
		return "", false, fmt.Errorf("getBlock %d: blockhash %q is not 32 bytes in base58", slot, b.Blockhash)
	}
	return b.Blockhash, true, nil
}

// Accounts returns the data of the accounts at addrs (nil where there is
// none), asking for at most 100 per call, the node's limit.
func (c *Client) Accounts(ctx context.Context, addrs []chainquery.PublicKey) ([][]byte, error) {
	out := make([][]byte, 0, len(addrs))
	for lo := 0; lo < len(addrs); lo += 100 {
		part := addrs[lo:min(lo+100, len(addrs))]
		keys := make([]string, len(part))
		for i, a := range part {
			keys[i] = a.String()
		}
		var res struct {
			Value []*struct {
				Data []string `json:"data"`
			} `json:"value"`
		}
		err := c.RPC.Call(ctx, &res, "getMultipleAccounts", keys, map[string]any{"encoding": "base64", "commitment": "confirmed"})
		if err != nil {
			return nil, fmt.Errorf("getMultipleAccounts: %w", err)
		}
		if len(res.Value) != len(part) {
			return nil, fmt.Errorf("getMultipleAccounts answered %d accounts for %d", len(res.Value), len(part))
		}
		for _, v := range res.Value {
			if v == nil || len(v.Data) == 0 {
				out = append(out, nil)
				continue
			}
			b, err := base64.StdEncoding.DecodeString(v.Data[0])
			if err != nil {
				return nil, fmt.Errorf("getMultipleAccounts: account data: %w", err)
			}
			out = append(out, b)
		}
	}
	return out, nil
}
