package sqlstore

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strconv"

	"github.com/chainquery/chainquery"
)

// BlockBatch is the write transaction of one WriteBlocks or ReplaceBlocks
// call (BlockWriter), begun by Store.BeginBlocks. Store runs a rewind's
// statements on it when it replaces (deleteBlocks), asks for the versions
// stored at the batch's heights, clears the heights written again, inserts
// the rows and commits.
type BlockBatch interface {
	Tx

	// PriorVersions returns the highest version stored or orphaned at each
	// of heights that has one.
	PriorVersions(ctx context.Context, heights []uint64) (map[uint64]int, error)

	// Insert inserts the rows of tables, which are BlockTables filled.
	Insert(ctx context.Context, tables []Table) error

	// AddTraceCounts adds each row's N to its row of trace_counts, making
	// the rows missing (trace_counts.go). The statements that delete rows
	// (deleteBlocks) take the counts of the traces they delete off
	// trace_counts themselves.
	AddTraceCounts(ctx context.Context, rows []BucketRow) error

	// AddLogPostings adds each row's N to its row of log_postings and
	// appends its list to the row's, making the rows missing
	// (log_postings.go).
	AddLogPostings(ctx context.Context, rows []BucketRow) error

	// AddLogCounts adds each row's N to its row of log_counts (log_counts.go),
	// making the rows missing. The statements that delete rows
	// (deleteBlocks) take the counts of the logs they delete off
	// log_counts themselves.
	AddLogCounts(ctx context.Context, rows []BucketRow) error
}

// Table is a table that a block batch fills, with its rows. Values
// holds the rows one after the other, each the values of Columns in order.
// A value is an int64 (block numbers, times, and uint64 counters stored bit
// for bit), an int, a bool, a string, a []byte, nil for NULL, or an amount
// in the store's form (Store.AmountArg).
type Table struct {
	Name    string
	Columns []string
	Values  []any
}

// Rows returns the number of rows of t.
func (t *Table) Rows() int { return len(t.Values) / len(t.Columns) }

// BlockTables returns the tables a block batch fills, without rows, in the
// order a store inserts them.
func BlockTables() []Table {
	return []Table{
		{Name: "blocks", Columns: []string{"chain", "number", "hash", "parent_hash", "timestamp", "version", "logs_bloom",
			"transactions_root", "state_root", "receipts_root", "miner", "extra_data", "size", "gas_limit", "gas_used",
			"transaction_count", "base_fee_per_gas", "trace_count", "log_count"}},
		{Name: "transactions", Columns: []string{"chain", "block_number", "tx_index", "hash", "from_addr", "to_addr", "value",
			"gas_limit", "gas_price", "effective_gas_price", "max_fee_per_gas", "max_priority_fee_per_gas", "gas_used",
			"cumulative_gas_used", "nonce", "input", "type", "contract_address", "status", "log_count"}},
		{Name: "logs", Columns: []string{"chain", "block_number", "tx_index", "log_index", "address",
			"topic0", "topic1", "topic2", "topic3", "data"}},
		{Name: "traces", Columns: []string{"chain", "block_number", "tx_index", "trace_pos", "trace_address", "type", "call_type",
			"from_addr", "to_addr", "gas", "gas_used", "value", "subtraces", "input", "output", "error"}},
	}
}

// WriteBlocks stores blocks with all their rows in one transaction,
// replacing whatever is stored at their heights (BlockWriter).
func (s *Store) WriteBlocks(ctx context.Context, chain chainquery.Chain, blocks []*chainquery.BlockData) error {
	return s.writeBlocks(ctx, chain, nil, blocks)
}

// ReplaceBlocks removes every stored block of chain at or above from and
// writes blocks in their place, in one transaction (BlockWriter).
func (s *Store) ReplaceBlocks(ctx context.Context, chain chainquery.Chain, from uint64, blocks []*chainquery.BlockData) error {
	return s.writeBlocks(ctx, chain, &from, blocks)
}

