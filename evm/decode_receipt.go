package evm

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/chainquery/chainquery"
)

// jsonReceipt is the part of an eth_getTransactionReceipt result (or of one
// element of eth_getBlockReceipts) the service keeps. L2 extras (l1Fee,
// gasUsedForL1, depositNonce, blobGasUsed, ...) are ignored by omission.
type jsonReceipt struct {
	TransactionHash   json.RawMessage `json:"transactionHash"`
	TransactionIndex  json.RawMessage `json:"transactionIndex"`
	BlockHash         json.RawMessage `json:"blockHash"`
	BlockNumber       json.RawMessage `json:"blockNumber"`
	From              addrField       `json:"from"`
	To                addrField       `json:"to"`
	Type              json.RawMessage `json:"type"`
	Status            json.RawMessage `json:"status"`
	GasUsed           quantField      `json:"gasUsed"`
	CumulativeGasUsed quantField      `json:"cumulativeGasUsed"`
	EffectiveGasPrice json.RawMessage `json:"effectiveGasPrice"`
	ContractAddress   json.RawMessage `json:"contractAddress"`
	Logs              []jsonLog       `json:"logs"`
}

// jsonLog is one log of a receipt.
type jsonLog struct {
	Address  addrField       `json:"address"`
	Topics   []hashField     `json:"topics"`
	Data     hexField        `json:"data"`
	LogIndex json.RawMessage `json:"logIndex"`
}

// receiptFill is one decoded receipt waiting to be applied, so that
// ApplyReceipts changes nothing unless every receipt fits.
type receiptFill struct {
	hash     chainquery.Hash
	index    int // -1 when the receipt does not say
	from, to *chainquery.Address
	typ      int
	status   bool
	gasUsed  uint64
	cumGas   uint64
	price    *big.Int // nil when the node does not report it
	contract *chainquery.Address
	logs     []chainquery.Log // this receipt's part of the receipts' log slab
	hasIndex []bool           // per log: the node gave a logIndex
}

// ApplyReceipts fills the receipt fields of d's transactions (gas_used,
// cumulative_gas_used, effective_gas_price, contract_address, status) and
// sets d.Logs, from an eth_getBlockReceipts result (the elements of its
// array) or from eth_getTransactionReceipt results, in any order. JSON null
// elements (a receipt the node did not have) are skipped.
//
// Receipts are matched to transactions by hash; a receipt that names another
// block, or an index other than its transaction's, is an error (a reorg or
// a lagging replica answered). It is an error too if a transaction has no
// receipt or a receipt has no transaction, except on polygon: a Bor
// state-sync receipt (from and to the zero address) whose transaction is
// missing from the block's list, as older Bor answers, becomes a transaction
// of its own at the next index (see docs/ingestion.md). On error d is left
// unchanged, so the caller may fetch again and retry.
//
// Receipts without status (before Byzantium) are taken as successful;
// FinishStatus corrects that from the traces. Where the receipt has no
// effectiveGasPrice (old nodes) the transaction's gasPrice is used. Every
// transaction gets a non-nil EffectiveGasPrice, which is how CheckComplete
// tells that its receipt was applied.
func ApplyReceipts(d *chainquery.BlockData, receipts []json.RawMessage) error {
	return applyReceiptsWithNotes(d, receipts, nil)
}

// applyReceiptsWithNotes is ApplyReceipts that also reports the fields it
// had to leave empty.
func applyReceiptsWithNotes(d *chainquery.BlockData, receipts []json.RawMessage, notes *decodeNotes) error {
	if d == nil || d.Block == nil {
		return fmt.Errorf("evm: ApplyReceipts: no block")
	}
	sc := getScratch()
	defer sc.release()
	jrs := make([]*jsonReceipt, 0, len(receipts))
	backing := make([]jsonReceipt, len(receipts)) // one allocation for them all
	for i, raw := range receipts {
		if !present(raw) {
			continue
		}
		jr := &backing[i]
		if !fastReceipt(raw, jr, sc) {
			*jr = jsonReceipt{}
			if err := json.Unmarshal(raw, jr); err != nil {
				return fmt.Errorf("evm: block %d: receipt: %w", d.Block.Number, err)
			}
		}
		jrs = append(jrs, jr)
	}
	return applyJSONReceipts(d, jrs, notes)
}

