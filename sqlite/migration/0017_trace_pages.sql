-- The posting lists of history's traces move from a row of trace_counts
-- per bucket, direction and address into pages (sqlstore/trace_pages.go,
-- history/pages.go, the format): per bucket and direction, the lists of
-- each address are in page history.PagePart(address), one of 1,024, whose
-- keys column holds its addresses with their counts and whose lists column
-- their lists. Two in three of those rows held one entry; a row cost its
-- key and overhead for a list of a few bytes (docs/benchmarks.md, issue
-- 30). trace_counts keeps the rows of blocks still rows, and every
-- bucket's count of all traces (dir 2).
--
-- The key leads with the direction and page, so that an address's pages
-- over a range are one stretch of the index. A rowid table: a page of
-- ~740 bytes (more for a busy contract) stays in its row, where a WITHOUT ROWID table keeps at most
-- ~1 KB of a row in the b-tree and spills the rest to a page of its own.
--
-- The lists of trace_counts are moved into pages by the Go step of this
-- migration (sqlstore.convertTracePages), in the same transaction.
CREATE TABLE trace_pages (
	chain  INTEGER NOT NULL,
	dir    INTEGER NOT NULL,
	part   INTEGER NOT NULL,
	bucket INTEGER NOT NULL, -- block_number / 100 (sqlstore.TraceCountBlocks)
	keys   BLOB    NOT NULL,
	lists  BLOB    NOT NULL
);
CREATE UNIQUE INDEX trace_pages_key ON trace_pages (chain, dir, part, bucket);