func (s *Store) writeBlocks(ctx context.Context, chain chainquery.Chain, rewindFrom *uint64, blocks []*chainquery.BlockData) error {
	id, err := storeChainID(chain)
	if err != nil {
		return err
	}
	if err := s.flushAppend(ctx, id); err != nil {
		return err
	}
	heights := blockHeights(blocks)
	b, err := s.BeginBlocks(ctx, id, heights)
	if err != nil {
		return err
	}
	defer b.Rollback()
	prior, err := s.clearHeights(ctx, b, id, rewindFrom, heights)
	if err != nil {
		return err
	}
	direct, rows, err := s.splitDirect(ctx, b, id, planVersions(blocks, prior))
	if err != nil {
		return err
	}
	if err := s.writeHistory(ctx, b, id, direct); err != nil {
		return err
	}
	if err := insertBlockRows(ctx, b, id, rows, s.AmountArg, rowAll); err != nil {
		return err
	}
	if err := s.settle(ctx, b, id); err != nil {
		return err
	}
	return b.Commit(ctx)
}

// clearHeights makes room for a batch of heights: it thaws the history it
// touches, rewinds from rewindFrom (when not nil), deletes the blocks
// stored at heights written again, and records the rewrite. It returns the
// highest version stored or orphaned at each height that has one.
func (s *Store) clearHeights(ctx context.Context, b BlockBatch, id int64, rewindFrom *uint64, heights []uint64) (map[uint64]int, error) {
	if low, ok := lowestTouched(rewindFrom, heights); ok {
		if err := s.thaw(ctx, b, id, low); err != nil {
			return nil, err
		}
	}
	if rewindFrom != nil {
		if err := exec(ctx, b, s.statements().rewind, id, int64(*rewindFrom)); err != nil {
			return nil, err
		}
	}
	prior, err := b.PriorVersions(ctx, heights)
	if err != nil {
		return nil, err
	}
	if len(prior) > 0 {
		again := make([]uint64, 0, len(prior))
		for n := range prior {
			again = append(again, n)
		}
		slices.Sort(again)
		if err := s.deleteHeights(ctx, b, id, again); err != nil {
			return nil, err
		}
		if rewindFrom == nil || again[0] < *rewindFrom {
			rewindFrom = &again[0]
		}
	}
	if rewindFrom != nil { // something stored is rewritten: the API's kept answers must hear of it
		if _, err := b.Exec(ctx, qRecordRewrite, id, int64(*rewindFrom)); err != nil {
			return nil, err
		}
	}
	return prior, nil
}

// deleteHeights removes the blocks stored at heights with all their rows,
// and their orphan records: blocks are written there next.
func (s *Store) deleteHeights(ctx context.Context, b BlockBatch, chain int64, heights []uint64) error {
	qs := s.statements().deleteHeights
	if s.Dialect.HeightArray {
		ns := make([]int64, len(heights))
		for i, h := range heights {
			ns[i] = int64(h)
		}
		return exec(ctx, b, qs, chain, ns)
	}
	for _, q := range qs {
		for _, h := range heights {
			if _, err := b.Exec(ctx, q, chain, int64(h)); err != nil {
				return err
			}
		}
	}
	return nil
}

// settle ends a batch: it freezes the buckets that now lie RowBlocks below
// the chain's highest block, lists the logs of a bucket of history an
// earlier release wrote without them (a few seconds at Polygon's shape, a
// bucket of LogBucketBlocks a write).
func (s *Store) settle(ctx context.Context, b BlockBatch, id int64) error {
	var head *int64
	if _, err := queryRow(ctx, b, qLatestBlock, []any{id}, &head); err != nil {
		return err
	}
	if head != nil {
		if err := s.freeze(ctx, b, id, uint64(*head)); err != nil {
			return err
		}
	}
	if _, err := s.indexLogs(ctx, b, id, 1); err != nil {
		return err
	}
	if _, err := s.countHistoryLogs(ctx, b, id, 1); err != nil {
		return err
	}
	if _, err := s.closeTraceEpochs(ctx, b, id, 1); err != nil {
		return err
	}
	_, err := s.closeLogEpochs(ctx, b, id, 1)
	return err
}