// applyBlockReceipts applies an eth_getBlockReceipts answer, decoded in one
// pass rather than element by element.
func applyBlockReceipts(d *chainquery.BlockData, raw json.RawMessage, notes *decodeNotes) error {
	sc := getScratch()
	defer sc.release()
	jrs, ok := fastReceipts(raw, sc)
	if !ok {
		jrs = nil
		if err := json.Unmarshal(raw, &jrs); err != nil {
			return fmt.Errorf("evm: block %d: receipts: %w", d.Block.Number, err)
		}
	}
	return applyJSONReceipts(d, slices.DeleteFunc(jrs, func(jr *jsonReceipt) bool { return jr == nil }), notes)
}

// applyJSONReceipts is ApplyReceipts on receipts already parsed.
func applyJSONReceipts(d *chainquery.BlockData, receipts []*jsonReceipt, notes *decodeNotes) error {
	if d == nil || d.Block == nil {
		return fmt.Errorf("evm: ApplyReceipts: no block")
	}
	b := d.Block
	sl := newReceiptSlab(receipts)
	fills := make([]receiptFill, len(receipts)) // one allocation for them all
	byHash := make(map[chainquery.Hash]*receiptFill, len(receipts))
	for i, jr := range receipts {
		rf := &fills[i]
		if err := decodeReceipt(b, jr, notes, sl, rf); err != nil {
			return err
		}
		if _, dup := byHash[rf.hash]; dup {
			return fmt.Errorf("evm: block %d: two receipts for transaction %s", b.Number, rf.hash)
		}
		byHash[rf.hash] = rf
	}

	txFills := make([]*receiptFill, len(d.Transactions))
	var missing []string
	for i, t := range d.Transactions {
		rf := byHash[t.Hash]
		if rf == nil {
			missing = append(missing, t.Hash.Hex())
			continue
		}
		if rf.index >= 0 && rf.index != t.Index {
			return fmt.Errorf("evm: block %d: receipt of %s has index %d, transaction has %d", b.Number, t.Hash, rf.index, t.Index)
		}
		txFills[i] = rf
		delete(byHash, t.Hash)
	}
	if len(missing) > 0 {
		return fmt.Errorf("evm: block %d: %d of %d transactions have no receipt: %s", b.Number, len(missing), len(d.Transactions), abbreviate(missing))
	}
	var extra []*receiptFill // receipts without a transaction in the block
	for _, rf := range byHash {
		extra = append(extra, rf)
	}
	slices.SortFunc(extra, func(a, b *receiptFill) int { return a.index - b.index })
	next := len(d.Transactions)
	for _, rf := range extra {
		if !isStateSyncReceipt(b.Chain, rf) || rf.index != next {
			return fmt.Errorf("evm: block %d: receipt of %s (index %d) has no transaction in the block", b.Number, rf.hash, rf.index)
		}
		next++
	}

	// Everything fits: apply.
	txs := slices.Clone(d.Transactions)
	for _, rf := range extra {
		txs = append(txs, stateSyncTx(b, rf))
		txFills = append(txFills, rf)
	}
	logs := make([]*chainquery.Log, 0, len(sl.logs))
	for i, t := range txs {
		rf := txFills[i]
		t.Status = rf.status
		t.GasUsed = rf.gasUsed
		t.CumulativeGasUsed = rf.cumGas
		t.ContractAddress = rf.contract
		switch {
		case rf.price != nil:
			t.EffectiveGasPrice = rf.price
		case t.GasPrice != nil:
			t.EffectiveGasPrice = new(big.Int).Set(t.GasPrice)
		default:
			t.EffectiveGasPrice = new(big.Int)
		}
		t.LogCount = len(rf.logs)
		for j := range rf.logs {
			l := &rf.logs[j]
			l.TransactionIndex = t.Index
			l.TransactionFrom = t.From
			l.TransactionTo = t.To
			if !rf.hasIndex[j] {
				// No logIndex from the node: number the logs through the block.
				l.LogIndex = len(logs)
			}
			logs = append(logs, l)
		}
	}
	d.Transactions = txs
	d.Logs = logs
	b.TransactionCount = len(txs)
	return nil
}

