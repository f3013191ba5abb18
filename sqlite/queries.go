package sqlite

import (
	"strconv"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// dialect is SQLite's part of the statements (sqlstore.Dialect says what
// each takes and returns): those whose text or plan is SQLite's own. The
// rest are sqlstore's, whose $1 placeholders bind rewrites. TestQueryPlans
// checks the plans of the very statements the store runs.
var dialect = sqlstore.Dialect{
	Bind:       bind,
	InProcess:  true,
	InsertMany: `INSERT OR FAIL INTO`,
	EmptyBytes: `x''`,
	// || makes text of blobs, byte for byte; CAST keeps a blob.
	Bytes: func(expr string) string { return `CAST(` + expr + ` AS BLOB)` },
	// A batch's heights one at a time, each statement prepared at Open
	// (writeStatements).
	Heights: sqlstore.BlockSet{Number: "= $2", Bucket: func(size int) string { return "= $2 / " + strconv.Itoa(size) }},

	TraceCount:     traceCountSQL,
	TracePage:      tracePageSQL,
	TraceBucketSum: traceBucketSumSQL,
	TraceBuckets:   traceBucketsSQL,

	LogTransaction:     logTransactionSQL,
	LogTransactionPage: logTransactionPageSQL,
	Transaction:        transactionSQL,
	TransactionTraceCount: `SELECT count(*) FROM traces INDEXED BY traces_key
		WHERE chain = ? AND block_number = ? AND tx_index = ?`,
	TransactionTraces: `SELECT block_number, tx_index, trace_address, type, call_type, from_addr, to_addr, gas, gas_used,
			value, subtraces, input, output, error
		FROM traces INDEXED BY traces_key WHERE chain = ? AND block_number = ? AND tx_index = ?
		ORDER BY trace_pos LIMIT ? OFFSET ?`,
	RangeLogCount: rangeLogCountSQL,
	LogRowCount:   logRowCountSQL,
	RangeLogPage:  rangeLogPageSQL,
	// The logs walk their primary key, whose (tx_index, log_index) order is
	// log_index order; each joins its transaction by key.
	BlockLogPage: `SELECT l.tx_index, x.hash, x.from_addr, x.to_addr,
			l.log_index, l.address, l.topic0, l.topic1, l.topic2, l.topic3, l.data
		FROM logs l JOIN transactions x INDEXED BY transactions_key
			ON x.chain = l.chain AND x.block_number = l.block_number AND x.tx_index = l.tx_index
		WHERE l.chain = ? AND l.block_number = ? ORDER BY l.tx_index, l.log_index LIMIT ? OFFSET ?`,

	RowTransactions: `SELECT block_number, tx_index, hash, from_addr, to_addr, value, gas_limit, gas_price,
		effective_gas_price, max_fee_per_gas, max_priority_fee_per_gas, gas_used, cumulative_gas_used, nonce,
		input, type, contract_address, status, log_count
		FROM transactions INDEXED BY transactions_key WHERE chain = ? AND block_number BETWEEN ? AND ?
		ORDER BY block_number, tx_index`,
	RowTraces: `SELECT block_number, tx_index, trace_address, type, call_type, from_addr, to_addr, gas, gas_used,
		value, subtraces, input, output, error
		FROM traces INDEXED BY traces_key WHERE chain = ? AND block_number BETWEEN ? AND ?
		ORDER BY block_number, tx_index, trace_pos`,
	HistoryBlocks:     historyBlocksSQL("0, 2"),
	HistoryLogBlocks:  historyBlocksSQL("1"),
	HistoryStamps:     historyStampsSQL,
	LogPostingCounts:  logPostingCountsSQL,
	LogPostings:       logPostingsSQL,
	LogTopics:         logTopicsSQL,
	LogTaggedPostings: logTaggedPostingsSQL,

	// The cursor with the account's latest change at or before the time,
	// or the cursor alone (found = 0); no row without a cursor. Not the
	// cursor LEFT JOINed to a LIMIT 1 subquery: SQLite materializes such a
	// subquery into a temporary table on every execution, which took a
	// third of the statement's time (docs/benchmarks.md, Token Balance).
	TokenBalance: `SELECT * FROM (
			SELECT c.block_time, 1, b.owner, b.mint, b.amount, b.decimals, b.block_time, b.slot, k.name, k.symbol
			FROM solana_cursor c JOIN token_balances b LEFT JOIN tokens k ON ?3 AND k.mint = b.mint
			WHERE c.id = 1 AND b.account = ?1 AND b.block_time <= ?2
			ORDER BY b.block_time DESC, b.slot DESC, b.tx_index DESC LIMIT 1)
		UNION ALL SELECT block_time, 0, NULL, x'', 0, 0, 0, 0, NULL, NULL FROM solana_cursor WHERE id = 1
		LIMIT 1`,
	// As TokenBalance: the change joined to the cursor, or the cursor alone.
	SOLBalance: `SELECT * FROM (
			SELECT c.sol_from, c.sol_from_time, c.sol_through, c.sol_through_time, 1, b.block_time, b.slot, b.lamports
			FROM solana_cursor c JOIN sol_balances b
			WHERE c.id = 1 AND b.account = ?1 AND b.block_time <= ?2 AND b.slot >= c.sol_from
			ORDER BY b.block_time DESC, b.slot DESC LIMIT 1)
		UNION ALL SELECT sol_from, sol_from_time, sol_through, sol_through_time, 0, 0, 0, 0 FROM solana_cursor WHERE id = 1
		LIMIT 1`,
	// The owner's accounts are one range of token_balances_owner (each
	// account once, in account order); each is the owner's when its
	// latest change naming an owner, at or before then, names this one.
	OwnerBalanceCount: `SELECT count(*) FROM (` + qOwnerAccounts + `)`,
	OwnerBalancePage: `SELECT o.total, o.account, b.mint, b.amount, b.decimals, b.block_time, b.slot, k.name, k.symbol
		FROM (SELECT account, count(*) OVER () AS total FROM (` + qOwnerAccounts + `) a
			ORDER BY account LIMIT ?4 OFFSET ?5) o
		JOIN token_balances b ON b.account = o.account AND (b.block_time, b.slot, b.tx_index) = (
			SELECT block_time, slot, tx_index FROM token_balances WHERE account = o.account AND block_time <= ?2
			ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1)
		LEFT JOIN tokens k ON ?3 AND k.mint = b.mint
		ORDER BY o.account`,
}

// qOwnerAccounts selects the accounts owner ?1 owns at unix milliseconds
// ?2 (sqlstore.Dialect.OwnerBalanceCount), in account order: each
// account that a change names the owner of is found with one seek of
// token_balances_owner past the one before (a skip scan; a range scan
// would read every change of the owner's accounts, 80,000 for a busy
// owner of the benchmark's), then kept if its latest change naming an
// owner, at or before then, names this one.
const qOwnerAccounts = `WITH RECURSIVE a (account) AS (
			SELECT (SELECT account FROM token_balances INDEXED BY token_balances_owner WHERE owner = ?1 ORDER BY account LIMIT 1)
			UNION ALL
			SELECT (SELECT account FROM token_balances INDEXED BY token_balances_owner WHERE owner = ?1 AND account > a.account
				ORDER BY account LIMIT 1) FROM a WHERE a.account IS NOT NULL)
		SELECT a.account FROM a WHERE a.account IS NOT NULL
			AND ?1 = (SELECT owner FROM token_balances WHERE account = a.account AND block_time <= ?2 AND owner IS NOT NULL
				ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1)`

// A hash names one transaction; should a chain ever repeat one, the latest
// block wins unless the caller names the block (?3, or NULL). The index is
// named because the ORDER BY would otherwise tempt the planner into walking
// all of the chain's transactions in key order.
const qLogTransaction = `SELECT x.block_number, x.tx_index, x.from_addr, x.to_addr, x.log_count, b.timestamp
		FROM transactions x INDEXED BY transactions_hash
		JOIN blocks b ON b.chain = x.chain AND b.number = x.block_number
		WHERE x.chain = ?1 AND x.hash = ?2 AND (?3 IS NULL OR x.block_number = ?3)
		ORDER BY x.block_number DESC LIMIT 1`

// logTransactionSQL uses the one statement for both lookups.
func logTransactionSQL(chain int64, hash chainquery.Hash, block *uint64) (string, []any) {
	var n any
	if block != nil {
		n = int64(*block)
	}
	return qLogTransaction, []any{chain, hash[:], n}
}

// rangeLogWhere is the WHERE clause of Filter Logs' statements on rows:
// the range, searched by the primary key, then each condition's values
// (sqlstore.LogConditions) in an IN, tested on the range's rows.
func rangeLogWhere(chain, lo, hi int64, f *chainquery.LogRangeFilter) (string, []any) {
	where := ` WHERE l.chain = ? AND l.block_number >= ? AND l.block_number <= ?`
	args := []any{chain, lo, hi}
	columns, values := sqlstore.LogConditions(f)
	for i, c := range columns {
		where += ` AND l.` + c + ` IN (` + placeholders(len(values[i])) + `)`
		for _, v := range values[i] {
			args = append(args, v)
		}
	}
	return where, args
}

func logRowCountSQL(chain int64, buckets []int64, kind int, keys [][]byte) (string, []any) {
	args := []any{chain}
	for _, b := range buckets {
		args = append(args, b)
	}
	args = append(args, kind)
	for _, k := range keys {
		args = append(args, k)
	}
	return `SELECT coalesce(sum(n), 0) FROM log_counts WHERE chain = ? AND bucket IN (` + placeholders(len(buckets)) +
		`) AND kind = ? AND key IN (` + placeholders(len(keys)) + `)`, args
}

func rangeLogCountSQL(chain, lo, hi int64, f *chainquery.LogRangeFilter) (string, []any) {
	where, args := rangeLogWhere(chain, lo, hi, f)
	return `SELECT count(*) FROM logs l` + logIndex(f) + where, args
}

// logIndex is the index a range of logs is read through: by address or by
// topic0 when the filter names one (migration 0012), else the primary key.
// Without statistics SQLite takes the primary key's range of blocks over
// either, and reads every log of the range.
func logIndex(f *chainquery.LogRangeFilter) string {
	switch {
	case len(f.Addresses) > 0:
		return ` INDEXED BY logs_address`
	case len(f.Topics[0]) > 0:
		return ` INDEXED BY logs_topic0`
	}
	return ""
}

// rangeLogPageSQL reads the page's logs in API order, each joined to its
// transaction and block by key (CROSS JOIN: the logs drive, where the
// planner without statistics drove two addresses' page from the range's
// transactions).
func rangeLogPageSQL(chain, lo, hi int64, f *chainquery.LogRangeFilter, limit, offset int) (string, []any) {
	where, args := rangeLogWhere(chain, lo, hi, f)
	order := `l.block_number, l.tx_index, l.log_index` // the primary key's, the same
	if logIndex(f) != "" {
		order = `l.block_number, l.log_index` // the index's
	}
	return `SELECT l.block_number, b.timestamp, l.tx_index, x.hash, x.from_addr, x.to_addr,
			l.log_index, l.address, l.topic0, l.topic1, l.topic2, l.topic3, l.data
		FROM logs l` + logIndex(f) + ` CROSS JOIN transactions x INDEXED BY transactions_key
			ON x.chain = l.chain AND x.block_number = l.block_number AND x.tx_index = l.tx_index
		CROSS JOIN blocks b ON b.chain = l.chain AND b.number = l.block_number` + where + `
		ORDER BY ` + order + ` LIMIT ? OFFSET ?`, append(args, limit, offset)
}

// transactionSQL looks a transaction up as qLogTransaction does, with all
// of its columns.
func transactionSQL(chain int64, hash chainquery.Hash, block *uint64) (string, []any) {
	_, args := logTransactionSQL(chain, hash, block)
	return `SELECT x.block_number, b.timestamp, b.version, x.tx_index, x.hash, x.from_addr, x.to_addr, x.value,
			x.gas_limit, x.gas_price, x.effective_gas_price, x.max_fee_per_gas, x.max_priority_fee_per_gas,
			x.gas_used, x.cumulative_gas_used, x.nonce, x.input, x.type, x.contract_address, x.status, x.log_count
		FROM transactions x INDEXED BY transactions_hash
		JOIN blocks b ON b.chain = x.chain AND b.number = x.block_number
		WHERE x.chain = ?1 AND x.hash = ?2 AND (?3 IS NULL OR x.block_number = ?3)
		ORDER BY x.block_number DESC LIMIT 1`, args
}

// logTransactionPageSQL joins the transaction's lookup to its page of logs.
// The logs are the outer loop, on an equality with the one transaction
// found, so that they come in primary key order: with the transaction
// outside, SQLite sorts all of its logs for each page.
func logTransactionPageSQL(chain int64, hash chainquery.Hash, block *uint64, limit, offset int) (string, []any) {
	_, args := logTransactionSQL(chain, hash, block)
	return `WITH x AS MATERIALIZED (` + qLogTransaction + `)
		SELECT x.block_number, x.tx_index, x.from_addr, x.to_addr, x.log_count, x.timestamp,
			l.log_index, l.address, l.topic0, l.topic1, l.topic2, l.topic3, l.data
		FROM logs l CROSS JOIN x
		WHERE l.chain = ?1 AND (l.block_number, l.tx_index) = (SELECT block_number, tx_index FROM x)
		ORDER BY l.log_index LIMIT ?4 OFFSET ?5`, append(args, limit, offset)
}

// The bookkeeping of migrations (sqlstore.Migrate).
const (
	qCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`
	qRecordMigration  = `INSERT INTO schema_migrations (name, applied_at) VALUES (?, CAST(unixepoch('subsec') * 1000 AS INTEGER))`
)

// Dialect returns the store's own statements, for the tools that run them
// through another driver: internal/driverbench compares the cgo driver
// with the one the store uses on these very texts.
func Dialect() sqlstore.Dialect { return dialect }