// lowestTouched returns the lowest height a write of heights (in any
// order) after a rewind from rewindFrom (when not nil) removes or replaces.
func lowestTouched(rewindFrom *uint64, heights []uint64) (uint64, bool) {
	low, ok := uint64(0), false
	if rewindFrom != nil {
		low, ok = *rewindFrom, true
	}
	for _, h := range heights {
		if !ok || h < low {
			low, ok = h, true
		}
	}
	return low, ok
}

// chunkRows is about how many rows insertBlockRows prepares before it
// hands them to the store: the rows of a whole write group (up to a hundred
// blocks of a thousand rows each) held at once were a large part of the
// ingester's memory, and buffers this size are reused from chunk to chunk.
const chunkRows = 8192

// The rows of a block that insertBlockRows inserts.
const (
	rowHeaders       = 1 << iota // its row of blocks
	rowCounts                    // its traces added to trace_counts
	rowBodies                    // its transactions, logs and traces
	rowAddressCounts             // its traces added to trace_counts' rows of addresses alone (a thaw: CountAll has them)
	rowAll           = rowHeaders | rowCounts | rowBodies
)

// insertBlockRows inserts the rows of blocks, whose versions are set, in
// chunks of whole blocks of about chunkRows rows, writing amounts with
// amount: those of the kinds in what. History turned back into rows (thaw)
// has its headers and CountAll's counts already; blocks written as history
// need only their headers as rows.
func insertBlockRows(ctx context.Context, b BlockBatch, chain int64, blocks []*chainquery.BlockData, amount func(*big.Int) any, what int) error {
	headers, rows := what&rowHeaders != 0, what&rowBodies != 0
	tables := BlockTables()
	counts := traceCounter{}
	if what&(rowCounts|rowAddressCounts) != 0 {
		for _, d := range blocks {
			counts.add(d.Block.Number, d.Traces, what&rowCounts != 0)
		}
	}
	logCounts := logCounter{}
	if rows {
		for _, d := range blocks {
			logCounts.add(d)
		}
	}
	for len(blocks) > 0 {
		n, sizes := 0, [4]int{}
		for n < len(blocks) && (n == 0 || sizes[0]+sizes[1]+sizes[2]+sizes[3] < chunkRows) {
			d := blocks[n]
			sizes[0]++
			if rows {
				sizes[1] += len(d.Transactions)
				sizes[2] += len(d.Logs)
				sizes[3] += len(d.Traces)
			}
			n++
		}
		for i := range tables {
			if need := sizes[i] * len(tables[i].Columns); cap(tables[i].Values) < need {
				tables[i].Values = make([]any, 0, need)
			}
			tables[i].Values = tables[i].Values[:0]
		}
		for _, d := range blocks[:n] {
			if err := addBlockRows(tables, chain, d, amount, headers, rows); err != nil {
				return fmt.Errorf("block %d: %w", d.Block.Number, err)
			}
		}
		if err := b.Insert(ctx, tables); err != nil {
			return err
		}
		blocks = blocks[n:]
	}
	if len(logCounts) > 0 {
		if err := b.AddLogCounts(ctx, logCounts.rows()); err != nil {
			return err
		}
	}
	if len(counts) == 0 {
		return nil
	}
	return b.AddTraceCounts(ctx, counts.rows())
}

