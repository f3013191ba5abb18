package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
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

// writeLockClass is the first key of the per-chain pg_advisory_xact_lock
// (the second is the chain id) that makes writers of one chain take turns,
// as SQLite's single writer does: two writers computing versions from the
// same snapshot would otherwise collide.
const writeLockClass int32 = 0x6371 // "cq"

func (db *DB) writeBlocks(ctx context.Context, chain chainquery.Chain, rewindFrom *uint64, blocks []*chainquery.BlockData) error {
	id, err := chainID(chain)
	if err != nil {
		return err
	}
	// A height written twice in one call ends as if written twice in a
	// row: the last data wins, with the version after the first's.
	last := map[uint64]int{}
	earlier := map[uint64]int{}
	heights := make([]int64, 0, len(blocks))
	var unique []uint64
	for i, b := range blocks {
		n := b.Block.Number
		if _, ok := last[n]; ok {
			earlier[n]++
		} else {
			heights = append(heights, gasArg(n))
			unique = append(unique, n)
		}
		last[n] = i
	}
	if err := db.ensurePartitions(ctx, unique); err != nil {
		return err
	}

	tx, err := db.wpool.Begin(ctx)
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, writeLockClass, id); err != nil {
		return wrap(err)
	}
	if rewindFrom != nil {
		if err := rewind(ctx, tx, id, *rewindFrom); err != nil {
			return wrap(err)
		}
	}
	prev, err := priorVersions(ctx, tx, id, heights)
	if err != nil {
		return wrap(err)
	}
	if err := deleteHeights(ctx, tx, id, prev); err != nil {
		return wrap(err)
	}

	var rows copyRows
	for i, d := range blocks {
		n := d.Block.Number
		if last[n] != i {
			continue
		}
		version := earlier[n]
		if v, ok := prev[gasArg(n)]; ok {
			version += v + 1
		}
		d.Block.Version = version
		if err := rows.add(id, d); err != nil {
			return fmt.Errorf("block %d: %w", n, err)
		}
	}
	if err := rows.copy(ctx, tx); err != nil {
		return wrap(err)
	}
	return wrap(tx.Commit(ctx))
}

