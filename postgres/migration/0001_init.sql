-- Schema of the PostgreSQL store: the tables, keys and indexes of the SQLite
-- store (sqlite/migration/0001_init.sql) in PostgreSQL types, so that both
-- answer every request with the same rows in the same order.
--
-- Hashes and addresses are bytea (20 or 32 bytes). Wei amounts and u64 token
-- amounts are numeric(78,0): 78 digits hold any 256-bit integer. Gas
-- counters, nonces and sizes are uint64 stored bit for bit in bigint, as in
-- SQLite; nothing sorts or sums on them. Times are unix seconds (blocks) and
-- unix milliseconds (token balances, API keys), the integers SQLite stores.
--
-- traces and logs are partitioned by RANGE (block_number). The writer
-- creates each range's partitions before it first writes there
-- (postgres/partition.go), so a table of billions of rows is many tables of
-- bounded size whose indexes stay small, and an old range can be detached
-- or dropped without touching the others.

CREATE TABLE blocks (
	chain             integer       NOT NULL, -- EIP-155 chain id
	number            bigint        NOT NULL,
	hash              bytea         NOT NULL,
	parent_hash       bytea         NOT NULL,
	timestamp         bigint        NOT NULL,
	version           integer       NOT NULL,
	logs_bloom        bytea,                  -- NULL where the chain does not supply one
	transactions_root bytea         NOT NULL,
	state_root        bytea         NOT NULL,
	receipts_root     bytea         NOT NULL,
	miner             bytea         NOT NULL,
	extra_data        bytea,                  -- NULL where the chain does not supply it
	size              bigint        NOT NULL,
	gas_limit         bigint        NOT NULL,
	gas_used          bigint        NOT NULL,
	transaction_count integer       NOT NULL,
	base_fee_per_gas  numeric(78,0),          -- NULL before EIP-1559
	trace_count       integer       NOT NULL, -- keeps unfiltered Filter Traces counts off the traces table
	PRIMARY KEY (chain, number)
);

-- Datetime ranges become block ranges through this index.
CREATE INDEX blocks_timestamp ON blocks (chain, timestamp, number);

-- A transaction and its receipt, one row.
CREATE TABLE transactions (
	chain                    integer       NOT NULL,
	block_number             bigint        NOT NULL,
	tx_index                 integer       NOT NULL,
	hash                     bytea         NOT NULL,
	from_addr                bytea         NOT NULL,
	to_addr                  bytea,
	value                    numeric(78,0) NOT NULL,
	gas_limit                bigint        NOT NULL,
	gas_price                numeric(78,0),
	effective_gas_price      numeric(78,0),
	max_fee_per_gas          numeric(78,0),
	max_priority_fee_per_gas numeric(78,0),
	gas_used                 bigint        NOT NULL,
	cumulative_gas_used      bigint        NOT NULL,
	nonce                    bigint        NOT NULL,
	input                    bytea         NOT NULL,
	type                     smallint      NOT NULL,
	contract_address         bytea,
	status                   boolean       NOT NULL,
	log_count                integer       NOT NULL, -- keeps Get Transaction Logs counts off the logs table
	PRIMARY KEY (chain, block_number, tx_index)
);

-- block_number orders the (rare) repeats of a hash, as the primary key
-- columns that SQLite appends to every index do there.
CREATE INDEX transactions_hash ON transactions (chain, hash, block_number);

-- log_index grows with tx_index inside a block, so this key is also
-- log_index order within one transaction.
CREATE TABLE logs (
	chain        integer NOT NULL,
	block_number bigint  NOT NULL,
	tx_index     integer NOT NULL,
	log_index    integer NOT NULL,
	address      bytea   NOT NULL,
	topic0       bytea,
	topic1       bytea,
	topic2       bytea,
	topic3       bytea,
	data         bytea   NOT NULL,
	PRIMARY KEY (chain, block_number, tx_index, log_index)
) PARTITION BY RANGE (block_number);

-- trace_pos is the trace's rank in depth-first pre-order within its
-- transaction, so the primary key is the API's order.
CREATE TABLE traces (
	chain         integer       NOT NULL,
	block_number  bigint        NOT NULL,
	tx_index      integer       NOT NULL,
	trace_pos     integer       NOT NULL,
	trace_address text          NOT NULL,
	type          smallint      NOT NULL, -- 0 call, 1 create, 2 suicide
	call_type     smallint      NOT NULL, -- 0 call, 1 delegatecall, 2 staticcall, 3 create
	from_addr     bytea         NOT NULL,
	to_addr       bytea,
	gas           bigint        NOT NULL,
	gas_used      bigint        NOT NULL,
	value         numeric(78,0) NOT NULL,
	subtraces     integer       NOT NULL,
	input         bytea         NOT NULL,
	output        bytea         NOT NULL,
	error         text,
	PRIMARY KEY (chain, block_number, tx_index, trace_pos)
) PARTITION BY RANGE (block_number);

-- Address filters walk one of these per address in API order, so a page
-- reads at most offset+limit entries per address. traces_from carries
-- to_addr so that from+to filters and their counts never leave the index.
CREATE INDEX traces_from ON traces (chain, from_addr, block_number, tx_index, trace_pos) INCLUDE (to_addr);
CREATE INDEX traces_to ON traces (chain, to_addr, block_number, tx_index, trace_pos);

-- Versions of blocks removed by a reorg rewind and not yet written again, so
-- that a block written later at that height still gets a higher version.
CREATE TABLE orphaned_blocks (
	chain   integer NOT NULL,
	number  bigint  NOT NULL,
	version integer NOT NULL,
	PRIMARY KEY (chain, number)
);

-- Solana token account balances after each change. Keyed so that "latest
-- change at or before T" is one backward seek.
CREATE TABLE token_balances (
	account    bytea         NOT NULL,
	block_time bigint        NOT NULL, -- unix milliseconds
	slot       bigint        NOT NULL,
	tx_index   integer       NOT NULL,
	owner      bytea,
	mint       bytea         NOT NULL,
	amount     numeric(78,0) NOT NULL,
	decimals   integer       NOT NULL,
	PRIMARY KEY (account, block_time, slot, tx_index)
);

-- How far Solana balances are indexed: one row.
CREATE TABLE solana_cursor (
	id         integer PRIMARY KEY CHECK (id = 1),
	slot       bigint  NOT NULL,
	block_time bigint  NOT NULL -- unix milliseconds
);

CREATE TABLE tokens (
	mint     bytea   PRIMARY KEY,
	name     text    NOT NULL,
	symbol   text    NOT NULL,
	decimals integer NOT NULL
);

-- API keys: only the SHA-256 of a key is stored.
CREATE TABLE api_keys (
	name       text   PRIMARY KEY,
	hash       bytea  NOT NULL UNIQUE,
	endpoints  text   NOT NULL, -- comma-separated endpoint names
	created_at bigint NOT NULL  -- unix milliseconds
);
