package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"slices"

	"github.com/chainquery/chainquery"
)

// WriteBlocks stores blocks with all their rows in one transaction,
// replacing whatever is stored at their heights.
func (db *DB) WriteBlocks(ctx context.Context, chain chainquery.Chain, blocks []*chainquery.BlockData) error {
	return db.writeBlocks(ctx, chain, nil, blocks)
}

// ReplaceBlocks removes every stored block of chain at or above from and
// writes blocks in their place, in one transaction.
func (db *DB) ReplaceBlocks(ctx context.Context, chain chainquery.Chain, from uint64, blocks []*chainquery.BlockData) error {
	return db.writeBlocks(ctx, chain, &from, blocks)
}

func (db *DB) writeBlocks(ctx context.Context, chain chainquery.Chain, rewindFrom *uint64, blocks []*chainquery.BlockData) error {
	id, err := chainID(chain)
	if err != nil {
		return err
	}
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback()

	if rewindFrom != nil {
		if err := rewind(ctx, tx, id, *rewindFrom); err != nil {
			return wrap(err)
		}
	}
	w, err := newBlockWriter(ctx, db, tx)
	if err != nil {
		return wrap(err)
	}
	defer w.close()
	top, err := db.txStmt(ctx, tx, qTopHeight)
	if err != nil {
		return wrap(err)
	}
	if err := top.QueryRowContext(ctx, id).Scan(&w.top); err != nil {
		return wrap(err)
	}
	for _, b := range blocks {
		if err := w.write(ctx, id, b); err != nil {
			return wrap(fmt.Errorf("block %d: %w", b.Block.Number, err))
		}
	}
	if err := w.flush(ctx); err != nil {
		return wrap(err)
	}
	return wrap(tx.Commit())
}

