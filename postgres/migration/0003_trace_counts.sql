-- Trace counts per address and bucket of 100 heights (chainquery's
-- TraceCountBlocks), kept in the write transactions of the traces: Filter
-- Traces adds up whole buckets for its count and skips them for its offset
-- instead of walking every match (trace_count.go). dir 0 counts traces by
-- from_addr, 1 by to_addr, 2 every trace (address empty). A rewind leaves
-- its buckets' rows at zero for the heights written again. The table of the
-- SQLite store (sqlite/migration/0003_trace_counts.sql) in PostgreSQL types.
CREATE TABLE trace_counts (
	chain   integer  NOT NULL,
	dir     smallint NOT NULL,
	address bytea    NOT NULL,
	bucket  bigint   NOT NULL, -- block_number / 100
	n       bigint   NOT NULL,
	PRIMARY KEY (chain, dir, address, bucket)
);

-- The traces stored before this migration.
INSERT INTO trace_counts (chain, dir, address, bucket, n)
SELECT chain, 0, from_addr, block_number / 100, count(*) FROM traces
GROUP BY chain, from_addr, block_number / 100;
INSERT INTO trace_counts (chain, dir, address, bucket, n)
SELECT chain, 1, to_addr, block_number / 100, count(*) FROM traces WHERE to_addr IS NOT NULL
GROUP BY chain, to_addr, block_number / 100;
INSERT INTO trace_counts (chain, dir, address, bucket, n)
SELECT chain, 2, '\x'::bytea, number / 100, sum(trace_count) FROM blocks WHERE trace_count > 0
GROUP BY chain, number / 100;
