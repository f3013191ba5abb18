package history

import (
	"encoding/binary"

	"github.com/chainquery/chainquery"
)

var logMagic = []byte("cqL")

const logVersion = 1

// maxLogs bounds a segment's count (a Polygon block has ~400 logs).
const maxLogs = 1 << 22

// AppendLogs appends the segment of logs, the logs of one block in log
// index order, to dst. It fails on logs out of order or with more than
// four topics.
func AppendLogs(dst []byte, logs []*chainquery.Log) ([]byte, error) {
	return (*Dict)(nil).AppendLogs(dst, logs)
}

// AppendLogs is the package's AppendLogs compressed with d (nil: none).
func (d *Dict) AppendLogs(dst []byte, logs []*chainquery.Log) ([]byte, error) {
	sc := getScratch()
	addrs, topics := &sc.addrs, &sc.hashes
	txs, idx, addrCol, topicCol := sc.col(0, len(logs)), sc.col(1, len(logs)), sc.col(2, 2*len(logs)), sc.col(3, 4*len(logs))
	data := sc.col(4, lenBytesSize(logs, func(l *chainquery.Log) []byte { return l.Data }))
	prevTx, prevIdx := 0, -1
	for i, l := range logs {
		if l.TransactionIndex < prevTx || l.LogIndex <= prevIdx || len(l.Topics) > 4 {
			return nil, corrupt("log %d: transaction %d after %d, log index %d after %d, or %d topics", i, l.TransactionIndex, prevTx, l.LogIndex, prevIdx, len(l.Topics))
		}
		txs = binary.AppendUvarint(txs, uint64(l.TransactionIndex-prevTx))
		idx = binary.AppendUvarint(idx, uint64(l.LogIndex-prevIdx-1))
		prevTx, prevIdx = l.TransactionIndex, l.LogIndex
		addrCol = binary.AppendUvarint(addrCol, addrs.id(l.Address))
		topicCol = append(topicCol, byte(len(l.Topics)))
		for _, t := range l.Topics {
			topicCol = binary.AppendUvarint(topicCol, topics.id(t))
		}
		data = appendLenBytes(data, l.Data)
	}
	raw := sc.header(logMagic, logVersion)
	raw = binary.AppendUvarint(raw, uint64(len(logs)))
	raw = binary.AppendUvarint(raw, uint64(len(addrs.values)))
	for _, a := range addrs.values {
		raw = append(raw, a[:]...)
	}
	raw = binary.AppendUvarint(raw, uint64(len(topics.values)))
	for _, t := range topics.values {
		raw = append(raw, t[:]...)
	}
	dst = finish(d, dst, raw, txs, idx, addrCol, topicCol, data)
	sc.keep(raw, txs, idx, addrCol, topicCol, data)
	return dst, nil
}

// DecodeLogs returns the logs of the segment src, with BlockNumber set to
// block and the log's own fields filled.
func DecodeLogs(src []byte, block uint64) ([]*chainquery.Log, error) {
	raw, err := decompress(src)
	if err != nil {
		return nil, err
	}
	r := &reader{b: raw}
	if magic := r.bytes(len(logMagic)); r.err != nil || string(magic) != string(logMagic) {
		return nil, corrupt("not a log segment")
	}
	if v := r.byte_(); v != logVersion {
		return nil, corrupt("log segment version %d, this binary reads %d", v, logVersion)
	}
	n := r.int(maxLogs)
	addrs := make([]chainquery.Address, r.int(len(r.b)/20))
	for i := range addrs {
		copy(addrs[i][:], r.bytes(20))
	}
	topics := make([]chainquery.Hash, r.int(len(r.b)/32))
	for i := range topics {
		copy(topics[i][:], r.bytes(32))
	}
	if r.err != nil {
		return nil, r.err
	}
	if n > len(r.b) {
		return nil, corrupt("%d logs in %d bytes", n, len(r.b))
	}
	if n > 0 && len(addrs) == 0 {
		return nil, corrupt("%d logs and no address", n)
	}
	logs := make([]*chainquery.Log, n)
	rows := make([]chainquery.Log, n)
	for i := range logs {
		logs[i] = &rows[i]
		logs[i].BlockNumber = block
	}
	tx := 0
	for _, l := range logs {
		tx += r.int(maxLogs)
		l.TransactionIndex = tx
	}
	li := -1
	for _, l := range logs {
		li += r.int(maxLogs) + 1
		l.LogIndex = li
	}
	for _, l := range logs {
		l.Address = addrs[r.int(len(addrs)-1)]
	}
	for _, l := range logs {
		k := r.int(4)
		if k > 0 && len(topics) == 0 {
			r.fail("a topic and no topic dictionary")
		}
		if r.err != nil {
			break
		}
		l.Topics = make([]chainquery.Hash, k)
		for j := range l.Topics {
			l.Topics[j] = topics[r.int(len(topics)-1)]
		}
	}
	for _, l := range logs {
		l.Data = r.lenBytes()
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, corrupt("%d bytes after the last column", len(r.b))
	}
	return logs, nil
}

// MatchLogs returns the positions, in the segment src, of the logs whose
// address and topics match says to keep, and the segment's log count. It
// reads the address and topic columns only, into no Log values: what a
// filter over many blocks needs to count its matches, where DecodeLogs
// would build every log of each block. Callers decode the blocks whose
// matches they return. topics is reused between calls: match must not
// keep it.
func MatchLogs(src []byte, match func(address chainquery.Address, topics []chainquery.Hash) bool) (positions []int, n int, err error) {
	raw, err := decompress(src)
	if err != nil {
		return nil, 0, err
	}
	r := &reader{b: raw}
	if magic := r.bytes(len(logMagic)); r.err != nil || string(magic) != string(logMagic) {
		return nil, 0, corrupt("not a log segment")
	}
	if v := r.byte_(); v != logVersion {
		return nil, 0, corrupt("log segment version %d, this binary reads %d", v, logVersion)
	}
	n = r.int(maxLogs)
	addrs := r.bytes(20 * r.int(len(r.b)/20))
	dict := r.bytes(32 * r.int(len(r.b)/32))
	if r.err != nil {
		return nil, 0, r.err
	}
	if n > len(r.b) {
		return nil, 0, corrupt("%d logs in %d bytes", n, len(r.b))
	}
	if n > 0 && len(addrs) == 0 {
		return nil, 0, corrupt("%d logs and no address", n)
	}
	for range 2 * n { // the transaction index and log index columns
		r.uvarint()
	}
	addrCol := make([]int, n)
	for i := range addrCol {
		addrCol[i] = r.int(len(addrs)/20 - 1)
	}
	var topics [4]chainquery.Hash
	for i := 0; i < n && r.err == nil; i++ {
		k := r.int(4)
		if k > 0 && len(dict) == 0 {
			r.fail("a topic and no topic dictionary")
			break
		}
		for j := range k {
			t := r.int(len(dict)/32 - 1)
			copy(topics[j][:], dict[32*t:])
		}
		var a chainquery.Address
		copy(a[:], addrs[20*addrCol[i]:])
		if r.err == nil && match(a, topics[:k]) {
			positions = append(positions, i)
		}
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	return positions, n, nil
}
