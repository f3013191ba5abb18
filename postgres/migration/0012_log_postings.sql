-- Filter Logs over any range that names an address or a topic0.
--
-- History: the logs of a bucket of 1,000 heights, per key, as a posting list
-- of (block, 0, position of the log in its block's log segment), with
-- their number. A key is of one kind: 0 an address (20 bytes), 1 a topic0
-- (32 bytes), 2 an address and the topic0 of its log (52 bytes: "this
-- token's Transfers" is one list, whose count does not depend on how many
-- other events the token emits). A log without topics is under its
-- address alone. Keyed by bucket first, as trace_counts: a write's rows are
-- those of the buckets at the table's end. Written with the segments, for
-- history blocks only (sqlstore/log_postings.go); a write that adds blocks
-- to a bucket appends its list to the row's.
CREATE TABLE log_postings (
	chain  integer  NOT NULL,
	bucket bigint   NOT NULL, -- block_number / 1000 (sqlstore.LogBucketBlocks)
	kind   smallint NOT NULL,
	key    bytea    NOT NULL,
	n      bigint   NOT NULL,
	list   bytea    NOT NULL,
	PRIMARY KEY (chain, bucket, kind, key)
);
-- Varints that pglz would spend time on and not shrink.
ALTER TABLE log_postings ALTER COLUMN list SET STORAGE EXTERNAL;

-- The history blocks at or above logs_from have their logs in
-- log_postings; those below it (written before this migration) get them
-- from `chainquery migrate`, or a few buckets a write, from the top down.
ALTER TABLE history ADD COLUMN logs_from bigint NOT NULL DEFAULT 0;
UPDATE history SET logs_from = below;

-- Rows: the tip's logs by address and by topic0, in API order within each;
-- an address's entries carry the topic0, so that address AND topic0 is
-- counted in the index.
CREATE INDEX logs_address ON logs (chain, address, block_number, log_index) INCLUDE (topic0);
CREATE INDEX logs_topic0 ON logs (chain, topic0, block_number, log_index) WHERE topic0 IS NOT NULL;
