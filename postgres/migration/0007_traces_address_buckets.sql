-- The address indexes lead with the bucket of trace_counts (block_number /
-- 100, chainquery.TraceCountBlocks), then the address, as SQLite's do since
-- its migration 0007. Keyed by address first, the ~1,600 entries a
-- Polygon-shaped block adds went to random leaf pages of two indexes that
-- grow with their partition (a million blocks: hundreds of millions of
-- entries at Polygon's shape, far past memory); keyed by bucket first, the
-- entries of the blocks being written share their bucket's pages. A walk of
-- an address's traces is one index search per bucket holding any, as
-- trace_counts lists them (postgres/trace.go). The index of the partitioned
-- table is built on every partition.
DROP INDEX traces_from;
DROP INDEX traces_to;
CREATE INDEX traces_from ON traces (chain, (block_number / 100), from_addr, block_number, tx_index, trace_pos) INCLUDE (to_addr);
CREATE INDEX traces_to ON traces (chain, (block_number / 100), to_addr, block_number, tx_index, trace_pos) INCLUDE (from_addr);
