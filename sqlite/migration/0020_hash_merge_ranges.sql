-- A merge of large runs of the transaction hash index is made a range of
-- prefixes at a time, a few ranges each write (sqlstore/hash_merge.go),
-- instead of all at once in one write: the largest merges rewrite the
-- whole index, a stall of the writer that grew with the history
-- (docs/benchmarks.md, issue 30, session 22). While one is under way, the
-- run it makes answers for the prefixes up to prefix_hi, and the runs it
-- merges for those from prefix_lo; a run not in a merge answers for all.
ALTER TABLE tx_hash_runs ADD COLUMN prefix_lo INTEGER NOT NULL DEFAULT -9223372036854775808;
ALTER TABLE tx_hash_runs ADD COLUMN prefix_hi INTEGER NOT NULL DEFAULT 9223372036854775807;
