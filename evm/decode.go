package evm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/chainquery/chainquery"
)

// jsonBlock is the part of an eth_getBlockByNumber/ByHash result the service
// keeps. Fields stay raw so that each is decoded by the rule that fits it;
// everything else a chain adds (Avalanche extDataHash, Arbitrum sendRoot, OP
// and Dencun blob gas, withdrawals, AuRa seals) is ignored by omission.
type jsonBlock struct {
	Number           json.RawMessage `json:"number"`
	Hash             json.RawMessage `json:"hash"`
	ParentHash       json.RawMessage `json:"parentHash"`
	Timestamp        json.RawMessage `json:"timestamp"`
	LogsBloom        json.RawMessage `json:"logsBloom"`
	TransactionsRoot json.RawMessage `json:"transactionsRoot"`
	StateRoot        json.RawMessage `json:"stateRoot"`
	ReceiptsRoot     json.RawMessage `json:"receiptsRoot"`
	Miner            json.RawMessage `json:"miner"`
	Author           json.RawMessage `json:"author"` // old Parity/OpenEthereum and Nethermind AuRa nodes
	ExtraData        json.RawMessage `json:"extraData"`
	Size             json.RawMessage `json:"size"`
	GasLimit         json.RawMessage `json:"gasLimit"`
	GasUsed          json.RawMessage `json:"gasUsed"`
	BaseFeePerGas    json.RawMessage `json:"baseFeePerGas"`
	Transactions     []jsonTx        `json:"transactions"` // decoded in the same pass as the header
}

// jsonTx is one full transaction object of a block.
type jsonTx struct {
	Hash                 json.RawMessage `json:"hash"`
	TransactionIndex     json.RawMessage `json:"transactionIndex"`
	From                 addrField       `json:"from"`
	To                   addrField       `json:"to"`
	Value                quantField      `json:"value"`
	Gas                  quantField      `json:"gas"`
	GasPrice             json.RawMessage `json:"gasPrice"`
	MaxFeePerGas         json.RawMessage `json:"maxFeePerGas"`
	MaxPriorityFeePerGas json.RawMessage `json:"maxPriorityFeePerGas"`
	Nonce                json.RawMessage `json:"nonce"`
	Input                hexField        `json:"input"`
	Data                 hexField        `json:"data"` // the pre-2016 name of input, still sent by some Nethermind nodes
	Type                 json.RawMessage `json:"type"`
}

// DecodeBlock decodes an eth_getBlockByNumber(n, true) result into a
// BlockData holding the header and the transactions; the receipt fields of
// the transactions stay empty until ApplyReceipts.
//
// The header must carry a number, hash, parent hash and timestamp, and the
// transactions must be full objects: a hash-only list (an answer to
// full=false) is an error because the block could not be completed from it.
// Within a transaction only the hash is required; any other field that is
// absent or unreadable is left empty, so that one odd transaction never
// stops a chain. Unknown transaction types keep their number.
func DecodeBlock(chain chainquery.Chain, raw json.RawMessage) (*chainquery.BlockData, error) {
	return decodeBlockWithNotes(chain, raw, nil)
}

// decodeBlockWithNotes is DecodeBlock that also reports the fields it had to
// leave empty.
func decodeBlockWithNotes(chain chainquery.Chain, raw json.RawMessage, notes *decodeNotes) (*chainquery.BlockData, error) {
	if !present(raw) {
		return nil, errors.New("evm: block is null (not known to the node yet?)")
	}
	var jb jsonBlock
	sc := getScratch()
	defer sc.release()
	if !fastBlock(raw, &jb, sc) {
		jb = jsonBlock{}
		if err := json.Unmarshal(raw, &jb); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Value == "string" && strings.HasPrefix(te.Field, "transactions") {
				return nil, errors.New("evm: block: transactions are hashes only: ask with full transactions (true)")
			}
			return nil, fmt.Errorf("evm: block: %w", err)
		}
	}
	b := &chainquery.Block{Chain: chain}
	var err error
	if b.Number, err = requireUint("number", jb.Number); err != nil {
		return nil, fmt.Errorf("evm: block: %w", err)
	}
	fail := func(field string, err error) error {
		return fmt.Errorf("evm: block %d: %s: %w", b.Number, field, err)
	}
	if b.Hash, err = requireHash("hash", jb.Hash); err != nil {
		return nil, fail("hash", err)
	}
	if b.ParentHash, err = requireHash("parentHash", jb.ParentHash); err != nil {
		return nil, fail("parentHash", err)
	}
	ts, err := requireUint("timestamp", jb.Timestamp)
	if err != nil {
		return nil, fail("timestamp", err)
	}
	b.Timestamp = int64(ts)

	// The rest of the header is informational: an unreadable value is noted
	// and left empty rather than blocking the chain.
	sl := blockSlab(&jb)
	r := fieldReader{notes: notes, record: func() string { return fmt.Sprintf("block %d", b.Number) }, slab: sl}
	b.LogsBloom = r.bytes("logsBloom", jb.LogsBloom)
	b.TransactionsRoot = r.hash("transactionsRoot", jb.TransactionsRoot)
	b.StateRoot = r.hash("stateRoot", jb.StateRoot)
	b.ReceiptsRoot = r.hash("receiptsRoot", jb.ReceiptsRoot)
	if present(jb.Miner) {
		b.Miner = r.addressOrZero("miner", jb.Miner)
	} else {
		b.Miner = r.addressOrZero("author", jb.Author)
	}
	if present(jb.ExtraData) {
		b.ExtraData = r.bytes("extraData", jb.ExtraData)
		b.HasExtraData = b.ExtraData != nil
		if b.HasExtraData && len(b.ExtraData) == 0 {
			b.ExtraData = []byte{}
		}
	}
	b.Size = r.uint("size", jb.Size)
	b.GasLimit = r.uint("gasLimit", jb.GasLimit)
	b.GasUsed = r.uint("gasUsed", jb.GasUsed)
	b.BaseFeePerGas = r.big("baseFeePerGas", jb.BaseFeePerGas)

	d := &chainquery.BlockData{Block: b, Transactions: make([]*chainquery.Transaction, 0, len(jb.Transactions))}
	txs := make([]chainquery.Transaction, len(jb.Transactions)) // one allocation for them all: see slab
	for i := range jb.Transactions {
		t := &txs[i]
		if err := decodeTx(b, i, &jb.Transactions[i], notes, sl, t); err != nil {
			return nil, fmt.Errorf("evm: block %d: transaction %d: %w", b.Number, i, err)
		}
		d.Transactions = append(d.Transactions, t)
	}
	b.TransactionCount = len(d.Transactions)
	return d, nil
}

