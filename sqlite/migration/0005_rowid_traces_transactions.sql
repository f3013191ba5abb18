-- traces and transactions become rowid tables. As WITHOUT ROWID tables their
-- whole rows, inputs and outputs included, were the b-tree's keys: a row
-- longer than about 1 KB spills to overflow pages, and each comparison of a
-- seek that lands on such a row reads all of its overflow chain (on Filter
-- Traces over Polygon-shaped blocks, 29% of serve's CPU went to those seeks
-- and 13% to reading payloads). Keyed by an integer rowid instead, a seek
-- compares integers; the API order is a unique index of integers, and the
-- address and hash indexes lead to a row by its rowid. The blobs go last, so
-- that the small columns a page reads stay on the row's own page.

CREATE TABLE traces_rowid (
	chain         INTEGER NOT NULL,
	block_number  INTEGER NOT NULL,
	tx_index      INTEGER NOT NULL,
	trace_pos     INTEGER NOT NULL,
	trace_address TEXT    NOT NULL,
	type          INTEGER NOT NULL, -- 0 call, 1 create, 2 suicide
	call_type     INTEGER NOT NULL, -- 0 call, 1 delegatecall, 2 staticcall, 3 create
	from_addr     BLOB    NOT NULL,
	to_addr       BLOB,
	gas           INTEGER NOT NULL,
	gas_used      INTEGER NOT NULL,
	value         NOT NULL,
	subtraces     INTEGER NOT NULL,
	error         TEXT,
	input         BLOB    NOT NULL,
	output        BLOB    NOT NULL
);
INSERT INTO traces_rowid (chain, block_number, tx_index, trace_pos, trace_address, type, call_type,
		from_addr, to_addr, gas, gas_used, value, subtraces, error, input, output)
	SELECT chain, block_number, tx_index, trace_pos, trace_address, type, call_type,
		from_addr, to_addr, gas, gas_used, value, subtraces, error, input, output
	FROM traces ORDER BY chain, block_number, tx_index, trace_pos;
DROP TABLE traces;
ALTER TABLE traces_rowid RENAME TO traces;
-- trace_pos is the trace's rank in depth-first pre-order within its
-- transaction, so this key is the API's order.
CREATE UNIQUE INDEX traces_key ON traces (chain, block_number, tx_index, trace_pos);
-- Address filters walk one of these per address in API order (each entry
-- ends with the row's rowid); each carries the other side's address, so that
-- from+to filters and their counts never leave the index.
CREATE INDEX traces_from ON traces (chain, from_addr, block_number, tx_index, trace_pos, to_addr);
CREATE INDEX traces_to ON traces (chain, to_addr, block_number, tx_index, trace_pos, from_addr);

-- A transaction and its receipt, one row.
CREATE TABLE transactions_rowid (
	chain                    INTEGER NOT NULL,
	block_number             INTEGER NOT NULL,
	tx_index                 INTEGER NOT NULL,
	hash                     BLOB    NOT NULL,
	from_addr                BLOB    NOT NULL,
	to_addr                  BLOB,
	value                    NOT NULL,
	gas_limit                INTEGER NOT NULL,
	gas_price,
	effective_gas_price,
	max_fee_per_gas,
	max_priority_fee_per_gas,
	gas_used                 INTEGER NOT NULL,
	cumulative_gas_used      INTEGER NOT NULL,
	nonce                    INTEGER NOT NULL,
	type                     INTEGER NOT NULL,
	contract_address         BLOB,
	status                   INTEGER NOT NULL,
	log_count                INTEGER NOT NULL, -- keeps Get Transaction Logs counts off the logs table
	input                    BLOB    NOT NULL
);
INSERT INTO transactions_rowid (chain, block_number, tx_index, hash, from_addr, to_addr, value, gas_limit,
		gas_price, effective_gas_price, max_fee_per_gas, max_priority_fee_per_gas, gas_used,
		cumulative_gas_used, nonce, type, contract_address, status, log_count, input)
	SELECT chain, block_number, tx_index, hash, from_addr, to_addr, value, gas_limit,
		gas_price, effective_gas_price, max_fee_per_gas, max_priority_fee_per_gas, gas_used,
		cumulative_gas_used, nonce, type, contract_address, status, log_count, input
	FROM transactions ORDER BY chain, block_number, tx_index;
DROP TABLE transactions;
ALTER TABLE transactions_rowid RENAME TO transactions;
CREATE UNIQUE INDEX transactions_key ON transactions (chain, block_number, tx_index);
-- A hash's transactions in block order (the latest block wins, queries.go).
CREATE INDEX transactions_hash ON transactions (chain, hash, block_number);
