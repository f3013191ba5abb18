-- traces_to carries from_addr, as traces_from carries to_addr: a filter on
-- from_address AND to_address walks whichever side has fewer matches in the
-- range (trace_counts says which), and either walk stays in its index. The
-- index of the partitioned table is built on every partition.
DROP INDEX traces_to;
CREATE INDEX traces_to ON traces (chain, to_addr, block_number, tx_index, trace_pos) INCLUDE (from_addr);
