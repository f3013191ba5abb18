-- History: the blocks below a chain's boundary keep their transactions, logs
-- and traces as compressed segments (package history) instead of rows, and
-- their traces' per-address posting lists instead of the address indexes
-- (sqlstore/history.go). Their header rows (blocks) and trace_counts stay
-- as they are. Nothing is history until a write moves the boundary up. The
-- tables are ordinary tables in the database, so replicas serve history as
-- they serve rows.

-- The boundary of each chain: blocks below it are history.
CREATE TABLE history (
	chain integer PRIMARY KEY,
	below bigint  NOT NULL -- a multiple of 100 (sqlstore.TraceCountBlocks)
);

-- One row per block and kind (0 transactions, 1 logs, 2 traces). The
-- segments are zstd already: EXTERNAL keeps PostgreSQL from trying to
-- compress them again on their way out of line.
CREATE TABLE history_segments (
	chain  integer  NOT NULL,
	number bigint   NOT NULL,
	kind   smallint NOT NULL,
	data   bytea    NOT NULL,
	PRIMARY KEY (chain, number, kind)
);
ALTER TABLE history_segments ALTER COLUMN data SET STORAGE EXTERNAL;

-- The traces an address sent (dir 0) or received (dir 1) in a bucket of
-- 100 heights, as a posting list, for the blocks of the bucket that are
-- history: what Filter Traces walks there instead of the address indexes.
-- It lives in the row that counts them, keyed by address first, so that a
-- walk over a long range reads one stretch of the table; a write appends
-- the list of its piece of the bucket to the bytes there (sqlstore's
-- history.go). NULL while the bucket's blocks are rows.
ALTER TABLE trace_counts ADD COLUMN list bytea;

-- The history blocks holding a transaction, by the first 8 bytes of its
-- hash (sqlstore.HashPrefix); the transaction segment tells hashes that
-- share them apart.
CREATE TABLE history_tx_hashes (
	chain        integer NOT NULL,
	prefix       bigint  NOT NULL,
	block_number bigint  NOT NULL,
	PRIMARY KEY (chain, prefix, block_number)
);
