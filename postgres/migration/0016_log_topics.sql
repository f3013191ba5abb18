-- An address's list of logs carries the topic0 of each entry, and most
-- lists of (address, topic0) pairs are gone: they were three in four rows
-- of log_postings (docs/benchmarks.md, issue 30). Only a busy address's
-- parts keep their pairs' lists (history/topics.go, the format; sqlite's
-- 0016 says more). The lists are written anew from the log segments, as
-- after migration 0012.
DROP TABLE log_postings;
CREATE TABLE log_postings (
	chain  integer  NOT NULL,
	bucket bigint   NOT NULL, -- block_number / 1000 (sqlstore.LogBucketBlocks)
	kind   smallint NOT NULL,
	key    bytea    NOT NULL,
	n      bigint   NOT NULL,
	topics bytea    NOT NULL,
	list   bytea    NOT NULL,
	tags   bytea    NOT NULL,
	PRIMARY KEY (chain, bucket, kind, key)
);
ALTER TABLE log_postings ALTER COLUMN list SET STORAGE EXTERNAL;
UPDATE history SET logs_from = below;