// blockSlab is the slab of a block's header and transactions, sized from
// its answer.
func blockSlab(jb *jsonBlock) *slab {
	n := len(jb.Transactions)
	data := hexBytes(jb.LogsBloom) + hexBytes(jb.ExtraData)
	for i := range jb.Transactions {
		data += hexBytes(jb.Transactions[i].Input.raw) + hexBytes(jb.Transactions[i].Data.raw)
	}
	// Per transaction: to; value, gasPrice and the two fee caps. Plus the
	// header's base fee.
	return newSlab(data, n, 1+4*n, 0)
}

// decodeTx decodes the transaction at position pos of block b into t, with
// its values from sl.
func decodeTx(b *chainquery.Block, pos int, jt *jsonTx, notes *decodeNotes, sl *slab, t *chainquery.Transaction) error {
	hash, err := requireHash("hash", jt.Hash)
	if err != nil {
		return err
	}
	r := fieldReader{notes: notes, record: func() string { return "transaction " + hash.Hex() }, slab: sl}
	*t = chainquery.Transaction{
		BlockNumber:          b.Number,
		Timestamp:            b.Timestamp,
		Hash:                 hash,
		Index:                pos,
		From:                 r.addressOrZeroOf("from", jt.From),
		To:                   r.addressOf("to", jt.To),
		Value:                r.bigOf("value", jt.Value),
		GasLimit:             r.uintOf("gas", jt.Gas),
		GasPrice:             r.big("gasPrice", jt.GasPrice),
		MaxFeePerGas:         r.big("maxFeePerGas", jt.MaxFeePerGas),
		MaxPriorityFeePerGas: r.big("maxPriorityFeePerGas", jt.MaxPriorityFeePerGas),
		Nonce:                r.uint("nonce", jt.Nonce),
		Type:                 int(r.uint("type", jt.Type)),
	}
	if present(jt.TransactionIndex) {
		// The position in the list is the index on every node; the field
		// wins only because it is what receipts and traces refer to.
		t.Index = int(r.uint("transactionIndex", jt.TransactionIndex))
	}
	if t.Value == nil {
		t.Value = new(big.Int)
	}
	if t.GasPrice == nil && t.MaxFeePerGas != nil {
		// Some nodes leave gasPrice out of dynamic-fee transactions; the fee
		// cap is the best upper bound left. ApplyReceipts sets the price paid.
		t.GasPrice = new(big.Int).Set(t.MaxFeePerGas)
	}
	if present(jt.Input.raw) {
		t.Input = r.data("input", jt.Input)
	} else {
		t.Input = r.data("data", jt.Data)
	}
	return nil
}

// hash decodes an optional hash field, noting a malformed one.
func (r fieldReader) hash(field string, raw json.RawMessage) chainquery.Hash {
	h, _, err := fieldHash(raw)
	r.note(field, err)
	if err != nil {
		return chainquery.Hash{}
	}
	return h
}

// requireUint decodes a quantity that a record cannot do without.
func requireUint(field string, raw json.RawMessage) (uint64, error) {
	s, ok, err := jsonBytes(raw)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%s is missing", field)
	}
	return parseUint64(s)
}

// requireHash decodes a hash that identifies a record.
func requireHash(field string, raw json.RawMessage) (chainquery.Hash, error) {
	h, ok, err := fieldHash(raw)
	if err == nil && !ok {
		err = fmt.Errorf("%s is missing", field)
	}
	return h, err
}