// addBlockRows adds block d's header row (with headers) and its
// transactions, logs and traces rows (with rows) to tables.
func addBlockRows(tables []Table, chain int64, d *chainquery.BlockData, amount func(*big.Int) any, headers, rows bool) error {
	blocks, txs, logs := &tables[0], &tables[1], &tables[2]
	b := d.Block
	n := int64(b.Number)
	// The values every row of the block repeats, boxed once.
	var chainV, nV any = chain, n
	logCounts := make(map[int]int, len(d.Transactions))
	for _, l := range d.Logs {
		logCounts[l.TransactionIndex]++
	}
	if headers {
		addHeaderRow(blocks, chainV, nV, d, amount)
	}
	if !rows {
		return nil
	}
	for _, t := range d.Transactions {
		txs.Values = append(txs.Values, chainV, nV, t.Index, t.Hash[:], t.From[:], addressOrNull(t.To),
			amount(orZero(t.Value)), int64(t.GasLimit), nullAmount(t.GasPrice, amount), nullAmount(t.EffectiveGasPrice, amount),
			nullAmount(t.MaxFeePerGas, amount), nullAmount(t.MaxPriorityFeePerGas, amount), int64(t.GasUsed), int64(t.CumulativeGasUsed),
			int64(t.Nonce), notNil(t.Input), t.Type, addressOrNull(t.ContractAddress), t.Status, logCounts[t.Index])
	}
	for _, l := range d.Logs {
		var topics [4]any
		if len(l.Topics) > len(topics) {
			return fmt.Errorf("log %d has %d topics", l.LogIndex, len(l.Topics))
		}
		for i := range l.Topics {
			topics[i] = l.Topics[i][:]
		}
		logs.Values = append(logs.Values, chainV, nV, l.TransactionIndex, l.LogIndex, l.Address[:],
			topics[0], topics[1], topics[2], topics[3], notNil(l.Data))
	}
	return addTraceRows(&tables[3], chainV, nV, d.Traces, amount)
}

// addHeaderRow adds block d's row of blocks; chain and n are its chain
// key and number, boxed.
func addHeaderRow(blocks *Table, chain, n any, d *chainquery.BlockData, amount func(*big.Int) any) {
	b := d.Block
	var bloom, extra any
	if len(b.LogsBloom) > 0 {
		bloom = b.LogsBloom
	}
	if b.HasExtraData {
		extra = notNil(b.ExtraData)
	}
	blocks.Values = append(blocks.Values, chain, n, b.Hash[:], b.ParentHash[:], b.Timestamp, b.Version, bloom,
		b.TransactionsRoot[:], b.StateRoot[:], b.ReceiptsRoot[:], b.Miner[:], extra, int64(b.Size),
		int64(b.GasLimit), int64(b.GasUsed), b.TransactionCount, nullAmount(b.BaseFeePerGas, amount), traceCount(d), logCount(d))
}

// traceCount and logCount are the numbers of d's traces and logs, also
// when PrepareBlocks kept only their keys.
func traceCount(d *chainquery.BlockData) int {
	_, _, n := d.Counts()
	return n
}

func logCount(d *chainquery.BlockData) int {
	_, n, _ := d.Counts()
	return n
}

// traceOrder is API order: by transaction, then depth-first pre-order.
func traceOrder(a, b *chainquery.Trace) int {
	if a.TransactionIndex != b.TransactionIndex {
		return a.TransactionIndex - b.TransactionIndex
	}
	return chainquery.CompareTraceAddress(a.TraceAddress, b.TraceAddress)
}

// addTraceRows adds traces in API order, each with its rank in that order
// within its transaction as trace_pos. chain and n are the chain id and
// block number, boxed.
func addTraceRows(traces *Table, chain, n any, rows []*chainquery.Trace, amount func(*big.Int) any) error {
	sorted := rows
	if !slices.IsSortedFunc(rows, traceOrder) { // nodes answer in this order
		sorted = slices.Clone(rows)
		slices.SortStableFunc(sorted, traceOrder)
	}
	pos, lastTx := 0, -1
	for _, t := range sorted {
		if t.TransactionIndex != lastTx {
			pos, lastTx = 0, t.TransactionIndex
		}
		addr := chainquery.FormatTraceAddress(t.TraceAddress)
		typ := slices.Index(traceTypeCodes, t.Type)
		if typ < 0 {
			return fmt.Errorf("trace %d/%s: unknown type %q", t.TransactionIndex, addr, t.Type)
		}
		callType := slices.Index(callTypeCodes, t.CallType)
		if callType < 0 {
			return fmt.Errorf("trace %d/%s: unknown call type %q", t.TransactionIndex, addr, t.CallType)
		}
		var errText any
		if t.Error != "" {
			errText = t.Error
		}
		traces.Values = append(traces.Values, chain, n, t.TransactionIndex, pos, addr, typ, callType,
			t.From[:], addressOrNull(t.To), int64(t.Gas), int64(t.GasUsed), amount(orZero(t.Value)),
			t.Subtraces, notNil(t.Input), notNil(t.Output), errText)
		pos++
	}
	return nil
}

