// Package sqlstore is what the SQL stores (package sqlite and package
// postgres) share: everything but their SQL text and their driver calls.
// Both import it, as database/sql's drivers import that package; the API
// and the ingesters never do (they take a chainquery.Store).
package sqlstore

import (
	"context"
	"errors"
	"math/big"
	"sync"

	"github.com/chainquery/chainquery"
)

// SQLStore is the part of a Store that is neither SQL text nor driver calls,
// written once for the SQL stores: every read, the API key writes, and the
// rules of the block writes (rewind, versions, rows, trace order). A store
// fills it with its statements (StoreSQL) and its driver (StoreConn,
// StoreTx, BlockBatch), embeds it, and adds the rest of Store: the token
// balance writes, Ping and Close.
type SQLStore struct {
	SQL StoreSQL

	// Read runs the API's reads of one statement: a pool of the server that
	// answers reads (a replica, where the store has one).
	Read StoreConn

	// Primary runs the reads whose answer must hold every committed write:
	// BlockHash, HeadBlock, SolanaCursor and LatestOwner, which ingesters
	// resume and check from. It may be Read where reads never lag.
	Primary StoreConn

	// Write runs the writes of one statement (API keys).
	Write StoreConn

	// ReadTx begins a read-only transaction on the server of Read, in which
	// the statements of one request see one snapshot: a count and its page
	// agree while an ingester commits.
	ReadTx func(ctx context.Context) (StoreTx, error)

	// BeginBlocks begins the write transaction of one WriteBlocks or
	// ReplaceBlocks call of the chain keyed chain, writing blocks at heights.
	BeginBlocks func(ctx context.Context, chain int64, heights []uint64) (BlockBatch, error)

	// TipBlocks is how many of a chain's highest blocks at least stay rows
	// before their buckets become history (history.go): 0 for
	// DefaultTipBlocks, negative to keep every block as rows.
	TipBlocks int

	// decoded keeps decoded history segments (history_cache.go).
	decoded decodedCache

	// nodeHeads holds, by chain key, the last head an ingester saw its
	// node at (SetNodeHead): blocks TipBlocks below it are written
	// straight into history.
	nodeHeads sync.Map

	// AmountArg returns an amount (wei, token amounts) in the store's form
	// of a 256-bit integer, as an argument or a value of a row; ScanAmount
	// returns the scan target that reads it back into *p, nil for NULL.
	AmountArg  func(v *big.Int) any
	ScanAmount func(p **big.Int) any
}

// StoreConn runs a store's statements with its driver: a pool or a
// transaction. Its errors are the driver's, with EUNAVAILABLE joined where
// the database could not answer.
type StoreConn interface {
	// Query runs query with args and, for each row in turn, scans it into
	// dest and calls row. An error of row ends the query and is returned as
	// it is.
	//
	// The destinations are pointers to int, int64, float64, bool, string,
	// []byte (nil for NULL, and possibly for an empty value), *int64 and
	// *string (nil for NULL), and ScanAmount's targets. The arguments are
	// int64, int, float64, string, []byte, nil (NULL) and [][]byte (an
	// array, where the store's SQL takes one).
	Query(ctx context.Context, query string, args, dest []any, row func() error) error

	// Exec runs query with args and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
}

// StoreTx is a transaction of a store's driver. Rollback after Commit does
// nothing, so that it may be deferred.
type StoreTx interface {
	StoreConn
	Commit(ctx context.Context) error
	Rollback()
}

