// Package solana reads Solana over its JSON-RPC API: decoding of getBlock
// results into SPL token balance changes, a token-list importer, and the
// decoding of Metaplex Token Metadata accounts for the token registry.
package solana

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/chainquery/chainquery"
)

// Block is the part of a getBlock result that token balances and the
// ingester's cursor need. Fields the extraction never reads (instructions,
// log messages, rewards) are left out so that decoding only scans over them.
type Block struct {
	Blockhash    string        `json:"blockhash"`
	BlockTime    *int64        `json:"blockTime"`
	Transactions []Transaction `json:"transactions"`
	Rewards      []Reward      `json:"rewards"` // asked for only when SOL balances are read
}

// Reward is one entry of a block's rewards: a balance change of the block
// that no transaction made (fees to the leader, epoch rewards, rent).
type Reward struct {
	Pubkey      string  `json:"pubkey"`
	Lamports    int64   `json:"lamports"`
	PostBalance uint64  `json:"postBalance"`
	RewardType  *string `json:"rewardType"`
}

// Transaction is one entry of a block's transactions.
type Transaction struct {
	Transaction struct {
		Message struct {
			// AccountKeys stay raw: they are strings in the json encoding
			// and {pubkey, ...} objects in jsonParsed, and only the keys of
			// transactions with token balances are ever looked at.
			AccountKeys []json.RawMessage `json:"accountKeys"`
		} `json:"message"`
	} `json:"transaction"`
	Meta *Meta `json:"meta"`
}

// Meta is a transaction's status metadata.
type Meta struct {
	Err             json.RawMessage `json:"err"`
	LoadedAddresses *struct {
		Writable []string `json:"writable"`
		Readonly []string `json:"readonly"`
	} `json:"loadedAddresses"`
	PreBalances       []uint64       `json:"preBalances"` // lamports, by account index
	PostBalances      []uint64       `json:"postBalances"`
	PreTokenBalances  []TokenBalance `json:"preTokenBalances"`
	PostTokenBalances []TokenBalance `json:"postTokenBalances"`
}

// TokenBalance is one entry of pre- or postTokenBalances. Owner and
// ProgramID are absent in responses of nodes older than 2022 and 2023.
type TokenBalance struct {
	AccountIndex  int    `json:"accountIndex"`
	Mint          string `json:"mint"`
	Owner         string `json:"owner"`
	ProgramID     string `json:"programId"`
	UITokenAmount struct {
		Amount   string `json:"amount"`
		Decimals int    `json:"decimals"`
	} `json:"uiTokenAmount"`
}

// DecodeBlock decodes a getBlock result. It returns an error for JSON null
// (a slot the node does not have) so that a missing block is never taken
// for an empty one.
func DecodeBlock(raw []byte) (*Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ErrNoBlock
	}
	b := new(Block)
	if err := json.Unmarshal(raw, b); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	return b, nil
}

// ErrNoBlock is returned for a null getBlock result.
var ErrNoBlock = errors.New("the node returned no block for this slot")

// Time returns the block's time, or the zero time when the node did not
// record one (very old slots).
func (b *Block) Time() time.Time {
	if b.BlockTime == nil {
		return time.Time{}
	}
	return time.Unix(*b.BlockTime, 0).UTC()
}

// Extractor turns blocks into token balance changes. It is used on one
// chain's blocks in slot order and remembers the owner of every token
// account it has seen, because nodes before 2022 left the owner out: a
// change without one keeps the owner from the account's earlier entries, or
// none, and never an invented one. It is not safe for concurrent use.
// Source uses a new one per block and leaves carrying owners across blocks
// to the ingester (see chainquery.SolanaBlock).
type Extractor struct {
	owners map[chainquery.PublicKey]chainquery.PublicKey
}

// NewExtractor returns an Extractor that knows no owners yet.
func NewExtractor() *Extractor {
	return &Extractor{owners: make(map[chainquery.PublicKey]chainquery.PublicKey)}
}

// Changes returns the token balance changes of the block at slot, in block
// order. Failed transactions change no balance and are skipped. An account
// in preTokenBalances but not in postTokenBalances was closed and drops to
// 0; one only in post changed from nothing. An entry whose account index or
// amount the node got wrong is an error: storing a guess would be worse.
func (e *Extractor) Changes(b *Block, slot uint64) ([]*chainquery.TokenBalanceChange, error) {
	var out []*chainquery.TokenBalanceChange
	t := b.Time()
	for i := range b.Transactions {
		tx := &b.Transactions[i]
		m := tx.Meta
		if m == nil || (len(m.Err) > 0 && string(m.Err) != "null") {
			continue
		}
		if len(m.PreTokenBalances) == 0 && len(m.PostTokenBalances) == 0 {
			continue
		}
		keys, err := accountKeys(tx)
		if err != nil {
			return nil, fmt.Errorf("slot %d transaction %d: %w", slot, i, err)
		}
		cs, err := e.txChanges(keys, m, slot, i, t)
		if err != nil {
			return nil, fmt.Errorf("slot %d transaction %d: %w", slot, i, err)
		}
		out = append(out, cs...)
	}
	return out, nil
}

// entry is a parsed TokenBalance.
type entry struct {
	account, mint chainquery.PublicKey
	owner         *chainquery.PublicKey
	amount        uint64
	decimals      int
}

