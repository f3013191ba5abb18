-- An address's list of logs carries the topic0 of each entry, and most
-- lists of (address, topic0) pairs are gone: they were three in four rows
-- of log_postings, an eighth of the ingester's CPU and a sixth of the disk
-- (docs/benchmarks.md, issue 30). "This token's Transfers" is counted from
-- the token's topics, a few bytes a piece of its list, and paged from its
-- list and tags (history/topics.go, the format). Only a busy address's
-- parts keep their pairs' lists (kind 2; sqlstore.splitEntries), which
-- filtering would cost too much to read. A topic0's row and a pair's have
-- empty topics and tags. topics comes before list, so that a count reads
-- no list; a write appends to all three.
--
-- The lists are written anew from the log segments: logs_from goes to the
-- top of history, and `chainquery migrate` (or each write, a bucket at a
-- time, from the top down) lists history again, as after migration 0012.
-- Until then the logs below logs_from are read from their segments, as
-- before 0012: the same answers, more slowly.
DROP TABLE log_postings;
CREATE TABLE log_postings (
	chain  INTEGER NOT NULL,
	bucket INTEGER NOT NULL, -- block_number / 1000 (sqlstore.LogBucketBlocks)
	kind   INTEGER NOT NULL,
	key    BLOB    NOT NULL,
	n      INTEGER NOT NULL,
	topics BLOB    NOT NULL,
	list   BLOB    NOT NULL,
	tags   BLOB    NOT NULL
);
CREATE UNIQUE INDEX log_postings_key ON log_postings (chain, bucket, kind, key);
UPDATE history SET logs_from = below;
