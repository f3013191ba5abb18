-- The reads of a range of blocks' counts and stamps (the sum of
-- trace_count or log_count without an address, an offset skipped block by
-- block, the timestamps and versions of a page's history blocks) read
-- these columns alone: from the table they read whole rows, ~550 bytes
-- each (the bloom, the roots, extra_data), 14 pages of the B-tree for 100
-- blocks; from this index ~30 bytes a block, one page. The count of
-- Filter Traces over 100 blocks without an address was 18% of serve's CPU
-- (docs/benchmarks.md, issue 31, session 35).
CREATE INDEX blocks_counts ON blocks (chain, number, timestamp, version, trace_count, log_count);

-- How many times the chain's history was thawed: the readers keep the
-- pages of buckets wholly in history in memory under it, and a thaw, which
-- deletes and later writes again the pages of its buckets, adds one
-- (sqlstore/page_cache.go).
ALTER TABLE history ADD COLUMN thaws INTEGER NOT NULL DEFAULT 0;
