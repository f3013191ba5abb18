package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/chainquery/chainquery"
)

// errFirstRow ends a query after its first row.
var errFirstRow = errors.New("first row read")

// queryRow runs a statement of at most one row and scans it into dest,
// reporting whether there was one.
func queryRow(ctx context.Context, c Conn, query string, args []any, dest ...any) (bool, error) {
	found := false
	err := c.Query(ctx, query, args, dest, func() error { found = true; return errFirstRow })
	if errors.Is(err, errFirstRow) {
		err = nil
	}
	return found, err
}

// oneRow is a statement of a batch (queryBatch) whose one row, if any, is
// scanned into dest: queryRow's.
func oneRow(query string, args []any, dest ...any) Query {
	return Query{SQL: query, Args: args, Dest: dest, Row: func() error { return nil }}
}

// queryRows runs query and returns, for each row that sc scans into *row, a
// copy of *row; never nil.
func queryRows[T any](ctx context.Context, c Conn, query string, args []any, sc *scan, row *T) ([]*T, error) {
	out := []*T{}
	err := c.Query(ctx, query, args, sc.dest, sc.each(func() error {
		r := *row
		out = append(out, &r)
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scan holds the destinations of a row and the steps that turn what was
// scanned into the domain's values, where drivers differ or cannot scan
// directly: fixed-size arrays, uint64 counters stored bit for bit in int64,
// nullable addresses, empty blobs that come back as NULL.
type scan struct {
	dest []any
	post []func() error
}

// to scans columns straight into p.
func (s *scan) to(p ...any) *scan {
	s.dest = append(s.dest, p...)
	return s
}

// then adds a step run after each row.
func (s *scan) then(f func() error) *scan {
	s.post = append(s.post, f)
	return s
}

// fixed scans a hash, address or key into dst, which it must fill exactly.
func (s *scan) fixed(dst []byte) *scan {
	var b []byte
	return s.to(&b).then(func() error { return fixedBytes(dst, b) })
}

// counter scans a uint64 stored bit for bit as a signed 64-bit integer
// (block numbers, gas, nonces, sizes, slots).
func (s *scan) counter(p *uint64) *scan {
	var v int64
	return s.to(&v).then(func() error { *p = uint64(v); return nil })
}

// address scans a nullable address.
func (s *scan) address(p **chainquery.Address) *scan {
	var b []byte
	return s.to(&b).then(func() error {
		*p = nil
		if b == nil {
			return nil
		}
		*p = new(chainquery.Address)
		return fixedBytes((*p)[:], b)
	})
}

// bytes scans a blob that is never NULL: drivers may give an empty one as
// nil, and the API must still write "0x".
func (s *scan) bytes(p *[]byte) *scan {
	return s.to(p).then(func() error {
		if *p == nil {
			*p = []byte{}
		}
		return nil
	})
}

// done runs the steps of the row just scanned.
func (s *scan) done() error {
	for _, f := range s.post {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// each returns the row function of a Query that scans into s: it finishes
// each row and calls keep.
func (s *scan) each(keep func() error) func() error {
	return func() error {
		if err := s.done(); err != nil {
			return err
		}
		return keep()
	}
}

// fixedBytes copies a stored value of fixed size into dst.
func fixedBytes(dst, b []byte) error {
	if len(b) != len(dst) {
		return fmt.Errorf("stored value has %d bytes, want %d", len(b), len(dst))
	}
	copy(dst, b)
	return nil
}

// txScan adds to sc the columns of a transaction as BlockTransactions
// selects them, scanned into t.
func (s *Store) txScan(sc *scan, t *chainquery.Transaction) *scan {
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
func (s *Store) traceRowScan(t *chainquery.Trace) *scan {
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

// traceScan returns the scan of a row of TracePage into t: t.block_number,
// the block's timestamp and version, the transaction's hash, t.tx_index,
// t.trace_address, the transaction's from_addr, to_addr and status, t.type,
// t.call_type, t.from_addr, t.to_addr, t.gas, t.gas_used, t.value,
// t.subtraces, t.input, t.output, t.error.
func (s *Store) traceScan(t *chainquery.Trace) *scan {
	var addr string
	var typ, callType int
	var errText *string
	sc := &scan{}
	sc.counter(&t.BlockNumber).to(&t.Timestamp, &t.Version).fixed(t.TransactionHash[:]).to(&t.TransactionIndex, &addr).
		fixed(t.TransactionFrom[:]).address(&t.TransactionTo).to(&t.TransactionStatus, &typ, &callType).
		fixed(t.From[:]).address(&t.To).counter(&t.Gas).counter(&t.GasUsed).to(s.ScanAmount(&t.Value), &t.Subtraces).
		bytes(&t.Input).bytes(&t.Output).to(&errText)
	return sc.then(func() error { return traceCodes(t, addr, typ, callType, errText) })
}
