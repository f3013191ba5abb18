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

-- The traces of an address (dir 0 as sender, 1 as recipient) in one bucket
-- of 100 heights, as a posting list. Keyed by bucket first, so that a
-- freeze appends to the index's right edge; a walk finds the buckets where
-- an address has traces in trace_counts, and searches here once for each.
-- A bucket written in pieces (blocks written straight into history as they
-- arrive) has a list per piece, keyed by the piece's first height (part),
-- until the boundary passes the bucket's end and its lists are merged into
-- one, keyed by the bucket's first height.
CREATE TABLE history_postings (
	chain   integer  NOT NULL,
	bucket  bigint   NOT NULL,
	dir     smallint NOT NULL,
	address bytea    NOT NULL,
	part    bigint   NOT NULL,
	list    bytea    NOT NULL,
	PRIMARY KEY (chain, bucket, dir, address, part)
);
ALTER TABLE history_postings ALTER COLUMN list SET STORAGE EXTERNAL;

-- The history blocks holding a transaction, by the first 8 bytes of its
-- hash (sqlstore.HashPrefix); the transaction segment tells hashes that
-- share them apart.
CREATE TABLE history_tx_hashes (
	chain        integer NOT NULL,
	prefix       bigint  NOT NULL,
	block_number bigint  NOT NULL,
	PRIMARY KEY (chain, prefix, block_number)
);
