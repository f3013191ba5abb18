-- trace_pages_key leads with the stretch of ten buckets (1,000 blocks,
-- sqlstore.TracePageEpoch) that a page's bucket lies in, then the page.
-- Led by the page, each commit's pages went to ~2,000 places all over the
-- index, one for each page of the two directions, and as the history grew
-- so did the leaves each commit rewrote: at 45,000 Polygon-shaped blocks
-- ~8 pages of WAL a block, a fifth of what a block wrote
-- (docs/benchmarks.md, issue 30, session 25). They now go into the last
-- stretch, whose leaves stay few whatever the history's length; a read of
-- a page over a range of buckets reads one piece of the index a stretch.
DROP INDEX trace_pages_key;
CREATE UNIQUE INDEX trace_pages_key ON trace_pages (chain, bucket / 10, dir, part, bucket);
