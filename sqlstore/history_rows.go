package sqlstore

import (
	"context"
	"fmt"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// The blocks of a range as a freeze reads them from rows, and as a thaw
// or a read decodes them from history: each block's transactions, logs and
// traces in API order, with the block's number (and, from rows, nothing
// else of its header: the header row stays where it is).

// readTip returns the blocks stored as rows from lo to hi, in number order.
func (s *SQLStore) readTip(ctx context.Context, c StoreConn, chain, lo, hi int64) ([]*chainquery.BlockData, error) {
	blocks, at, err := s.blocksIn(ctx, c, chain, lo, hi)
	if err != nil {
		return nil, err
	}
	args := []any{chain, lo, hi}
	var t chainquery.Transaction
	txs := s.txScan(new(scan).counter(&t.BlockNumber), &t)
	err = c.Query(ctx, s.SQL.TipTransactions, args, txs.dest, txs.each(func() error {
		d, err := at(t.BlockNumber)
		row := t
		d.Transactions = append(d.Transactions, &row)
		return err
	}))
	if err != nil {
		return nil, err
	}
	var l chainquery.Log
	logs := logScan(new(scan).counter(&l.BlockNumber).to(&l.TransactionIndex), &l)
	err = c.Query(ctx, s.SQL.TipLogs, args, logs.dest, logs.each(func() error {
		d, err := at(l.BlockNumber)
		row := l
		d.Logs = append(d.Logs, &row)
		return err
	}))
	if err != nil {
		return nil, err
	}
	var tr chainquery.Trace
	traces := s.traceRowScan(&tr)
	err = c.Query(ctx, s.SQL.TipTraces, args, traces.dest, traces.each(func() error {
		d, err := at(tr.BlockNumber)
		row := tr
		d.Traces = append(d.Traces, &row)
		return err
	}))
	return blocks, err
}

// readHistory returns the blocks kept as history from lo to hi, in number
// order.
func (s *SQLStore) readHistory(ctx context.Context, c StoreConn, chain, lo, hi int64) ([]*chainquery.BlockData, error) {
	blocks, at, err := s.blocksIn(ctx, c, chain, lo, hi)
	if err != nil {
		return nil, err
	}
	var n int64
	var kind int
	var data []byte
	err = c.Query(ctx, s.SQL.HistorySegments, []any{chain, lo, hi}, []any{&n, &kind, &data}, func() error {
		d, err := at(uint64(n))
		if err != nil {
			return err
		}
		switch kind {
		case segmentTransactions:
			d.Transactions, err = history.DecodeTransactions(data, uint64(n))
		case segmentLogs:
			d.Logs, err = history.DecodeLogs(data, uint64(n))
		case segmentTraces:
			d.Traces, err = history.DecodeTraces(data, uint64(n))
		default:
			err = fmt.Errorf("block %d: history segment of unknown kind %d", n, kind)
		}
		return err
	})
	return blocks, err
}

// blocksIn returns the blocks stored from lo to hi, each with only its
// number, and the function that finds one of them by number.
func (s *SQLStore) blocksIn(ctx context.Context, c StoreConn, chain, lo, hi int64) ([]*chainquery.BlockData, func(uint64) (*chainquery.BlockData, error), error) {
	var blocks []*chainquery.BlockData
	index := map[uint64]*chainquery.BlockData{}
	var n int64
	var traces int
	err := c.Query(ctx, s.SQL.BlockTraceCounts, []any{chain, lo, hi}, []any{&n, &traces}, func() error {
		d := &chainquery.BlockData{Block: &chainquery.Block{Number: uint64(n), TraceCount: traces}}
		blocks = append(blocks, d)
		index[uint64(n)] = d
		return nil
	})
	at := func(n uint64) (*chainquery.BlockData, error) {
		if d := index[n]; d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("a row of block %d, which has no header", n)
	}
	return blocks, at, err
}

// txScan adds to sc the columns of a transaction as BlockTransactions
// selects them, scanned into t.
func (s *SQLStore) txScan(sc *scan, t *chainquery.Transaction) *scan {
	return sc.to(&t.Index).fixed(t.Hash[:]).fixed(t.From[:]).address(&t.To).to(s.ScanAmount(&t.Value)).
		counter(&t.GasLimit).to(s.ScanAmount(&t.GasPrice), s.ScanAmount(&t.EffectiveGasPrice),
		s.ScanAmount(&t.MaxFeePerGas), s.ScanAmount(&t.MaxPriorityFeePerGas)).
		counter(&t.GasUsed).counter(&t.CumulativeGasUsed).counter(&t.Nonce).bytes(&t.Input).
		to(&t.Type).address(&t.ContractAddress).to(&t.Status, &t.LogCount)
}

// logScan adds to sc the columns log_index, address, topic0 to topic3 and
// data, scanned into l.
func logScan(sc *scan, l *chainquery.Log) *scan {
	var topics [4][]byte
	sc.to(&l.LogIndex).fixed(l.Address[:]).to(&topics[0], &topics[1], &topics[2], &topics[3]).bytes(&l.Data)
	return sc.then(func() error {
		l.Topics = nil // a new slice for each row
		for _, t := range topics {
			if t == nil {
				break
			}
			var h chainquery.Hash
			if err := fixedBytes(h[:], t); err != nil {
				return err
			}
			l.Topics = append(l.Topics, h)
		}
		return nil
	})
}

// traceRowScan returns the scan of a trace's own columns into t:
// block_number, tx_index, trace_address, type, call_type, from_addr,
// to_addr, gas, gas_used, value, subtraces, input, output, error.
func (s *SQLStore) traceRowScan(t *chainquery.Trace) *scan {
	var addr string
	var typ, callType int
	var errText *string
	sc := &scan{}
	sc.counter(&t.BlockNumber).to(&t.TransactionIndex, &addr, &typ, &callType).fixed(t.From[:]).address(&t.To).
		counter(&t.Gas).counter(&t.GasUsed).to(s.ScanAmount(&t.Value), &t.Subtraces).bytes(&t.Input).bytes(&t.Output).
		to(&errText)
	return sc.then(func() error { return traceCodes(t, addr, typ, callType, errText) })
}

// traceCodes sets the fields of t that rows keep as text and codes.
func traceCodes(t *chainquery.Trace, addr string, typ, callType int, errText *string) error {
	var err error
	if t.TraceAddress, err = chainquery.ParseTraceAddress(addr); err != nil {
		return err
	}
	if typ < 0 || typ >= len(traceTypeCodes) || callType < 0 || callType >= len(callTypeCodes) {
		return fmt.Errorf("unknown trace type code %d or call type code %d", typ, callType)
	}
	t.Type, t.CallType, t.Error = traceTypeCodes[typ], callTypeCodes[callType], ""
	if errText != nil {
		t.Error = *errText
	}
	return nil
}