// addressOrNull is the value of a nullable address column.
func addressOrNull(a *chainquery.Address) any {
	if a == nil {
		return nil
	}
	return a[:]
}

// notNil is the value of a blob column that is never NULL: an empty blob,
// not NULL, where there are no bytes.
func notNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// nullAmount is the value of a nullable amount column.
func nullAmount(v *big.Int, amount func(*big.Int) any) any {
	if v == nil {
		return nil
	}
	return amount(v)
}

// orZero is the amount of a column that is never NULL.
func orZero(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return v
}

// planVersions applies the version rule of BlockWriter for every SQL
// store: a block written at a height where a block was ever stored before
// (including one a rewind removed, whose version is kept as orphaned) gets
// that block's version + 1; otherwise 0. It returns the blocks of a batch
// to write, each with its Version set, given prior: the highest version stored or orphaned at each
// height that has one. A height given twice in one batch ends as if written
// in two batches in a row: only its last block is written, with the version
// after the earlier one's.
func planVersions(blocks []*chainquery.BlockData, prior map[uint64]int) []*chainquery.BlockData {
	last := make(map[uint64]int, len(blocks))
	for i, d := range blocks {
		last[d.Block.Number] = i
	}
	earlier := map[uint64]int{}
	out := make([]*chainquery.BlockData, 0, len(last))
	for i, d := range blocks {
		n := d.Block.Number
		if last[n] != i {
			earlier[n]++
			continue
		}
		v := earlier[n]
		if p, ok := prior[n]; ok {
			v += p + 1
		}
		d.Block.Version = v
		out = append(out, d)
	}
	return out
}