// rewind keeps the versions of the blocks at or above from, then removes them
// with all their rows.
func rewind(ctx context.Context, tx *sql.Tx, chain int64, from uint64) error {
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO orphaned_blocks (chain, number, version)
		SELECT chain, number, version FROM blocks WHERE chain = ? AND number >= ?`, chain, from); err != nil {
		return err
	}
	for _, table := range []string{"traces", "logs", "transactions"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE chain = ? AND block_number >= ?`, chain, from); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM blocks WHERE chain = ? AND number >= ?`, chain, from)
	return err
}

// blockWriter holds the statements of one write transaction, prepared once
// for the whole batch.
type blockWriter struct {
	top                    sql.NullInt64 // highest height stored or orphaned when the batch began
	version, orphan        *sql.Stmt
	delete                 []*sql.Stmt
	all                    []*sql.Stmt
	blocks, txs, logs, trs *bulkInsert
}

func newBlockWriter(ctx context.Context, db *DB, tx *sql.Tx) (*blockWriter, error) {
	w := &blockWriter{}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		if s, err = db.txStmt(ctx, tx, q); err == nil {
			w.all = append(w.all, s)
		}
		return s
	}
	w.version = prep(qBlockVersion)
	w.orphan = prep(qDeleteOrphan)
	for _, q := range qDeleteHeight {
		w.delete = append(w.delete, prep(q))
	}
	w.blocks = newBulkInsert(db, tx, blocksTable)
	w.txs = newBulkInsert(db, tx, transactionsTable)
	w.logs = newBulkInsert(db, tx, logsTable)
	w.trs = newBulkInsert(db, tx, tracesTable)
	if err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// flush inserts the buffered rows; call it before the transaction commits.
func (w *blockWriter) flush(ctx context.Context) error {
	for _, b := range []*bulkInsert{w.blocks, w.txs, w.logs, w.trs} {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (w *blockWriter) close() {
	for _, s := range w.all {
		s.Close()
	}
}

func (w *blockWriter) write(ctx context.Context, chain int64, d *chainquery.BlockData) error {
	b := d.Block
	n := int64(b.Number)

	// A height written before (or orphaned by a rewind) gets the next
	// version. Heights above everything stored (the common case of an
	// ingester moving forward) need no lookup.
	var prev sql.NullInt64
	if !w.top.Valid || n <= w.top.Int64 {
		if err := w.version.QueryRowContext(ctx, chain, n).Scan(&prev); err != nil {
			return err
		}
	}
	version := 0
	if prev.Valid {
		version = int(prev.Int64) + 1
		for _, s := range w.delete {
			if _, err := s.ExecContext(ctx, chain, n); err != nil {
				return err
			}
		}
		if _, err := w.orphan.ExecContext(ctx, chain, n); err != nil {
			return err
		}
	}
	b.Version = version

	logCounts := make(map[int]int, len(d.Transactions))
	for _, l := range d.Logs {
		logCounts[l.TransactionIndex]++
	}
	var bloom, extra any
	if len(b.LogsBloom) > 0 {
		bloom = b.LogsBloom
	}
	if b.HasExtraData {
		extra = blobArg(b.ExtraData)
	}
	if err := w.blocks.add(ctx, chain, n, b.Hash[:], b.ParentHash[:], b.Timestamp, version, bloom,
		b.TransactionsRoot[:], b.StateRoot[:], b.ReceiptsRoot[:], b.Miner[:], extra, gasArg(b.Size),
		gasArg(b.GasLimit), gasArg(b.GasUsed), b.TransactionCount, bigArg(b.BaseFeePerGas), len(d.Traces)); err != nil {
		return err
	}
	for _, t := range d.Transactions {
		if err := w.txs.add(ctx, chain, n, t.Index, t.Hash[:], t.From[:], addrPtrArg(t.To),
			bigOrZero(t.Value), gasArg(t.GasLimit), bigArg(t.GasPrice), bigArg(t.EffectiveGasPrice),
			bigArg(t.MaxFeePerGas), bigArg(t.MaxPriorityFeePerGas), gasArg(t.GasUsed), gasArg(t.CumulativeGasUsed),
			gasArg(t.Nonce), blobArg(t.Input), t.Type, addrPtrArg(t.ContractAddress), t.Status, logCounts[t.Index]); err != nil {
			return fmt.Errorf("transaction %d: %w", t.Index, err)
		}
	}
	for _, l := range d.Logs {
		var topics [4]any
		for i := range l.Topics {
			if i >= len(topics) {
				return fmt.Errorf("log %d has %d topics", l.LogIndex, len(l.Topics))
			}
			topics[i] = l.Topics[i][:]
		}
		if err := w.logs.add(ctx, chain, n, l.TransactionIndex, l.LogIndex, l.Address[:],
			topics[0], topics[1], topics[2], topics[3], blobArg(l.Data)); err != nil {
			return fmt.Errorf("log %d: %w", l.LogIndex, err)
		}
	}
	return w.writeTraces(ctx, chain, n, d.Traces)
}

// writeTraces stores traces in API order: by transaction, then depth-first
// pre-order, each with its rank in that order as trace_pos.
func (w *blockWriter) writeTraces(ctx context.Context, chain, n int64, traces []*chainquery.Trace) error {
	sorted := slices.Clone(traces)
	slices.SortStableFunc(sorted, func(a, b *chainquery.Trace) int {
		if a.TransactionIndex != b.TransactionIndex {
			return a.TransactionIndex - b.TransactionIndex
		}
		return chainquery.CompareTraceAddress(a.TraceAddress, b.TraceAddress)
	})
	pos, lastTx := 0, -1
	for _, t := range sorted {
		if t.TransactionIndex != lastTx {
			pos, lastTx = 0, t.TransactionIndex
		}
		typ, ok := traceTypes[t.Type]
		if !ok {
			return fmt.Errorf("trace %d/%s: unknown type %q", t.TransactionIndex, chainquery.FormatTraceAddress(t.TraceAddress), t.Type)
		}
		callType, ok := callTypes[t.CallType]
		if !ok {
			return fmt.Errorf("trace %d/%s: unknown call type %q", t.TransactionIndex, chainquery.FormatTraceAddress(t.TraceAddress), t.CallType)
		}
		var errText any
		if t.Error != "" {
			errText = t.Error
		}
		if err := w.trs.add(ctx, chain, n, t.TransactionIndex, pos, chainquery.FormatTraceAddress(t.TraceAddress),
			typ, callType, t.From[:], addrPtrArg(t.To), gasArg(t.Gas), gasArg(t.GasUsed), bigOrZero(t.Value),
			t.Subtraces, blobArg(t.Input), blobArg(t.Output), errText); err != nil {
			return fmt.Errorf("trace %d/%s: %w", t.TransactionIndex, chainquery.FormatTraceAddress(t.TraceAddress), err)
		}
		pos++
	}
	return nil
}

// bigOrZero writes an amount that the schema never leaves NULL.
func bigOrZero(v *big.Int) any {
	if v == nil {
		return int64(0)
	}
	return bigArg(v)
}

// Write statements, prepared once at Open.
const (
	qBlockVersion = `SELECT max(version) FROM (
		SELECT version FROM blocks WHERE chain = ?1 AND number = ?2
		UNION ALL SELECT version FROM orphaned_blocks WHERE chain = ?1 AND number = ?2)`
	qDeleteOrphan = `DELETE FROM orphaned_blocks WHERE chain = ? AND number = ?`
	qTopHeight    = `SELECT max(m) FROM (SELECT max(number) AS m FROM blocks WHERE chain = ?1
		UNION ALL SELECT max(number) FROM orphaned_blocks WHERE chain = ?1)`
)

// qDeleteHeight removes every row of one block, children first.
var qDeleteHeight = []string{
	`DELETE FROM traces WHERE chain = ? AND block_number = ?`,
	`DELETE FROM logs WHERE chain = ? AND block_number = ?`,
	`DELETE FROM transactions WHERE chain = ? AND block_number = ?`,
	`DELETE FROM blocks WHERE chain = ? AND number = ?`,
}

var (
	blocksTable = newBulkTable("blocks", "chain", "number", "hash", "parent_hash", "timestamp", "version", "logs_bloom",
		"transactions_root", "state_root", "receipts_root", "miner", "extra_data", "size", "gas_limit", "gas_used",
		"transaction_count", "base_fee_per_gas", "trace_count")
	transactionsTable = newBulkTable("transactions", "chain", "block_number", "tx_index", "hash", "from_addr", "to_addr", "value",
		"gas_limit", "gas_price", "effective_gas_price", "max_fee_per_gas", "max_priority_fee_per_gas", "gas_used",
		"cumulative_gas_used", "nonce", "input", "type", "contract_address", "status", "log_count")
	logsTable   = newBulkTable("logs", "chain", "block_number", "tx_index", "log_index", "address", "topic0", "topic1", "topic2", "topic3", "data")
	tracesTable = newBulkTable("traces", "chain", "block_number", "tx_index", "trace_pos", "trace_address", "type", "call_type",
		"from_addr", "to_addr", "gas", "gas_used", "value", "subtraces", "input", "output", "error")
)

// writeStatements lists every statement the write side prepares at Open.
func writeStatements() []string {
	qs := append([]string{qBlockVersion, qDeleteOrphan, qTopHeight}, qDeleteHeight...)
	for _, t := range []bulkTable{blocksTable, transactionsTable, logsTable, tracesTable} {
		qs = append(qs, t.stmts...)
	}
	return qs
}
