-- Trace counts per address and bucket of 100 heights (chainquery's
-- TraceCountBlocks), kept in the write transactions of the traces: Filter
-- Traces adds up whole buckets for its count and skips them for its offset
-- instead of walking every match (trace_count.go). dir 0 counts traces by
-- from_addr, 1 by to_addr, 2 every trace (address empty). A rewind leaves
-- its buckets' rows at zero for the heights written again.
CREATE TABLE trace_counts (
	chain   INTEGER NOT NULL,
	dir     INTEGER NOT NULL,
	address BLOB    NOT NULL,
	bucket  INTEGER NOT NULL, -- block_number / 100
	n       INTEGER NOT NULL,
	PRIMARY KEY (chain, dir, address, bucket)
) WITHOUT ROWID;

-- The traces stored before this migration.
INSERT INTO trace_counts (chain, dir, address, bucket, n)
SELECT chain, 0, from_addr, block_number / 100, count(*) FROM traces
GROUP BY chain, from_addr, block_number / 100;
INSERT INTO trace_counts (chain, dir, address, bucket, n)
SELECT chain, 1, to_addr, block_number / 100, count(*) FROM traces WHERE to_addr IS NOT NULL
GROUP BY chain, to_addr, block_number / 100;
INSERT INTO trace_counts (chain, dir, address, bucket, n)
SELECT chain, 2, x'', number / 100, sum(trace_count) FROM blocks WHERE trace_count > 0
GROUP BY chain, number / 100;