// StoreSQL is a store's statements, in its dialect, that SQLStore runs. Each
// says the arguments it takes (in order) and the columns it returns.
type StoreSQL struct {
	// FirstBlockAtOrAfter: chain, unix seconds → the number of the first
	// block stamped at or after them; LastBlockAtOrBefore the last at or
	// before. No row when there is none.
	FirstBlockAtOrAfter, LastBlockAtOrBefore string

	// TraceCount returns the statement counting the traces of a plan (one
	// row, one integer) and its arguments; TracePage the statement of its
	// page (traceColumns) and its arguments.
	TraceCount, TracePage func(p *TracePlan) (string, []any)

	// TraceBucketSum returns the statement adding up trace_counts over the
	// plan's whole buckets, for its direction and addresses (one row, one
	// integer), and its arguments; TraceBuckets the statement of the same
	// sums bucket by bucket (bucket, n), in bucket order. See trace_count.go.
	TraceBucketSum, TraceBuckets func(p *TracePlan) (string, []any)

	// NarrowWalks ends the range of a page's address walks at the last
	// bucket the page needs, by trace_counts, before the page statement
	// runs (narrowWalks): set where a walk's rows are sorted after it
	// (PostgreSQL, whose nested loop over the buckets keeps no order it
	// knows of), so that the sort is bounded by the page, not by the
	// range's buckets.
	NarrowWalks bool

	// BlockTraceCounts: chain, first, last → number, trace_count of the
	// blocks between them, in number order.
	BlockTraceCounts string

	// LogTransaction returns the statement looking up a transaction by
	// hash, in the given block when block is not nil, else the latest one,
	// and its arguments. Columns: block_number, tx_index, from_addr,
	// to_addr, log_count, and the block's timestamp.
	LogTransaction func(chain int64, hash chainquery.Hash, block *uint64) (string, []any)

	// LogPage: chain, block number, tx_index, limit, offset → log_index,
	// address, topic0 to topic3, data, in log_index order.
	LogPage string

	// LogTransactionPage is LogTransaction and LogPage in one statement:
	// LogTransaction's columns, then LogPage's, one row per log of the page
	// (limit, offset). No row when the transaction is missing or the page
	// is empty: LogTransaction then tells which. Nil where the dialect
	// cannot plan it well (PostgreSQL: the page's block is found by the
	// same statement, so no partition of logs is pruned when it is planned
	// and the page is sorted).
	LogTransactionPage func(chain int64, hash chainquery.Hash, block *uint64, limit, offset int) (string, []any)

	// Transaction returns the statement looking up a transaction by hash,
	// in the given block when block is not nil, else the latest one, and
	// its arguments. Columns: block_number, the block's timestamp and
	// version, then BlockTransactions' columns.
	Transaction func(chain int64, hash chainquery.Hash, block *uint64) (string, []any)

	// TransactionTraceCount: chain, block number, tx_index → the number
	// of the transaction's trace rows. TransactionTraces: chain, block
	// number, tx_index, limit, offset → TipTraces' columns, in trace_pos
	// order.
	TransactionTraceCount, TransactionTraces string

	// BlockLogCount: chain, number → timestamp, version and the number of
	// the block's log rows; no row when the block is missing.
	// BlockLogPage: chain, number, limit, offset → tx_index, the
	// transaction's hash, from_addr and to_addr, then LogPage's columns, in
	// log_index order.
	BlockLogCount, BlockLogPage string

	// RangeLogCount returns the statement counting the log rows of the
	// blocks lo to hi that meet f's address and topic conditions (one
	// row, one integer), and its arguments; RangeLogPage the statement of
	// a page of them (limit, offset) and its arguments: block_number, the
	// block's timestamp, tx_index, the transaction's hash, from_addr and
	// to_addr, then LogPage's columns, in (block_number, log_index) order
	// (Filter Logs).
	RangeLogCount func(chain, lo, hi int64, f *chainquery.LogRangeFilter) (string, []any)
	RangeLogPage  func(chain, lo, hi int64, f *chainquery.LogRangeFilter, limit, offset int) (string, []any)

	// LogRowCount returns the statement adding up log_counts (log_counts.go)
	// of chain's buckets, of kind and keys: → the sum (0 for none). Each
	// bucket and key is a seek: a range of buckets would read every key of
	// them.
	LogRowCount func(chain int64, buckets []int64, kind int, keys [][]byte) (string, []any)

	// ReceiptBlockPage is ReceiptBlock and ReceiptPage in one statement:
	// chain, number, limit, offset → ReceiptBlock's columns, then
	// ReceiptPage's. No row when the block is missing or the page is empty:
	// ReceiptBlock then tells which.
	ReceiptBlockPage string

	// ReceiptBlock: chain, number → timestamp, transaction_count, version.
	// ReceiptPage: chain, number, limit, offset → tx_index, hash,
	// cumulative_gas_used, gas_used, contract_address, status,
	// effective_gas_price, in tx_index order.
	ReceiptBlock, ReceiptPage string

	// Block: chain, number → hash, parent_hash, timestamp, version,
	// logs_bloom, transactions_root, state_root, receipts_root, miner,
	// extra_data IS NOT NULL, extra_data, size, gas_limit, gas_used,
	// transaction_count, base_fee_per_gas, trace_count.
	Block string

	// BlockTransactions: chain, number → tx_index, hash, from_addr,
	// to_addr, value, gas_limit, gas_price, effective_gas_price,
	// max_fee_per_gas, max_priority_fee_per_gas, gas_used,
	// cumulative_gas_used, nonce, input, type, contract_address, status,
	// log_count, in tx_index order.
	BlockTransactions string

	// LatestBlock: chain → the highest number, NULL when none.
	// BlockHash: chain, number → hash.
	LatestBlock, BlockHash string

	// ChainExtent: chain → the lowest number, the highest number and its
	// timestamp; no row when none is stored. BlockAtOrBelow: chain, number
	// → number, timestamp of the highest block at or below it. TracesFrom:
	// chain → number, timestamp of the lowest block holding a trace, found
	// through trace_counts (the first bucket counting any, then its first
	// block with trace_count > 0) so that a chain without traces costs one
	// seek, not a walk of its blocks; no row when none holds one.
	ChainExtent, BlockAtOrBelow, TracesFrom string

	// Rewind: chain, from. Run in order, they record the versions of the
	// blocks at or above from as orphaned, then delete those blocks with
	// all their rows.
	Rewind []string

	// RecordRewrite: chain, from → appends the chain's next rewrite, of
	// heights from up, to the rewrites log. Rewrites: chain, since → the
	// highest seq after since and the lowest from_height of those rows,
	// both NULL when there is none.
	RecordRewrite, Rewrites string

	// SolanaCursor: → slot, block_time, blockhash (NULL when unknown).
	SolanaCursor string

	// TokenBalance: account, unix milliseconds, include metadata (bool) →
	// the cursor's block_time (unix milliseconds); whether the account has
	// a change at or before then; that latest change's owner, mint, amount,
	// decimals, block_time and slot (zero values when none); and, when
	// asked, its token's name and symbol (NULL when unknown). No row before
	// the cursor exists. One statement, so that no read transaction is
	// needed (on PostgreSQL a transaction costs two more round trips).
	// LatestOwner: account → the owner of its latest change that names one.
	TokenBalance, LatestOwner string

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

	// CreateAPIKey: name, hash, endpoints, created_at, rate, burst,
	// cost_rate, cost_burst, concurrency; it inserts nothing when a key of
	// that name exists. APIKeyByHash: hash, and APIKeys: nothing → name,
	// hash, endpoints, created_at, rate, burst, cost_rate, cost_burst,
	// concurrency (APIKeys ordered by name bytewise). RevokeAPIKey: name.
	// UpdateAPIKey: name, endpoints, rate, burst, cost_rate, cost_burst,
	// concurrency, each NULL to keep the key's → the updated row, as
	// APIKeyByHash's (no row when no key has that name).
	CreateAPIKey, APIKeyByHash, APIKeys, RevokeAPIKey, UpdateAPIKey string

	// The statements of history (history.go).
	HistorySQL
}

