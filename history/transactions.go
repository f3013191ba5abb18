package history

import (
	"encoding/binary"
	"math/big"

	"github.com/chainquery/chainquery"
)

var txMagic = []byte("cqX")

const txVersion = 1

// maxTxs bounds a segment's count (a Polygon block has ~100 transactions).
const maxTxs = 1 << 20

// AppendTransactions appends the segment of txs, the transactions of one
// block in index order, to dst. It fails on transactions out of order or
// with a negative amount or count.
func AppendTransactions(dst []byte, txs []*chainquery.Transaction) ([]byte, error) {
	return (*Dict)(nil).AppendTransactions(dst, txs)
}

// AppendTransactions is the package's AppendTransactions compressed with d (nil: none).
func (d *Dict) AppendTransactions(dst []byte, txs []*chainquery.Transaction) ([]byte, error) {
	sc := getScratch()
	addrs := &sc.addrs
	optAddr := func(col []byte, a *chainquery.Address) []byte {
		if a == nil {
			return append(col, 0)
		}
		return binary.AppendUvarint(col, addrs.id(*a)+1)
	}
	n := len(txs)
	hashes, idx, froms, tos, values := sc.col(0, 32*n), sc.col(1, n), sc.col(2, 2*n), sc.col(3, 2*n), sc.col(4, 2*n)
	limits, prices, used, cumul, nonces := sc.col(5, 4*n), sc.col(6, 16*n), sc.col(7, 4*n), sc.col(8, 4*n), sc.col(9, 3*n)
	types, contracts, statuses, logCounts := sc.col(10, n), sc.col(11, n), sc.col(12, n), sc.col(13, n)
	inputs := sc.col(14, lenBytesSize(txs, func(t *chainquery.Transaction) []byte { return t.Input }))
	prevIdx := -1
	var prevCumul uint64
	for i, t := range txs {
		if t.Index <= prevIdx || t.Type < 0 || t.Type > 255 || t.LogCount < 0 {
			return nil, corrupt("transaction %d: index %d after %d, type %d, log count %d", i, t.Index, prevIdx, t.Type, t.LogCount)
		}
		hashes = append(hashes, t.Hash[:]...)
		idx = binary.AppendUvarint(idx, uint64(t.Index-prevIdx-1))
		prevIdx = t.Index
		froms = binary.AppendUvarint(froms, addrs.id(t.From))
		tos = optAddr(tos, t.To)
		var ok bool
		if values, ok = appendBig(values, t.Value); !ok {
			return nil, corrupt("transaction %d: negative value", i)
		}
		limits = binary.AppendUvarint(limits, t.GasLimit)
		for _, v := range [...]*big.Int{t.GasPrice, t.EffectiveGasPrice, t.MaxFeePerGas, t.MaxPriorityFeePerGas} {
			if prices, ok = appendBig(prices, v); !ok {
				return nil, corrupt("transaction %d: negative price", i)
			}
		}
		used = binary.AppendUvarint(used, t.GasUsed)
		cumul = binary.AppendVarint(cumul, int64(t.CumulativeGasUsed-prevCumul))
		prevCumul = t.CumulativeGasUsed
		nonces = binary.AppendUvarint(nonces, t.Nonce)
		types = binary.AppendUvarint(types, uint64(t.Type))
		contracts = optAddr(contracts, t.ContractAddress)
		if t.Status {
			statuses = append(statuses, 1)
		} else {
			statuses = append(statuses, 0)
		}
		logCounts = binary.AppendUvarint(logCounts, uint64(t.LogCount))
		inputs = appendLenBytes(inputs, t.Input)
	}
	raw := sc.header(txMagic, txVersion)
	raw = binary.AppendUvarint(raw, uint64(len(txs)))
	raw = binary.AppendUvarint(raw, uint64(len(addrs.values)))
	for _, a := range addrs.values {
		raw = append(raw, a[:]...)
	}
	dst = finish(d, dst, raw, hashes, idx, froms, tos, values, limits, prices, used, cumul, nonces, types, contracts, statuses, logCounts, inputs)
	sc.keep(raw, hashes, idx, froms, tos, values, limits, prices, used, cumul, nonces, types, contracts, statuses, logCounts, inputs)
	return dst, nil
}

// DecodeTransactions returns the transactions of the segment src, with
// BlockNumber set to block.
func DecodeTransactions(src []byte, block uint64) ([]*chainquery.Transaction, error) {
	raw, err := decompress(src)
	if err != nil {
		return nil, err
	}
	r := &reader{b: raw}
	if magic := r.bytes(len(txMagic)); r.err != nil || string(magic) != string(txMagic) {
		return nil, corrupt("not a transaction segment")
	}
	if v := r.byte_(); v != txVersion {
		return nil, corrupt("transaction segment version %d, this binary reads %d", v, txVersion)
	}
	n := r.int(maxTxs)
	addrs := make([]chainquery.Address, r.int(len(r.b)/20))
	for i := range addrs {
		copy(addrs[i][:], r.bytes(20))
	}
	if r.err != nil {
		return nil, r.err
	}
	if n > len(r.b)/32 { // every transaction has a 32-byte hash
		return nil, corrupt("%d transactions in %d bytes", n, len(r.b))
	}
	if n > 0 && len(addrs) == 0 {
		return nil, corrupt("%d transactions and no address", n)
	}
	optAddr := func() *chainquery.Address {
		if j := r.int(len(addrs)); j > 0 {
			a := addrs[j-1]
			return &a
		}
		return nil
	}
	txs := make([]*chainquery.Transaction, n)
	rows := make([]chainquery.Transaction, n)
	for i := range txs {
		txs[i] = &rows[i]
		txs[i].BlockNumber = block
	}
	for _, t := range txs {
		copy(t.Hash[:], r.bytes(32))
	}
	i := -1
	for _, t := range txs {
		i += r.int(maxTxs) + 1
		t.Index = i
	}
	for _, t := range txs {
		t.From = addrs[r.int(len(addrs)-1)]
	}
	for _, t := range txs {
		t.To = optAddr()
	}
	for _, t := range txs {
		t.Value = r.big()
	}
	for _, t := range txs {
		t.GasLimit = r.uvarint()
	}
	for _, t := range txs {
		t.GasPrice, t.EffectiveGasPrice, t.MaxFeePerGas, t.MaxPriorityFeePerGas = r.big(), r.big(), r.big(), r.big()
	}
	for _, t := range txs {
		t.GasUsed = r.uvarint()
	}
	var cumul uint64
	for _, t := range txs {
		d := r.varint()
		cumul += uint64(d)
		t.CumulativeGasUsed = cumul
	}
	for _, t := range txs {
		t.Nonce = r.uvarint()
	}
	for _, t := range txs {
		t.Type = r.int(255)
	}
	for _, t := range txs {
		t.ContractAddress = optAddr()
	}
	for _, t := range txs {
		switch r.byte_() {
		case 0:
		case 1:
			t.Status = true
		default:
			r.fail("status byte")
		}
	}
	for _, t := range txs {
		t.LogCount = r.int(maxLogs)
	}
	for _, t := range txs {
		t.Input = r.lenBytes()
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, corrupt("%d bytes after the last column", len(r.b))
	}
	return txs, nil
}
