-- trace_counts is keyed by bucket first, as in the SQLite store (its
-- migration 0010 says why): a write's rows are those of the one or two
-- buckets at the key's end, so the index pages it changes are the few the
-- cache holds, where by address first each of a block's ~370 rows landed on
-- a page of its own. Reads search an address's row once per bucket
-- (postgres/trace.go, bucketRow).
ALTER TABLE trace_counts DROP CONSTRAINT trace_counts_pkey;
ALTER TABLE trace_counts ADD PRIMARY KEY (chain, bucket, dir, address);
