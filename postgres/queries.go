package postgres

// The reads the API makes, named so that TestQueryPlans checks the very
// statements the store runs. They are the SQLite store's statements
// (sqlite/queries.go) in PostgreSQL's dialect; pgx prepares each once per
// connection.
const (
	qFirstBlockAtOrAfter = `SELECT number FROM blocks WHERE chain = $1 AND timestamp >= $2 ORDER BY timestamp, number LIMIT 1`
	qLastBlockAtOrBefore = `SELECT number FROM blocks WHERE chain = $1 AND timestamp <= $2 ORDER BY timestamp DESC, number DESC LIMIT 1`

	// A hash names one transaction; should a chain ever repeat one, the
	// latest block wins unless the caller names the block ($3, or NULL).
	// The two forms are two statements, so that neither plan has to allow
	// for the other.
	qLogTransaction = `SELECT x.block_number, x.tx_index, x.from_addr, x.to_addr, x.log_count, b.timestamp
		FROM transactions x
		JOIN blocks b ON b.chain = x.chain AND b.number = x.block_number
		WHERE x.chain = $1 AND x.hash = $2
		ORDER BY x.block_number DESC LIMIT 1`
	qLogTransactionInBlock = `SELECT x.block_number, x.tx_index, x.from_addr, x.to_addr, x.log_count, b.timestamp
		FROM transactions x
		JOIN blocks b ON b.chain = x.chain AND b.number = x.block_number
		WHERE x.chain = $1 AND x.hash = $2 AND x.block_number = $3 LIMIT 1`
	qLogPage = `SELECT log_index, address, topic0, topic1, topic2, topic3, data
		FROM logs WHERE chain = $1 AND block_number = $2 AND tx_index = $3 ORDER BY log_index LIMIT $4 OFFSET $5`

	qReceiptBlock = `SELECT timestamp, transaction_count FROM blocks WHERE chain = $1 AND number = $2`
	qReceiptPage  = `SELECT tx_index, hash, cumulative_gas_used, gas_used, contract_address, status, effective_gas_price
		FROM transactions WHERE chain = $1 AND block_number = $2 ORDER BY tx_index LIMIT $3 OFFSET $4`

	qBlock = `SELECT hash, parent_hash, timestamp, version, logs_bloom, transactions_root,
		state_root, receipts_root, miner, extra_data IS NOT NULL, extra_data, size, gas_limit, gas_used,
		transaction_count, base_fee_per_gas, trace_count
		FROM blocks WHERE chain = $1 AND number = $2`
	qBlockTransactions = `SELECT tx_index, hash, from_addr, to_addr, value, gas_limit, gas_price,
		effective_gas_price, max_fee_per_gas, max_priority_fee_per_gas, gas_used, cumulative_gas_used, nonce,
		input, type, contract_address, status, log_count
		FROM transactions WHERE chain = $1 AND block_number = $2 ORDER BY tx_index`
	qLatestBlock = `SELECT max(number) FROM blocks WHERE chain = $1`
	qBlockHash   = `SELECT hash FROM blocks WHERE chain = $1 AND number = $2`

	qSolanaCursor = `SELECT block_time FROM solana_cursor WHERE id = 1`
	qTokenBalance = `SELECT owner, mint, amount, decimals, block_time, slot FROM token_balances
		WHERE account = $1 AND block_time <= $2 ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1`
	qToken = `SELECT name, symbol FROM tokens WHERE mint = $1`

	qAPIKeyByHash = `SELECT name, hash, endpoints, created_at FROM api_keys WHERE hash = $1`
	// Names sort bytewise, as in SQLite, whatever the database's collation.
	qAPIKeys = `SELECT name, hash, endpoints, created_at FROM api_keys ORDER BY name COLLATE "C"`
)