func (e *Extractor) txChanges(keys []chainquery.PublicKey, m *Meta, slot uint64, txIndex int, t time.Time) ([]*chainquery.TokenBalanceChange, error) {
	pre := make(map[int]entry, len(m.PreTokenBalances))
	for _, tb := range m.PreTokenBalances {
		en, err := parseEntry(keys, tb)
		if err != nil {
			return nil, fmt.Errorf("preTokenBalances: %w", err)
		}
		pre[tb.AccountIndex] = en
		e.learn(en)
	}
	var out []*chainquery.TokenBalanceChange
	seen := make(map[int]bool, len(m.PostTokenBalances))
	for _, tb := range m.PostTokenBalances {
		en, err := parseEntry(keys, tb)
		if err != nil {
			return nil, fmt.Errorf("postTokenBalances: %w", err)
		}
		seen[tb.AccountIndex] = true
		p, had := pre[tb.AccountIndex]
		if en.owner == nil && had {
			en.owner = p.owner
		}
		e.learn(en)
		if had && p.amount == en.amount && p.mint == en.mint {
			continue
		}
		out = append(out, e.change(en, slot, txIndex, t))
	}
	// Closed accounts, in the order the node listed them.
	for _, tb := range m.PreTokenBalances {
		if seen[tb.AccountIndex] {
			continue
		}
		seen[tb.AccountIndex] = true // an index listed twice closes once
		en := pre[tb.AccountIndex]
		en.amount = 0
		out = append(out, e.change(en, slot, txIndex, t))
	}
	return out, nil
}

func (e *Extractor) learn(en entry) {
	if en.owner != nil {
		e.owners[en.account] = *en.owner
	}
}

func (e *Extractor) change(en entry, slot uint64, txIndex int, t time.Time) *chainquery.TokenBalanceChange {
	c := &chainquery.TokenBalanceChange{Account: en.account, Owner: en.owner, Mint: en.mint,
		Amount: en.amount, Decimals: en.decimals, Slot: slot, TxIndex: txIndex, BlockTime: t}
	if c.Owner == nil {
		if o, ok := e.owners[en.account]; ok {
			c.Owner = &o
		}
	}
	return c
}

func parseEntry(keys []chainquery.PublicKey, tb TokenBalance) (entry, error) {
	var en entry
	if tb.AccountIndex < 0 || tb.AccountIndex >= len(keys) {
		return en, fmt.Errorf("accountIndex %d is outside the %d account keys", tb.AccountIndex, len(keys))
	}
	en.account = keys[tb.AccountIndex]
	var err error
	if en.mint, err = parseKey(tb.Mint); err != nil {
		return en, fmt.Errorf("mint: %w", err)
	}
	if tb.Owner != "" {
		o, err := parseKey(tb.Owner)
		if err != nil {
			return en, fmt.Errorf("owner: %w", err)
		}
		en.owner = &o
	}
	if en.amount, err = strconv.ParseUint(tb.UITokenAmount.Amount, 10, 64); err != nil {
		return en, fmt.Errorf("amount %q is not a u64", tb.UITokenAmount.Amount)
	}
	if d := tb.UITokenAmount.Decimals; d < 0 || d > 255 {
		return en, fmt.Errorf("decimals %d is out of range", d)
	}
	en.decimals = tb.UITokenAmount.Decimals
	return en, nil
}

// accountKeys resolves a transaction's full key list, which accountIndex
// indexes: the static keys, then for version 0 transactions the addresses
// loaded from lookup tables, writable first, then read-only.
func accountKeys(tx *Transaction) ([]chainquery.PublicKey, error) {
	keys := make([]chainquery.PublicKey, keyCount(tx))
	for j := range keys {
		var err error
		if keys[j], err = keyAt(tx, j); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// keyCount returns the length of a transaction's full key list (see
// accountKeys).
func keyCount(tx *Transaction) int {
	n := len(tx.Transaction.Message.AccountKeys)
	if la := tx.Meta.LoadedAddresses; la != nil {
		n += len(la.Writable) + len(la.Readonly)
	}
	return n
}

// keyAt returns key j of a transaction's full key list (see accountKeys),
// decoding that key alone; j must be below keyCount.
func keyAt(tx *Transaction, j int) (chainquery.PublicKey, error) {
	raw := tx.Transaction.Message.AccountKeys
	if j < len(raw) {
		s, err := keyText(raw[j])
		if err != nil {
			return chainquery.PublicKey{}, err
		}
		k, err := parseKey(s)
		if err != nil {
			return k, fmt.Errorf("account key: %w", err)
		}
		return k, nil
	}
	j -= len(raw)
	la := tx.Meta.LoadedAddresses
	if j >= len(la.Writable) {
		j -= len(la.Writable)
		k, err := parseKey(la.Readonly[j])
		if err != nil {
			return k, fmt.Errorf("loaded address: %w", err)
		}
		return k, nil
	}
	k, err := parseKey(la.Writable[j])
	if err != nil {
		return k, fmt.Errorf("loaded address: %w", err)
	}
	return k, nil
}

// keyText reads an account key as either encoding writes it: a string
// (json) or an object with pubkey (jsonParsed).
func keyText(r json.RawMessage) (string, error) {
	if len(r) > 0 && r[0] == '"' {
		var s string
		err := json.Unmarshal(r, &s)
		return s, err
	}
	var o struct {
		Pubkey string `json:"pubkey"`
	}
	if err := json.Unmarshal(r, &o); err != nil {
		return "", fmt.Errorf("account key: %w", err)
	}
	return o.Pubkey, nil
}

func parseKey(s string) (chainquery.PublicKey, error) {
	return chainquery.ParsePublicKey("address", s)
}
