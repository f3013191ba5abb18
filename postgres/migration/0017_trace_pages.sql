-- The posting lists of history's traces move from a row of trace_counts
-- per bucket, direction and address into pages: the SQLite store's
-- migration (sqlite/migration/0017_trace_pages.sql) in PostgreSQL types.
-- A row of trace_counts cost ~98 bytes of heap and ~61 of index here for
-- a list of a few bytes. Pages of ~740 bytes stay in their heap rows (TOAST
-- starts at ~2 KB); a hot contract's page is stored out of line,
-- uncompressed (its lists do not compress), as log_postings' lists are.
--
-- The lists of trace_counts are moved into pages by the Go step of this
-- migration (sqlstore.convertTracePages), in the same transaction.
CREATE TABLE trace_pages (
	chain  integer  NOT NULL,
	dir    smallint NOT NULL,
	part   smallint NOT NULL,
	bucket bigint   NOT NULL, -- block_number / 100 (sqlstore.TraceCountBlocks)
	keys   bytea    NOT NULL,
	lists  bytea    NOT NULL,
	PRIMARY KEY (chain, dir, part, bucket)
);
ALTER TABLE trace_pages ALTER COLUMN lists SET STORAGE EXTERNAL;
