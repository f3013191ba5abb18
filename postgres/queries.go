package postgres

import (
	"fmt"
	"strconv"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// dialect is PostgreSQL's part of the statements (sqlstore.Dialect says
// what each takes and returns): those whose text or plan is its own. The
// rest are sqlstore's, in PostgreSQL's placeholders already.
// TestQueryPlans checks the plans of the very statements the store runs;
// pgx prepares each once per connection.
var dialect = sqlstore.Dialect{
	InsertMany: `INSERT INTO`,
	EmptyBytes: `'\x'::bytea`,
	Bytes:      func(expr string) string { return expr },
	// A batch's heights in one array, each statement run once.
	Heights: sqlstore.BlockSet{Number: "= ANY($2)", Bucket: func(size int) string {
		return "IN (SELECT h / " + strconv.Itoa(size) + " FROM unnest($2::bigint[]) h)"
	}},
	HeightArray: true,

	TraceCount:     traceCountSQL,
	TracePage:      tracePageSQL,
	TraceBucketSum: traceBucketSumSQL,
	TraceBuckets:   traceBucketsSQL,
	NarrowWalks:    true,

	LogTransaction: logTransactionSQL,
	// LogTransactionPage is nil: see sqlstore.Dialect.
	Transaction:           transactionSQL,
	TransactionTraceCount: `SELECT count(*) FROM traces WHERE chain = $1 AND block_number = $2 AND tx_index = $3`,
	TransactionTraces: `SELECT block_number, tx_index, trace_address, type, call_type, from_addr, to_addr, gas, gas_used,
			value, subtraces, input, output, error
		FROM traces WHERE chain = $1 AND block_number = $2 AND tx_index = $3
		ORDER BY trace_pos LIMIT $4 OFFSET $5`,
	RangeLogCount: rangeLogCountSQL,
	LogRowCount: func(chain int64, buckets []int64, kind int, keys [][]byte) (string, []any) {
		// A search per bucket and key, each a LATERAL subquery that LIMIT
		// keeps from being flattened (as logPostingsFrom): without
		// statistics the planner filtered ANY conditions over the buckets'
		// every key.
		return `SELECT coalesce(sum(c.n), 0)::bigint FROM unnest($2::bigint[]) AS b (bucket) CROSS JOIN unnest($4::bytea[]) AS k (key)
			CROSS JOIN LATERAL (SELECT n FROM log_counts WHERE chain = $1 AND bucket = b.bucket AND kind = $3 AND key = k.key LIMIT 1) c`,
			[]any{chain, buckets, kind, keys}
	},
	RangeLogPage: rangeLogPageSQL,
	// Each log of the page looks its transaction up by key (LATERAL, LIMIT
	// 1: not pulled up into a join the planner could make a merge of all
	// of the block's transactions).
	BlockLogPage: `SELECT l.tx_index, x.hash, x.from_addr, x.to_addr,
			l.log_index, l.address, l.topic0, l.topic1, l.topic2, l.topic3, l.data
		FROM logs l CROSS JOIN LATERAL (SELECT hash, from_addr, to_addr FROM transactions
			WHERE chain = $1 AND block_number = $2 AND tx_index = l.tx_index LIMIT 1) x
		WHERE l.chain = $1 AND l.block_number = $2 ORDER BY l.tx_index, l.log_index LIMIT $3 OFFSET $4`,

	RowTransactions: `SELECT block_number, tx_index, hash, from_addr, to_addr, value, gas_limit, gas_price,
		effective_gas_price, max_fee_per_gas, max_priority_fee_per_gas, gas_used, cumulative_gas_used, nonce,
		input, type, contract_address, status, log_count
		FROM transactions WHERE chain = $1 AND block_number BETWEEN $2 AND $3 ORDER BY block_number, tx_index`,
	RowTraces: `SELECT block_number, tx_index, trace_address, type, call_type, from_addr, to_addr, gas, gas_used,
		value, subtraces, input, output, error
		FROM traces WHERE chain = $1 AND block_number BETWEEN $2 AND $3 ORDER BY block_number, tx_index, trace_pos`,
	HistoryBlocks:     historyBlocksSQL("0, 2"),
	HistoryLogBlocks:  historyBlocksSQL("1"),
	HistoryStamps:     historyStampsSQL,
	LogPostingCounts:  logPostingCountsSQL,
	LogPostings:       logPostingsSQL,
	LogPostingsPrefix: logPostingsPrefixSQL,
	LogTopics:         logTopicsSQL,
	LogTaggedPostings: logTaggedPostingsSQL,

	TokenBalance: `SELECT c.block_time, b.mint IS NOT NULL, b.owner, coalesce(b.mint, '\x'::bytea), coalesce(b.amount, 0),
			coalesce(b.decimals, 0), coalesce(b.block_time, 0), coalesce(b.slot, 0), k.name, k.symbol
		FROM solana_cursor c
		LEFT JOIN LATERAL (SELECT owner, mint, amount, decimals, block_time, slot FROM token_balances
			WHERE account = $1 AND block_time <= $2 ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1) b ON true
		LEFT JOIN LATERAL (SELECT name, symbol FROM tokens WHERE $3::boolean AND mint = b.mint) k ON true
		WHERE c.id = 1`,
	SOLBalance: `SELECT c.sol_from, c.sol_from_time, c.sol_through, c.sol_through_time, b.slot IS NOT NULL,
			coalesce(b.block_time, 0), coalesce(b.slot, 0), coalesce(b.lamports, 0)
		FROM solana_cursor c
		LEFT JOIN LATERAL (SELECT block_time, slot, lamports FROM sol_balances
			WHERE account = $1 AND block_time <= $2 AND slot >= c.sol_from ORDER BY block_time DESC, slot DESC LIMIT 1) b ON true
		WHERE c.id = 1`,
	// As in SQLite's: one range of token_balances_owner, then each
	// account's latest change naming an owner, and the page's balances.
	OwnerBalanceCount: `SELECT count(*) FROM (` + qOwnerAccounts + `) o`,
	OwnerBalancePage: `SELECT o.total, o.account, b.mint, b.amount, b.decimals, b.block_time, b.slot, k.name, k.symbol
		FROM (SELECT account, count(*) OVER () AS total FROM (` + qOwnerAccounts + `) a
			ORDER BY account LIMIT $4 OFFSET $5) o
		CROSS JOIN LATERAL (SELECT mint, amount, decimals, block_time, slot FROM token_balances
			WHERE account = o.account AND block_time <= $2 ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1) b
		LEFT JOIN LATERAL (SELECT name, symbol FROM tokens WHERE $3::boolean AND mint = b.mint) k ON true
		ORDER BY o.account`,
}

// qOwnerAccounts selects the accounts owner $1 owns at unix milliseconds
// $2 (sqlstore.Dialect.OwnerBalanceCount), in account order: each
// account that a change names the owner of is found with one seek of
// token_balances_owner past the one before (a skip scan; a range scan
// would read every change of the owner's accounts, 80,000 for a busy
// owner of the benchmark's), then kept if its latest change naming an
// owner, at or before then, names this one.
const qOwnerAccounts = `WITH RECURSIVE a (account) AS (
			SELECT (SELECT account FROM token_balances WHERE owner = $1 ORDER BY account LIMIT 1)
			UNION ALL
			SELECT (SELECT account FROM token_balances WHERE owner = $1 AND account > a.account
				ORDER BY account LIMIT 1) FROM a WHERE a.account IS NOT NULL)
		SELECT a.account FROM a WHERE a.account IS NOT NULL
			AND $1 = (SELECT owner FROM token_balances WHERE account = a.account AND block_time <= $2 AND owner IS NOT NULL
				ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1)`

// A hash names one transaction; should a chain ever repeat one, the latest
// block wins unless the caller names the block. The two forms are two
// statements, so that neither plan has to allow for the other. The latest
// one is found first, then its block by primary key in a LATERAL subquery
// (as in tracePageSQL): as a join, a planner without statistics walked the
// chain's blocks from the top to reach the transaction's.
const (
	qLogTransaction = `SELECT x.block_number, x.tx_index, x.from_addr, x.to_addr, x.log_count, b.timestamp
		FROM (SELECT block_number, tx_index, from_addr, to_addr, log_count FROM transactions
			WHERE chain = $1 AND hash = $2 ORDER BY block_number DESC LIMIT 1) x
		CROSS JOIN LATERAL (SELECT timestamp FROM blocks WHERE chain = $1 AND number = x.block_number LIMIT 1) b`
	qLogTransactionInBlock = `SELECT x.block_number, x.tx_index, x.from_addr, x.to_addr, x.log_count, b.timestamp
		FROM transactions x
		JOIN blocks b ON b.chain = x.chain AND b.number = x.block_number
		WHERE x.chain = $1 AND x.hash = $2 AND x.block_number = $3 LIMIT 1`
)

// rangeLogWhere is the WHERE clause of Filter Logs' statements on rows:
// the range, searched by the primary key, then each condition's values
// (sqlstore.LogConditions) as an array, tested on the range's rows.
func rangeLogWhere(chain, lo, hi int64, f *chainquery.LogRangeFilter) (string, []any) {
	where := ` WHERE l.chain = $1 AND l.block_number >= $2 AND l.block_number <= $3`
	args := []any{chain, lo, hi}
	columns, values := sqlstore.LogConditions(f)
	for i, c := range columns {
		args = append(args, values[i])
		where += fmt.Sprintf(` AND l.%s = ANY($%d::bytea[])`, c, len(args))
	}
	return where, args
}

func rangeLogCountSQL(chain, lo, hi int64, f *chainquery.LogRangeFilter) (string, []any) {
	where, args := rangeLogWhere(chain, lo, hi, f)
	return `SELECT count(*) FROM logs l` + where, args
}

// rangeLogPageSQL reads the page's logs in primary key order, each looking
// its transaction and block up by key (LATERAL, LIMIT 1, as BlockLogPage).
func rangeLogPageSQL(chain, lo, hi int64, f *chainquery.LogRangeFilter, limit, offset int) (string, []any) {
	where, args := rangeLogWhere(chain, lo, hi, f)
	n := len(args)
	return fmt.Sprintf(`SELECT l.block_number, b.timestamp, l.tx_index, x.hash, x.from_addr, x.to_addr,
			l.log_index, l.address, l.topic0, l.topic1, l.topic2, l.topic3, l.data
		FROM logs l CROSS JOIN LATERAL (SELECT hash, from_addr, to_addr FROM transactions
			WHERE chain = $1 AND block_number = l.block_number AND tx_index = l.tx_index LIMIT 1) x
		CROSS JOIN LATERAL (SELECT timestamp FROM blocks WHERE chain = $1 AND number = l.block_number LIMIT 1) b`+where+`
		ORDER BY l.block_number, l.tx_index, l.log_index LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, limit, offset)
}

// The columns of Transaction: the block's, then BlockTransactions'.
const qTransactionColumns = `x.block_number, b.timestamp, b.version, x.tx_index, x.hash, x.from_addr, x.to_addr,
	x.value, x.gas_limit, x.gas_price, x.effective_gas_price, x.max_fee_per_gas, x.max_priority_fee_per_gas,
	x.gas_used, x.cumulative_gas_used, x.nonce, x.input, x.type, x.contract_address, x.status, x.log_count`

// transactionSQL looks a transaction up as logTransactionSQL does (the
// same two forms and plans), with all of its columns.
func transactionSQL(chain int64, hash chainquery.Hash, block *uint64) (string, []any) {
	if block != nil {
		return `SELECT ` + qTransactionColumns + ` FROM transactions x
			JOIN blocks b ON b.chain = x.chain AND b.number = x.block_number
			WHERE x.chain = $1 AND x.hash = $2 AND x.block_number = $3 LIMIT 1`, []any{chain, hash[:], int64(*block)}
	}
	return `SELECT ` + qTransactionColumns + ` FROM (SELECT * FROM transactions
			WHERE chain = $1 AND hash = $2 ORDER BY block_number DESC LIMIT 1) x
		CROSS JOIN LATERAL (SELECT timestamp, version FROM blocks WHERE chain = $1 AND number = x.block_number LIMIT 1) b`,
		[]any{chain, hash[:]}
}

func logTransactionSQL(chain int64, hash chainquery.Hash, block *uint64) (string, []any) {
	if block != nil {
		return qLogTransactionInBlock, []any{chain, hash[:], int64(*block)}
	}
	return qLogTransaction, []any{chain, hash[:]}
}

// The bookkeeping of migrations (sqlstore.Migrate).
const (
	qCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
		name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`
	qRecordMigration = `INSERT INTO schema_migrations (name) VALUES ($1)`
)