// HistorySQL is a store's statements of the history layout (history.go).
type HistorySQL struct {
	// HistoryBelow: chain → below, the boundary (no row: 0).
	// SetHistoryBelow: chain, below; it makes the row when missing.
	HistoryBelow, SetHistoryBelow string

	// FirstBlockFrom: chain, from → the lowest number stored at or above
	// from, NULL when none.
	FirstBlockFrom string

	// TipTransactions: chain, lo, hi → block_number, then BlockTransactions'
	// columns, in (block_number, tx_index) order. TipLogs: chain, lo, hi →
	// block_number, tx_index, log_index, address, topic0 to topic3, data,
	// in (block_number, log_index) order. TipTraces: chain, lo, hi →
	// block_number, tx_index, trace_address, type, call_type, from_addr,
	// to_addr, gas, gas_used, value, subtraces, input, output, error, in
	// API order. All read rows, not history.
	TipTransactions, TipLogs, TipTraces string

	// DeleteTip: chain, lo, hi. Run in order, they delete the traces, logs
	// and transactions rows of the blocks from lo to hi, leaving their
	// headers and trace_counts.
	DeleteTip []string

	// DeleteHistory: chain, from (the start of a bucket). Run in order,
	// they delete the segments, transaction hashes and log postings of the
	// blocks at or above from (the thaw clears their trace lists).
	DeleteHistory []string

	// HistorySegments: chain, lo, hi → number, kind, data of every
	// segment of the blocks from lo to hi, in number order. HistorySegment:
	// chain, number, kind → data.
	HistorySegments, HistorySegment string

	// HistoryBlocks returns the statement of the transaction and trace
	// segments of the history blocks numbers, and its arguments: number,
	// the block's timestamp and version, kind, data.
	HistoryBlocks func(chain int64, numbers []uint64) (string, []any)

	// HistoryLogBlocks is HistoryBlocks for the log segments alone
	// (Filter Logs).
	HistoryLogBlocks func(chain int64, numbers []uint64) (string, []any)

	// HistoryPostings returns the statement of the posting lists of
	// addresses in direction dir over the buckets first to last, and its
	// arguments: bucket, address, list of each row of trace_counts with a
	// list, in bucket order.
	HistoryPostings func(chain int64, dir int, addrs [][]byte, first, last int64) (string, []any)

	// LogsFrom: chain → logs_from, the lowest history block whose logs
	// are in log_postings. SetLogsFrom: chain, logs_from. LastBlockBelow:
	// chain, number → the highest stored block below number, NULL when
	// there is none.
	LogsFrom, SetLogsFrom, LastBlockBelow string

	// LogPostingCounts returns the statement of the number of logs of keys
	// of kind in each of the buckets first to last that has some, and its
	// arguments: bucket, sum(n), in bucket order.
	LogPostingCounts func(chain int64, kind int, keys [][]byte, first, last int64) (string, []any)

	// LogPostings returns the statement of the posting lists of keys of
	// kind over the buckets first to last, and its arguments: bucket, list
	// of each row of log_postings, in bucket order.
	LogPostings func(chain int64, kind int, keys [][]byte, first, last int64) (string, []any)

	// DeleteLogPostings: chain, bucket → deletes the bucket's rows of
	// log_postings (a backfill writes them anew).
	DeleteLogPostings string

	// ClearLists: chain, bucket → sets the lists of the rows of
	// trace_counts in that bucket and above to NULL.
	ClearLists string

	// HistoryTxBlocks: chain, prefix (HashPrefix) → block_number of each
	// history block holding a transaction whose hash starts so, highest
	// first.
	HistoryTxBlocks string

	// HistoryStamps returns the statement of the number, timestamp and
	// version of each stored block among numbers, and its arguments.
	HistoryStamps func(chain int64, numbers []uint64) (string, []any)
}

// UnavailableError returns the EUNAVAILABLE error of a store whose database
// cannot answer now but may shortly, joined with cause (the driver's error)
// so that logs keep it. Clients see the same text whatever the store.
func UnavailableError(cause error) error {
	return errors.Join(chainquery.Errorf(chainquery.EUNAVAILABLE, "the database is unavailable; try again shortly"), cause)
}

// storeChainID returns the key of an EVM chain's rows, its EIP-155 id. It
// returns EINVALID for any other chain.
func storeChainID(c chainquery.Chain) (int64, error) {
	id := c.ID()
	if id == 0 {
		return 0, chainquery.Errorf(chainquery.EINVALID, "chain %q is not an EVM chain", c)
	}
	return id, nil
}

// chainTx resolves chain to its key and begins a read transaction for the
// statements of one request.
func (s *SQLStore) chainTx(ctx context.Context, chain chainquery.Chain) (StoreTx, int64, error) {
	id, err := storeChainID(chain)
	if err != nil {
		return nil, 0, err
	}
	tx, err := s.ReadTx(ctx)
	return tx, id, err
}
