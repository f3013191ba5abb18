-- The address indexes lead with the bucket of trace_counts (block_number /
-- 100, chainquery.TraceCountBlocks), then the address. Keyed by address
-- first, the ~1,600 entries a Polygon block adds went to random pages all
-- over two indexes as large as the table's addresses: past the writer's
-- page cache, every insert read a page and every commit wrote thousands
-- (ingestion of the 5,000-block benchmark dataset: 14 blocks/s, of which
-- the two indexes were most of the writer's time). Keyed by bucket first,
-- the entries of the blocks being written share the pages of their bucket,
-- a few MB per index that stay in the cache: 27 blocks/s on the same data,
-- against 32 with no address index at all. A walk of an address's traces
-- seeks once per bucket holding any, as trace_counts lists them
-- (sqlite/trace.go).
DROP INDEX traces_from;
DROP INDEX traces_to;
CREATE INDEX traces_from ON traces (chain, block_number / 100, from_addr, block_number, tx_index, trace_pos, to_addr);
CREATE INDEX traces_to ON traces (chain, block_number / 100, to_addr, block_number, tx_index, trace_pos, from_addr);
