-- Schema of the embedded store. Hashes and addresses are 32- and 20-byte
-- blobs; wei amounts are integers when they fit in 64 bits and decimal text
-- otherwise (columns without a declared type keep either as given).
-- Tables are WITHOUT ROWID and keyed in the order the API reads them, so that
-- every page query is one range scan of the primary key or of one index.

CREATE TABLE blocks (
	chain             INTEGER NOT NULL, -- EIP-155 chain id
	number            INTEGER NOT NULL,
	hash              BLOB    NOT NULL,
	parent_hash       BLOB    NOT NULL,
	timestamp         INTEGER NOT NULL,
	version           INTEGER NOT NULL,
	logs_bloom        BLOB,             -- NULL where the chain does not supply one
	transactions_root BLOB    NOT NULL,
	state_root        BLOB    NOT NULL,
	receipts_root     BLOB    NOT NULL,
	miner             BLOB    NOT NULL,
	extra_data        BLOB,             -- NULL where the chain does not supply it
	size              INTEGER NOT NULL,
	gas_limit         INTEGER NOT NULL,
	gas_used          INTEGER NOT NULL,
	transaction_count INTEGER NOT NULL,
	base_fee_per_gas,                   -- NULL before EIP-1559
	trace_count       INTEGER NOT NULL, -- keeps unfiltered Filter Traces counts off the traces table
	PRIMARY KEY (chain, number)
) WITHOUT ROWID;

-- Datetime ranges become block ranges through this index.
CREATE INDEX blocks_timestamp ON blocks (chain, timestamp, number);

-- A transaction and its receipt, one row.
CREATE TABLE transactions (
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
	input                    BLOB    NOT NULL,
	type                     INTEGER NOT NULL,
	contract_address         BLOB,
	status                   INTEGER NOT NULL,
	log_count                INTEGER NOT NULL, -- keeps Get Transaction Logs counts off the logs table
	PRIMARY KEY (chain, block_number, tx_index)
) WITHOUT ROWID;

CREATE INDEX transactions_hash ON transactions (chain, hash);

-- log_index grows with tx_index inside a block, so this key is also
-- log_index order within one transaction.
CREATE TABLE logs (
	chain        INTEGER NOT NULL,
	block_number INTEGER NOT NULL,
	tx_index     INTEGER NOT NULL,
	log_index    INTEGER NOT NULL,
	address      BLOB    NOT NULL,
	topic0       BLOB,
	topic1       BLOB,
	topic2       BLOB,
	topic3       BLOB,
	data         BLOB    NOT NULL,
	PRIMARY KEY (chain, block_number, tx_index, log_index)
) WITHOUT ROWID;

-- trace_pos is the trace's rank in depth-first pre-order within its
-- transaction, so the primary key is the API's order.
CREATE TABLE traces (
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
	input         BLOB    NOT NULL,
	output        BLOB    NOT NULL,
	error         TEXT,
	PRIMARY KEY (chain, block_number, tx_index, trace_pos)
) WITHOUT ROWID;

-- Address filters walk one of these per address in API order, so a page
-- reads at most offset+limit entries per address. traces_from carries
-- to_addr so that from+to filters and their counts never leave the index.
CREATE INDEX traces_from ON traces (chain, from_addr, block_number, tx_index, trace_pos, to_addr);
CREATE INDEX traces_to ON traces (chain, to_addr, block_number, tx_index, trace_pos);

-- Versions of blocks removed by a reorg rewind and not yet written again, so
-- that a block written later at that height still gets a higher version.
CREATE TABLE orphaned_blocks (
	chain   INTEGER NOT NULL,
	number  INTEGER NOT NULL,
	version INTEGER NOT NULL,
	PRIMARY KEY (chain, number)
) WITHOUT ROWID;

-- Solana token account balances after each change. Keyed so that "latest
-- change at or before T" is one backward seek.
CREATE TABLE token_balances (
	account    BLOB    NOT NULL,
	block_time INTEGER NOT NULL, -- unix milliseconds
	slot       INTEGER NOT NULL,
	tx_index   INTEGER NOT NULL,
	owner      BLOB,
	mint       BLOB    NOT NULL,
	amount     NOT NULL,          -- u64: integer when it fits in 63 bits, else decimal text
	decimals   INTEGER NOT NULL,
	PRIMARY KEY (account, block_time, slot, tx_index)
) WITHOUT ROWID;

-- How far Solana balances are indexed: one row.
CREATE TABLE solana_cursor (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	slot       INTEGER NOT NULL,
	block_time INTEGER NOT NULL -- unix milliseconds
);

CREATE TABLE tokens (
	mint     BLOB    PRIMARY KEY,
	name     TEXT    NOT NULL,
	symbol   TEXT    NOT NULL,
	decimals INTEGER NOT NULL
) WITHOUT ROWID;

-- API keys: only the SHA-256 of a key is stored.
CREATE TABLE api_keys (
	name       TEXT    PRIMARY KEY,
	hash       BLOB    NOT NULL UNIQUE,
	endpoints  TEXT    NOT NULL, -- comma-separated endpoint names
	created_at INTEGER NOT NULL  -- unix milliseconds
);