// rewind keeps the versions of the blocks at or above from, then removes them
// with all their rows.
func rewind(ctx context.Context, tx pgx.Tx, chain int32, from uint64) error {
	if _, err := tx.Exec(ctx, `INSERT INTO orphaned_blocks (chain, number, version)
		SELECT chain, number, version FROM blocks WHERE chain = $1 AND number >= $2
		ON CONFLICT (chain, number) DO UPDATE SET version = excluded.version`, chain, gasArg(from)); err != nil {
		return err
	}
	for _, table := range []string{"traces", "logs", "transactions"} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE chain = $1 AND block_number >= $2`, chain, gasArg(from)); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `DELETE FROM blocks WHERE chain = $1 AND number >= $2`, chain, gasArg(from))
	return err
}

// priorVersions returns the highest version stored or orphaned at each of
// heights that has one.
func priorVersions(ctx context.Context, tx pgx.Tx, chain int32, heights []int64) (map[int64]int, error) {
	rows, err := tx.Query(ctx, `SELECT number, max(version) FROM (
			SELECT number, version FROM blocks WHERE chain = $1 AND number = ANY($2)
			UNION ALL SELECT number, version FROM orphaned_blocks WHERE chain = $1 AND number = ANY($2)) v
		GROUP BY number`, chain, heights)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	prev := map[int64]int{}
	for rows.Next() {
		var n int64
		var v int
		if err := rows.Scan(&n, &v); err != nil {
			return nil, err
		}
		prev[n] = v
	}
	return prev, rows.Err()
}

// deleteHeights removes every row of the blocks stored at the heights in
// prev, and their orphan records: the new blocks take their place.
func deleteHeights(ctx context.Context, tx pgx.Tx, chain int32, prev map[int64]int) error {
	if len(prev) == 0 {
		return nil
	}
	heights := make([]int64, 0, len(prev))
	for n := range prev {
		heights = append(heights, n)
	}
	for _, q := range []string{
		`DELETE FROM traces WHERE chain = $1 AND block_number = ANY($2)`,
		`DELETE FROM logs WHERE chain = $1 AND block_number = ANY($2)`,
		`DELETE FROM transactions WHERE chain = $1 AND block_number = ANY($2)`,
		`DELETE FROM blocks WHERE chain = $1 AND number = ANY($2)`,
		`DELETE FROM orphaned_blocks WHERE chain = $1 AND number = ANY($2)`,
	} {
		if _, err := tx.Exec(ctx, q, chain, heights); err != nil {
			return err
		}
	}
	return nil
}

// copyRows collects the rows of one write, table by table, for COPY.
type copyRows struct {
	blocks, txs, logs, traces [][]any
}

// Columns of each table as copyRows fills them.
var (
	blockColumns = []string{"chain", "number", "hash", "parent_hash", "timestamp", "version", "logs_bloom",
		"transactions_root", "state_root", "receipts_root", "miner", "extra_data", "size", "gas_limit", "gas_used",
		"transaction_count", "base_fee_per_gas", "trace_count"}
	transactionColumns = []string{"chain", "block_number", "tx_index", "hash", "from_addr", "to_addr", "value",
		"gas_limit", "gas_price", "effective_gas_price", "max_fee_per_gas", "max_priority_fee_per_gas", "gas_used",
		"cumulative_gas_used", "nonce", "input", "type", "contract_address", "status", "log_count"}
	logColumns   = []string{"chain", "block_number", "tx_index", "log_index", "address", "topic0", "topic1", "topic2", "topic3", "data"}
	traceColumns = []string{"chain", "block_number", "tx_index", "trace_pos", "trace_address", "type", "call_type",
		"from_addr", "to_addr", "gas", "gas_used", "value", "subtraces", "input", "output", "error"}
)

// copy sends each table's rows with one COPY.
func (r *copyRows) copy(ctx context.Context, tx pgx.Tx) error {
	for _, t := range []struct {
		table   string
		columns []string
		rows    [][]any
	}{
		{"blocks", blockColumns, r.blocks},
		{"transactions", transactionColumns, r.txs},
		{"logs", logColumns, r.logs},
		{"traces", traceColumns, r.traces},
	} {
		if len(t.rows) == 0 {
			continue
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{t.table}, t.columns, pgx.CopyFromRows(t.rows)); err != nil {
			return fmt.Errorf("copy %s: %w", t.table, err)
		}
	}
	return nil
}

// add collects the rows of one block, whose Version is set.
func (r *copyRows) add(chain int32, d *chainquery.BlockData) error {
	b := d.Block
	n := gasArg(b.Number)
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
	r.blocks = append(r.blocks, []any{chain, n, b.Hash[:], b.ParentHash[:], b.Timestamp, b.Version, bloom,
		b.TransactionsRoot[:], b.StateRoot[:], b.ReceiptsRoot[:], b.Miner[:], extra, gasArg(b.Size),
		gasArg(b.GasLimit), gasArg(b.GasUsed), b.TransactionCount, bigArg(b.BaseFeePerGas), len(d.Traces)})
	for _, t := range d.Transactions {
		r.txs = append(r.txs, []any{chain, n, t.Index, t.Hash[:], t.From[:], addrPtrArg(t.To),
			bigOrZero(t.Value), gasArg(t.GasLimit), bigArg(t.GasPrice), bigArg(t.EffectiveGasPrice),
			bigArg(t.MaxFeePerGas), bigArg(t.MaxPriorityFeePerGas), gasArg(t.GasUsed), gasArg(t.CumulativeGasUsed),
			gasArg(t.Nonce), blobArg(t.Input), t.Type, addrPtrArg(t.ContractAddress), t.Status, logCounts[t.Index]})
	}
	for _, l := range d.Logs {
		var topics [4]any
		if len(l.Topics) > len(topics) {
			return fmt.Errorf("log %d has %d topics", l.LogIndex, len(l.Topics))
		}
		for i := range l.Topics {
			topics[i] = l.Topics[i][:]
		}
		r.logs = append(r.logs, []any{chain, n, l.TransactionIndex, l.LogIndex, l.Address[:],
			topics[0], topics[1], topics[2], topics[3], blobArg(l.Data)})
	}
	return r.addTraces(chain, n, d.Traces)
}

// addTraces collects traces in API order: by transaction, then depth-first
// pre-order, each with its rank in that order as trace_pos.
func (r *copyRows) addTraces(chain int32, n int64, traces []*chainquery.Trace) error {
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
		addr := chainquery.FormatTraceAddress(t.TraceAddress)
		typ, ok := traceTypes[t.Type]
		if !ok {
			return fmt.Errorf("trace %d/%s: unknown type %q", t.TransactionIndex, addr, t.Type)
		}
		callType, ok := callTypes[t.CallType]
		if !ok {
			return fmt.Errorf("trace %d/%s: unknown call type %q", t.TransactionIndex, addr, t.CallType)
		}
		var errText any
		if t.Error != "" {
			errText = t.Error
		}
		r.traces = append(r.traces, []any{chain, n, t.TransactionIndex, pos, addr, typ, callType,
			t.From[:], addrPtrArg(t.To), gasArg(t.Gas), gasArg(t.GasUsed), bigOrZero(t.Value),
			t.Subtraces, blobArg(t.Input), blobArg(t.Output), errText})
		pos++
	}
	return nil
}
