-- History: the blocks below a chain's boundary keep their transactions, logs
-- and traces as compressed segments (package history) instead of rows, and
-- their traces' per-address posting lists instead of the address indexes
-- (sqlstore/history.go). Their header rows (blocks) and trace_counts stay
-- as they are. Nothing is history until a write moves the boundary up.

-- The boundary of each chain: blocks below it are history.
CREATE TABLE history (
	chain INTEGER PRIMARY KEY,
	below INTEGER NOT NULL -- a multiple of 100 (sqlstore.TraceCountBlocks)
);

-- One row per block and kind (0 transactions, 1 logs, 2 traces). A rowid
-- table: its segments are tens of KB, and as the key of a WITHOUT ROWID
-- table each seek would compare whole rows (migration 0005 says why).
CREATE TABLE history_segments (
	chain  INTEGER NOT NULL,
	number INTEGER NOT NULL,
	kind   INTEGER NOT NULL,
	data   BLOB    NOT NULL
);
CREATE UNIQUE INDEX history_segments_key ON history_segments (chain, number, kind);

-- The traces of an address (dir 0 as sender, 1 as recipient) in one bucket
-- of 100 heights, as a posting list. Keyed by bucket first, so that a
-- freeze appends at the end of the table; a walk finds the buckets where
-- an address has traces in trace_counts, and seeks here once for each. A
-- bucket written in pieces (blocks written straight into history as they
-- arrive) has a list per piece, keyed by the piece's first height (part),
-- until the boundary passes the bucket's end and its lists are merged into
-- one, keyed by the bucket's first height.
CREATE TABLE history_postings (
	chain   INTEGER NOT NULL,
	bucket  INTEGER NOT NULL,
	dir     INTEGER NOT NULL,
	address BLOB    NOT NULL,
	part    INTEGER NOT NULL,
	list    BLOB    NOT NULL,
	PRIMARY KEY (chain, bucket, dir, address, part)
) WITHOUT ROWID;

-- The history blocks holding a transaction, by the first 8 bytes of its
-- hash (sqlstore.HashPrefix); the transaction segment tells hashes that
-- share them apart.
CREATE TABLE history_tx_hashes (
	chain        INTEGER NOT NULL,
	prefix       INTEGER NOT NULL,
	block_number INTEGER NOT NULL,
	PRIMARY KEY (chain, prefix, block_number)
) WITHOUT ROWID;
