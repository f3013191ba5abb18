-- The key of trace_pages leads with the stretch of ten buckets that a
-- page's bucket lies in, then the page: the SQLite store's migration
-- (sqlite/migration/0021_trace_pages_by_epoch.sql) says why.
ALTER TABLE trace_pages DROP CONSTRAINT trace_pages_pkey;
CREATE UNIQUE INDEX trace_pages_key ON trace_pages (chain, (bucket / 10), dir, part, bucket);
