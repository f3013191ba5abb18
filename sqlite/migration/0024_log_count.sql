-- Filter Logs without an address or a topic0 counts a range's logs by
-- its blocks' log_count and decodes the log segments of its page's blocks
-- alone (sqlstore/log_count.go), as Filter Traces without an address
-- counts by trace_count: matching every log of the range was 0.3-0.4% of
-- the HTTP ceiling (docs/benchmarks.md, issue 31).
--
-- The blocks written from now on carry their count. Those stored before
-- get it here when they are rows (the logs table counts them), and, for
-- history, from their log segments in Go, from the top down: by
-- `chainquery migrate` and a bucket a write (sqlstore.countHistoryLogs),
-- like the log postings of migration 0012. The history blocks at or above
-- log_counts_from have their count; a range that reaches below it is
-- matched log by log, as before.
ALTER TABLE blocks ADD COLUMN log_count INTEGER;
ALTER TABLE history ADD COLUMN log_counts_from INTEGER NOT NULL DEFAULT 0;
UPDATE history SET log_counts_from = below;
UPDATE blocks SET log_count = (SELECT count(*) FROM logs WHERE logs.chain = blocks.chain AND logs.block_number = blocks.number)
	WHERE number >= coalesce((SELECT below FROM history WHERE history.chain = blocks.chain), 0);