// receiptSlab is the slab of a block's receipts: their values, and their
// logs and topics, each log's topics a capped part of topics.
type receiptSlab struct {
	*slab
	logs     []chainquery.Log // all of them, cut into each receipt's logs by decodeReceipt
	hasIndex []bool
	used     int               // logs handed out
	topics   []chainquery.Hash // the room left
}

func newReceiptSlab(receipts []*jsonReceipt) *receiptSlab {
	var logs, topics, data int
	for _, jr := range receipts {
		logs += len(jr.Logs)
		for j := range jr.Logs {
			jl := &jr.Logs[j]
			topics += len(jl.Topics)
			data += hexBytes(jl.Data.raw)
		}
	}
	// Per receipt: from, to and contractAddress; effectiveGasPrice.
	return &receiptSlab{
		slab:     newSlab(data, 3*len(receipts), len(receipts), 0),
		logs:     make([]chainquery.Log, logs),
		hasIndex: make([]bool, logs),
		topics:   make([]chainquery.Hash, topics),
	}
}

// takeLogs returns the next n logs of the slab and their hasIndex flags.
func (sl *receiptSlab) takeLogs(n int) ([]chainquery.Log, []bool) {
	if n > len(sl.logs)-sl.used {
		return make([]chainquery.Log, n), make([]bool, n) // more logs than counted: cannot happen
	}
	i, j := sl.used, sl.used+n
	sl.used = j
	return sl.logs[i:j:j], sl.hasIndex[i:j:j]
}

// takeTopics returns n hashes of the slab for a log's topics: a non-nil
// slice, as make gives.
func (sl *receiptSlab) takeTopics(n int) []chainquery.Hash {
	if n == 0 || n > len(sl.topics) {
		return make([]chainquery.Hash, n)
	}
	out := sl.topics[:n:n]
	sl.topics = sl.topics[n:]
	return out
}

// decodeReceipt decodes one receipt of block b into rf, with its values
// and logs from sl, and checks that it belongs to b.
func decodeReceipt(b *chainquery.Block, jr *jsonReceipt, notes *decodeNotes, sl *receiptSlab, rf *receiptFill) error {
	hash, err := requireHash("transactionHash", jr.TransactionHash)
	if err != nil {
		return fmt.Errorf("evm: block %d: receipt: %w", b.Number, err)
	}
	if bh, ok, err := fieldHash(jr.BlockHash); err == nil && ok && bh != b.Hash {
		return fmt.Errorf("evm: block %d: receipt of %s is of block %s, not %s", b.Number, hash, bh, b.Hash)
	}
	if n, err := fieldUint(jr.BlockNumber); err == nil && present(jr.BlockNumber) && n != b.Number {
		return fmt.Errorf("evm: block %d: receipt of %s is of block %d", b.Number, hash, n)
	}
	r := fieldReader{notes: notes, record: func() string { return "receipt " + hash.Hex() }, slab: sl.slab}
	*rf = receiptFill{
		hash:     hash,
		index:    -1,
		from:     r.addressOf("from", jr.From),
		to:       r.addressOf("to", jr.To),
		typ:      int(r.uint("type", jr.Type)),
		status:   true, // before Byzantium (no status field): see FinishStatus
		gasUsed:  r.uintOf("gasUsed", jr.GasUsed),
		cumGas:   r.uintOf("cumulativeGasUsed", jr.CumulativeGasUsed),
		price:    r.big("effectiveGasPrice", jr.EffectiveGasPrice),
		contract: r.address("contractAddress", jr.ContractAddress),
	}
	if present(jr.TransactionIndex) {
		rf.index = int(r.uint("transactionIndex", jr.TransactionIndex))
	}
	if present(jr.Status) {
		rf.status = r.uint("status", jr.Status) == 1
	}
	if len(jr.Logs) > 0 {
		rf.logs, rf.hasIndex = sl.takeLogs(len(jr.Logs))
	}
	for j := range jr.Logs {
		hasIndex, err := decodeLog(b, hash, &jr.Logs[j], sl, &rf.logs[j])
		if err != nil {
			return fmt.Errorf("evm: block %d: receipt of %s: log %d: %w", b.Number, hash, j, err)
		}
		rf.hasIndex[j] = hasIndex
	}
	return nil
}

