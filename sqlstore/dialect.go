package sqlstore

import (
	"context"
	"strconv"

	"github.com/chainquery/chainquery"
)

// Dialect is what a SQL store's database does differently: the statements
// whose text or plan is its own (SQLite names indexes with INDEXED BY and
// lists values in IN; PostgreSQL takes arrays, and steers its planner with
// LATERAL subqueries and partitions), a few fragments of syntax, and how
// its placeholders are written. Every other statement is written once in
// this package. Each statement says the arguments it takes (in order) and
// the columns it returns.
type Dialect struct {
	// Bind rewrites a statement of this package, written with $1, $2, ...
	// placeholders, into the dialect's form; nil where that is the form.
	// A store binds each statement once, when it prepares it.
	Bind func(query string) string

	// InProcess says the database runs in this process (SQLite): its
	// work, a commit's included, is this process's CPU
	// (chainquery.InProcessWriter).
	InProcess bool

	// InsertMany starts an INSERT of many rows that a conflict fails:
	// SQLite's OR FAIL keeps it from copying every page it changes into a
	// statement journal first, in memory here, to undo the statement alone
	// (sqlite/bulk.go); a failure ends the transaction anyway.
	InsertMany string

	// EmptyBytes is the literal of an empty blob (trace_counts' key of
	// CountAll). Bytes wraps an expression of blobs, such as a || b, so
	// that its value is a blob again.
	EmptyBytes string
	Bytes      func(expr string) string

	// Heights is how a statement of one batch's heights names them (with
	// $1 the chain): a condition on the heights in $2, and the same on
	// their buckets. HeightArray says $2 is every height as an array, the
	// statement run once; otherwise it is one height, the statement run
	// for each.
	Heights     BlockSet
	HeightArray bool

	// TraceCount returns the statement counting the traces of a plan with
	// addresses (one row, one integer) and its arguments; TracePage the
	// statement of its page (traceColumns) and its arguments.
	TraceCount, TracePage func(p *TracePlan) (string, []any)

	// TraceBucketSum returns the statement adding up trace_counts over the
	// plan's whole buckets, for its direction and addresses (one row, one
	// integer), and its arguments; TraceBuckets the statement of the same
	// sums bucket by bucket (bucket, n), in bucket order. See
	// trace_counts.go.
	TraceBucketSum, TraceBuckets func(p *TracePlan) (string, []any)

	// NarrowWalks ends the range of a page's address walks at the last
	// bucket the page needs, by trace_counts, before the page statement
	// runs (narrowWalks): set where a walk's rows are sorted after it
	// (PostgreSQL, whose nested loop over the buckets keeps no order it
	// knows of), so that the sort is bounded by the page, not by the
	// range's buckets.
	NarrowWalks bool

	// TransactionTraceCount: chain, block number, tx_index → the number
	// of the transaction's trace rows. TransactionTraces: chain, block
	// number, tx_index, limit, offset → RowTraces' columns, in trace_pos
	// order.
	TransactionTraceCount, TransactionTraces string

	// LogTransaction returns the statement looking up a transaction by
	// hash, in the given block when block is not nil, else the latest one,
	// and its arguments. Columns: block_number, tx_index, from_addr,
	// to_addr, log_count, and the block's timestamp.
	LogTransaction func(chain int64, hash chainquery.Hash, block *uint64) (string, []any)

	// LogTransactionPage is LogTransaction and qLogPage in one statement:
	// LogTransaction's columns, then qLogPage's, one row per log of the
	// page (limit, offset). No row when the transaction is missing or the
	// page is empty: LogTransaction then tells which. Nil where the dialect
	// cannot plan it well (PostgreSQL: the page's block is found by the
	// same statement, so no partition of logs is pruned when it is planned
	// and the page is sorted).
	LogTransactionPage func(chain int64, hash chainquery.Hash, block *uint64, limit, offset int) (string, []any)

	// Transaction returns the statement looking up a transaction by hash,
	// in the given block when block is not nil, else the latest one, and
	// its arguments. Columns: block_number, the block's timestamp and
	// version, then qBlockTransactions' columns.
	Transaction func(chain int64, hash chainquery.Hash, block *uint64) (string, []any)

	// BlockLogPage: chain, number, limit, offset → tx_index, the
	// transaction's hash, from_addr and to_addr, then qLogPage's columns,
	// in log_index order.
	BlockLogPage string

	// RangeLogCount returns the statement counting the log rows of the
	// blocks lo to hi that meet f's address and topic conditions (one
	// row, one integer), and its arguments; RangeLogPage the statement of
	// a page of them (limit, offset) and its arguments: block_number, the
	// block's timestamp, tx_index, the transaction's hash, from_addr and
	// to_addr, then qLogPage's columns, in (block_number, log_index) order
	// (Filter Logs).
	RangeLogCount func(chain, lo, hi int64, f *chainquery.LogRangeFilter) (string, []any)
	RangeLogPage  func(chain, lo, hi int64, f *chainquery.LogRangeFilter, limit, offset int) (string, []any)

	// LogRowCount returns the statement adding up log_counts (log_counts.go)
	// of chain's buckets, of kind and keys: → the sum (0 for none). Each
	// bucket and key is a seek: a range of buckets would read every key of
	// them.
	LogRowCount func(chain int64, buckets []int64, kind int, keys [][]byte) (string, []any)

	// TokenBalance: account, unix milliseconds, include metadata (bool) →
	// the cursor's block_time (unix milliseconds); whether the account has
	// a change at or before then; that latest change's owner, mint, amount,
	// decimals, block_time and slot (zero values when none); and, when
	// asked, its token's name and symbol (NULL when unknown). No row before
	// the cursor exists. One statement, so that no read transaction is
	// needed (on PostgreSQL a transaction costs two more round trips).
	TokenBalance string

	// SOLBalance: account, unix milliseconds → the stored SOL range
	// (sol_from, its block_time, sol_through, its block_time: NULL when
	// none); whether the account has a change at or before then within the
	// range; that change's block_time, slot and lamports (zeros when none).
	// No row without a cursor.
	SOLBalance string

	// OwnerBalanceCount: owner, unix milliseconds → the number of token
	// accounts the owner owns then (chainquery.TokenBalanceService).
	// OwnerBalancePage: owner, unix milliseconds, include metadata (bool),
	// limit, offset → OwnerBalanceCount's number, account, and the
	// account's latest change at or before then: mint, amount, decimals,
	// block_time, slot; and, when asked, its token's name and symbol (NULL
	// when unknown); in account order. No row when the page is empty:
	// OwnerBalanceCount then says how many there are.
	OwnerBalanceCount, OwnerBalancePage string

	// RowTransactions: chain, lo, hi → block_number, then
	// qBlockTransactions' columns, in (block_number, tx_index) order.
	// RowTraces: chain, lo, hi → block_number, tx_index, trace_address,
	// type, call_type, from_addr, to_addr, gas, gas_used, value, subtraces,
	// input, output, error, in API order. Both read rows, not history
	// (qRowLogs is the logs').
	RowTransactions, RowTraces string

	// HistoryBlocks returns the statement of the transaction and trace
	// segments of the history blocks numbers, and its arguments: number,
	// the block's timestamp and version, kind, data.
	HistoryBlocks func(chain int64, numbers []uint64) (string, []any)

	// HistoryLogBlocks is HistoryBlocks for the log segments alone
	// (Filter Logs).
	HistoryLogBlocks func(chain int64, numbers []uint64) (string, []any)

	// HistoryStamps returns the statement of the number, timestamp and
	// version of each stored block among numbers, and its arguments.
	HistoryStamps func(chain int64, numbers []uint64) (string, []any)

	// LogPostingCounts returns the statement of the number of logs of keys
	// of kind in each of the buckets first to last that has some, and its
	// arguments: bucket, sum(n), in bucket order.
	LogPostingCounts func(chain int64, kind int, keys [][]byte, first, last int64) (string, []any)

	// LogPostings returns the statement of the posting lists of keys of
	// kind over the buckets first to last, and its arguments: bucket, list
	// of each row of log_postings, in bucket order.
	LogPostings func(chain int64, kind int, keys [][]byte, first, last int64) (string, []any)

	// LogPostingsPrefix is LogPostings with the first n bytes of each list
	// alone (all of a shorter one), where the store reads the start of a
	// long value for less than the whole (PostgreSQL's TOAST fetches the
	// chunks of a slice); nil where it does not (SQLite reads a value's
	// overflow pages whole, whatever function takes it).
	LogPostingsPrefix func(chain int64, kind int, keys [][]byte, first, last int64, n int) (string, []any)

	// LogTopics returns the statement of the topics of the lists of
	// addresses over the buckets first to last, and its arguments: bucket,
	// topics of each row of log_postings, in bucket order.
	LogTopics func(chain int64, addrs [][]byte, first, last int64) (string, []any)

	// LogTaggedPostings returns the statement of the lists of addresses
	// with their topic0s over the buckets first to last, and its
	// arguments: bucket, topics, list, tags of each row of log_postings,
	// in bucket order.
	LogTaggedPostings func(chain int64, addrs [][]byte, first, last int64) (string, []any)
}

