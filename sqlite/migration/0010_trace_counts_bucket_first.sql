-- trace_counts is keyed by bucket first. Keyed by address first, each write
-- upserted its ~370 (direction, address) rows a block on as many random
-- pages of the whole table: once the table outgrew the writer's cache, every
-- upsert read a page and every commit wrote it back, and ingestion fell to
-- 0.61x of a fresh store's by 10,000 blocks (docs/benchmarks.md, "History
-- in the stores"). By bucket first, a write's rows are those of the one or
-- two buckets at the table's end, pages the cache holds whatever the size.
-- Reads look an address up once per bucket of their range (sqlite/trace.go).
CREATE TABLE trace_counts_by_bucket (
	chain   INTEGER NOT NULL,
	bucket  INTEGER NOT NULL, -- block_number / 100
	dir     INTEGER NOT NULL,
	address BLOB    NOT NULL,
	n       INTEGER NOT NULL,
	list    BLOB,
	PRIMARY KEY (chain, bucket, dir, address)
) WITHOUT ROWID;
INSERT INTO trace_counts_by_bucket (chain, bucket, dir, address, n, list)
SELECT chain, bucket, dir, address, n, list FROM trace_counts ORDER BY chain, bucket, dir, address;
DROP TABLE trace_counts;
ALTER TABLE trace_counts_by_bucket RENAME TO trace_counts;