// decodeLog decodes one log strictly into l, with its data and topics
// from sl: its address and topics are what users filter on, so a
// malformed one is an error, not an empty field.
func decodeLog(b *chainquery.Block, tx chainquery.Hash, jl *jsonLog, sl *receiptSlab, l *chainquery.Log) (bool, error) {
	addr, ok, err := jl.Address.value()
	if err != nil {
		return false, fmt.Errorf("address: %w", err)
	}
	if !ok {
		return false, fmt.Errorf("address is missing")
	}
	if len(jl.Topics) > 4 {
		return false, fmt.Errorf("%d topics (at most 4)", len(jl.Topics))
	}
	*l = chainquery.Log{
		BlockNumber:     b.Number,
		Timestamp:       b.Timestamp,
		TransactionHash: tx,
		Address:         addr,
		Topics:          sl.takeTopics(len(jl.Topics)),
	}
	for i, rt := range jl.Topics {
		if l.Topics[i], err = requireHashOf("topic", rt); err != nil {
			return false, fmt.Errorf("topic %d: %w", i, err)
		}
	}
	if l.Data, err = jl.Data.bytesIn(sl.slab); err != nil {
		return false, fmt.Errorf("data: %w", err)
	}
	if l.Data == nil {
		l.Data = []byte{}
	}
	hasIndex := present(jl.LogIndex)
	if hasIndex {
		n, err := fieldUint(jl.LogIndex)
		if err != nil {
			return false, fmt.Errorf("logIndex: %w", err)
		}
		l.LogIndex = int(n)
	}
	return hasIndex, nil
}

// isStateSyncReceipt reports whether a receipt is a Bor state-sync receipt:
// on polygon, from the zero address to the zero address. Bor names these
// transactions keccak("matic-bor-receipt-" + number + hash) and gives them no
// signature, gas or input; only the system can send from address zero.
func isStateSyncReceipt(chain chainquery.Chain, rf *receiptFill) bool {
	return chain == chainquery.Polygon && rf.from != nil && *rf.from == (chainquery.Address{}) &&
		(rf.to == nil || *rf.to == (chainquery.Address{}))
}

// isStateSyncTx reports whether t is a Bor state-sync transaction, whether
// the node listed it in the block or ApplyReceipts made it from its receipt:
// from and to the zero address with no gas, or the type 0x7f that Bor gives
// state-sync transactions since they became part of the block body.
func isStateSyncTx(chain chainquery.Chain, t *chainquery.Transaction) bool {
	if chain != chainquery.Polygon {
		return false
	}
	if t.Type == 0x7f {
		return true
	}
	return t.From == (chainquery.Address{}) && t.To != nil && *t.To == (chainquery.Address{}) && t.GasLimit == 0
}

// stateSyncTx makes the transaction of a state-sync receipt whose block did
// not list it. Its fields are what Bor itself answers for such a transaction
// to eth_getTransactionByHash: zero sender and recipient, no value, gas,
// price, nonce or input, type 0.
func stateSyncTx(b *chainquery.Block, rf *receiptFill) *chainquery.Transaction {
	zero := chainquery.Address{}
	return &chainquery.Transaction{
		BlockNumber: b.Number,
		Timestamp:   b.Timestamp,
		Hash:        rf.hash,
		Index:       rf.index,
		To:          &zero,
		Value:       new(big.Int),
		GasPrice:    new(big.Int),
		Input:       []byte{},
		Type:        rf.typ,
	}
}

// abbreviate lists at most five items of a long list for an error message.
func abbreviate(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}
