package sqlite

// The reads the API makes, named so that TestQueryPlans checks the very
// statements the store runs.
const (
	qFirstBlockAtOrAfter = `SELECT number FROM blocks WHERE chain = ? AND timestamp >= ? ORDER BY timestamp, number LIMIT 1`
	qLastBlockAtOrBefore = `SELECT number FROM blocks WHERE chain = ? AND timestamp <= ? ORDER BY timestamp DESC, number DESC LIMIT 1`

	// A hash names one transaction; should a chain ever repeat one, the
	// latest block wins unless the caller names the block (?3, or NULL).
	// The index is named because the ORDER BY would otherwise tempt the
	// planner into walking all of the chain's transactions in key order.
	qLogTransaction = `SELECT x.block_number, x.tx_index, x.from_addr, x.to_addr, x.log_count, b.timestamp
		FROM transactions x INDEXED BY transactions_hash
		JOIN blocks b ON b.chain = x.chain AND b.number = x.block_number
		WHERE x.chain = ?1 AND x.hash = ?2 AND (?3 IS NULL OR x.block_number = ?3)
		ORDER BY x.block_number DESC LIMIT 1`
	qLogPage = `SELECT log_index, address, topic0, topic1, topic2, topic3, data
		FROM logs WHERE chain = ? AND block_number = ? AND tx_index = ? ORDER BY log_index LIMIT ? OFFSET ?`

	qReceiptBlock = `SELECT timestamp, transaction_count FROM blocks WHERE chain = ? AND number = ?`
	qReceiptPage  = `SELECT tx_index, hash, cumulative_gas_used, gas_used, contract_address, status, effective_gas_price
		FROM transactions WHERE chain = ? AND block_number = ? ORDER BY tx_index LIMIT ? OFFSET ?`

	qBlock = `SELECT hash, parent_hash, timestamp, version, logs_bloom, transactions_root,
		state_root, receipts_root, miner, extra_data IS NOT NULL, extra_data, size, gas_limit, gas_used,
		transaction_count, base_fee_per_gas, trace_count
		FROM blocks WHERE chain = ? AND number = ?`
	qBlockTransactions = `SELECT tx_index, hash, from_addr, to_addr, value, gas_limit, gas_price,
		effective_gas_price, max_fee_per_gas, max_priority_fee_per_gas, gas_used, cumulative_gas_used, nonce,
		input, type, contract_address, status, log_count
		FROM transactions WHERE chain = ? AND block_number = ? ORDER BY tx_index`
	qLatestBlock = `SELECT max(number) FROM blocks WHERE chain = ?`

	qTokenBalance = `SELECT owner, mint, amount, decimals, block_time, slot FROM token_balances
		WHERE account = ? AND block_time <= ? ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1`

	// The primary key walked backwards from the account's latest change.
	qLatestOwner = `SELECT owner FROM token_balances WHERE account = ? AND owner IS NOT NULL
		ORDER BY block_time DESC, slot DESC, tx_index DESC LIMIT 1`

	qAPIKeyByHash = `SELECT name, hash, endpoints, created_at FROM api_keys WHERE hash = ?`
)
