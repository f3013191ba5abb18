-- The transaction hash index of history becomes runs of sorted pages: the
-- SQLite store's migration (sqlite/migration/0019_tx_hash_runs.sql) in
-- PostgreSQL types. A row of history_tx_hashes cost ~98 bytes of heap and
-- index for a prefix of 8 bytes; a page holds 64 entries of 12 bytes in
-- ~800 bytes of heap row, nine a heap page, below TOAST's threshold.
--
-- The Go step of this migration (sqlstore.convertHashIndex) makes each
-- chain's rows of history_tx_hashes one run, and those of
-- recent_tx_hashes another, and drops both tables, in the same
-- transaction.
CREATE TABLE tx_hash_runs (
	chain   integer NOT NULL,
	id      bigint  NOT NULL,
	level   integer NOT NULL,
	low     bigint  NOT NULL,
	high    bigint  NOT NULL,
	entries bigint  NOT NULL,
	PRIMARY KEY (chain, id)
);

ALTER TABLE history DROP COLUMN hashes_merged;

CREATE TABLE tx_hash_pages (
	chain   integer NOT NULL,
	run     bigint  NOT NULL,
	prefix  bigint  NOT NULL,
	entries bytea   NOT NULL,
	PRIMARY KEY (chain, run, prefix)
);
-- Out of line, uncompressed, for the page of a prefix of hundreds of
-- hashes alone (the others stay in their rows).
ALTER TABLE tx_hash_pages ALTER COLUMN entries SET STORAGE EXTERNAL;