// BlockSet is a condition on the blocks a statement touches, on its
// arguments from $2 ($1 is the chain): Number follows a block number
// column ("= $2", ">= $2", "BETWEEN $2 AND $3"); Bucket(size) follows a
// bucket column of buckets of size heights, and holds the buckets of
// those blocks.
type BlockSet struct {
	Number string
	Bucket func(size int) string
}

// builtSQL are the statements made from a Dialect's fragments.
type builtSQL struct {
	tracesFrom string

	// rewind deletes the blocks at or above $2 with every row and count
	// of theirs (a rewind), after recording their versions as orphaned.
	rewind []string

	// deleteRows deletes the rows of the blocks from $2 to $3, leaving
	// their headers and trace_counts (a freeze).
	deleteRows []string

	// deleteHeights deletes every row of the heights of Dialect.Heights
	// and their orphan records (a batch writing them again).
	deleteHeights []string
}

// statements returns the statements made from s.Dialect, made on first use.
func (s *Store) statements() *builtSQL {
	s.buildOnce.Do(func() {
		d := &s.Dialect
		b := &s.built
		b.tracesFrom = tracesFromSQL(d)
		b.rewind = append([]string{qRecordOrphans}, deleteBlocks(d, BlockSet{">= $2", func(size int) string {
			return ">= $2 / " + strconv.Itoa(size)
		}}, true)...)
		b.deleteRows = deleteBlocks(d, BlockSet{"BETWEEN $2 AND $3", func(size int) string {
			n := strconv.Itoa(size)
			return "BETWEEN $2 / " + n + " AND $3 / " + n
		}}, false)
		b.deleteHeights = append(deleteBlocks(d, d.Heights, true),
			`DELETE FROM orphaned_blocks WHERE chain = $1 AND number `+d.Heights.Number)
	})
	return &s.built
}

// HeightDeletes returns the statements that delete a batch's heights
// (Dialect.Heights), for a store that prepares its write statements.
func (s *Store) HeightDeletes() []string { return s.statements().deleteHeights }

// exec runs each of queries with args on c.
func exec(ctx context.Context, c Conn, queries []string, args ...any) error {
	for _, q := range queries {
		if _, err := c.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}