// blockHeights returns the heights of blocks, each once, in the order they
// first appear.
func blockHeights(blocks []*chainquery.BlockData) []uint64 {
	seen := make(map[uint64]bool, len(blocks))
	var out []uint64
	for _, d := range blocks {
		if n := d.Block.Number; !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// qRecordRewrite: chain, from → appends the chain's next rewrite, of
// heights from up, to the rewrites log.
const qRecordRewrite = `INSERT INTO rewrites (chain, seq, from_height)
	SELECT $1, coalesce(max(seq), 0) + 1, $2 FROM rewrites WHERE chain = $1`

// qRecordOrphans: chain, from → records the versions of the blocks at or
// above from as orphaned, before a rewind deletes them.
const qRecordOrphans = `INSERT INTO orphaned_blocks (chain, number, version)
	SELECT chain, number, version FROM blocks WHERE chain = $1 AND number >= $2
	ON CONFLICT (chain, number) DO UPDATE SET version = excluded.version`

// deleteBlocks returns the statements that delete the rows of the blocks
// of set, in order: the counts of what they delete taken off first, then
// children before parents. With headers, the blocks' header rows go too,
// and their traces are taken off trace_counts; without (a freeze), both
// stay but for the counts by address, which history keeps in its pages
// (trace_pages.go): those are taken off, and the rows left at 0 deleted. Their logs are
// always taken off log_counts, which counts rows alone (log_counts.go).
// Every statement that deletes blocks' rows is made here: a rewind, a
// freeze, and a batch writing heights again.
func deleteBlocks(d *Dialect, set BlockSet, headers bool) []string {
	qs := []string{uncountTracesSQL(d, set, headers)}
	if !headers {
		// A freeze: the blocks' counts by address go to their pages.
		qs = append(qs, `DELETE FROM trace_counts WHERE chain = $1 AND bucket `+set.Bucket(TraceCountBlocks)+` AND dir IN (0, 1) AND n = 0`)
	}
	qs = append(qs, uncountLogsSQL(d, set),
		`DELETE FROM log_counts WHERE chain = $1 AND bucket `+set.Bucket(LogBucketBlocks)+` AND n = 0`,
		`DELETE FROM traces WHERE chain = $1 AND block_number `+set.Number,
		`DELETE FROM logs WHERE chain = $1 AND block_number `+set.Number,
		`DELETE FROM transactions WHERE chain = $1 AND block_number `+set.Number)
	if headers {
		qs = append(qs, `DELETE FROM blocks WHERE chain = $1 AND number `+set.Number)
	}
	return qs
}

// uncountTracesSQL takes the traces of the blocks of set off trace_counts,
// before they are deleted: off the rows of addresses, and off CountAll's
// with all. The WHERE true keeps SQLite from reading ON CONFLICT as a
// join's ON.
func uncountTracesSQL(d *Dialect, set BlockSet, all bool) string {
	b := "block_number / " + strconv.Itoa(TraceCountBlocks)
	where := ` WHERE chain = $1 AND block_number ` + set.Number
	allSQL := ""
	if all {
		allSQL = `UNION ALL SELECT CAST($1 AS integer), ` + strconv.Itoa(CountAll) + `, ` + d.EmptyBytes + `, number / ` + strconv.Itoa(TraceCountBlocks) + `,
				-sum(trace_count) FROM blocks WHERE chain = $1 AND number ` + set.Number + ` AND trace_count > 0
				GROUP BY number / ` + strconv.Itoa(TraceCountBlocks)
	}
	return `INSERT INTO trace_counts (chain, dir, address, bucket, n)
		SELECT * FROM (
			SELECT CAST($1 AS integer), ` + strconv.Itoa(CountFrom) + `, from_addr, ` + b + `, -count(*) FROM traces` + where + `
				GROUP BY from_addr, ` + b + `
			UNION ALL SELECT CAST($1 AS integer), ` + strconv.Itoa(CountTo) + `, to_addr, ` + b + `, -count(*) FROM traces` + where + `
				AND to_addr IS NOT NULL GROUP BY to_addr, ` + b + `
			` + allSQL + `) AS u
		WHERE true
		ON CONFLICT (chain, bucket, dir, address) DO UPDATE SET n = trace_counts.n + excluded.n`
}

// uncountLogsSQL takes the logs of the blocks of set off log_counts,
// before they are deleted; the rows it leaves at 0 are deleted next
// (deleteBlocks).
func uncountLogsSQL(d *Dialect, set BlockSet) string {
	b := "block_number / " + strconv.Itoa(LogBucketBlocks)
	where := ` WHERE chain = $1 AND block_number ` + set.Number
	return `INSERT INTO log_counts (chain, bucket, kind, key, n)
		SELECT * FROM (
			SELECT CAST($1 AS integer), ` + b + `, ` + strconv.Itoa(logKeyAddress) + `, address, -count(*) FROM logs` + where + `
				GROUP BY ` + b + `, address
			UNION ALL SELECT CAST($1 AS integer), ` + b + `, ` + strconv.Itoa(logKeyTopic0) + `, topic0, -count(*) FROM logs` + where + `
				AND topic0 IS NOT NULL GROUP BY ` + b + `, topic0
			UNION ALL SELECT CAST($1 AS integer), ` + b + `, ` + strconv.Itoa(logKeyAddressTopic0) + `, ` + d.Bytes("address || topic0") + `, -count(*) FROM logs` + where + `
				AND topic0 IS NOT NULL GROUP BY ` + b + `, address, topic0) AS u
		WHERE true
		ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = log_counts.n + excluded.n`
}
