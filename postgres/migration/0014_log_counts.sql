-- Filter Logs' counts of the tip's rows (sqlstore/log_counts.go): per
-- bucket of 1,000 blocks (sqlstore.LogBucketBlocks) and key of
-- log_postings' kinds (0 address, 1 topic0, 2 address||topic0), the number
-- of the logs of rows. Writes of rows add to it; deletes of rows (a rewind,
-- heights written again, rows frozen into history) take off what they
-- delete. History's logs are counted by log_postings instead.
CREATE TABLE log_counts (
	chain  integer  NOT NULL,
	bucket bigint   NOT NULL,
	kind   smallint NOT NULL,
	key    bytea    NOT NULL,
	n      bigint   NOT NULL,
	PRIMARY KEY (chain, bucket, kind, key)
);

-- The rows stored before: a pass over logs per kind.
INSERT INTO log_counts (chain, bucket, kind, key, n)
	SELECT chain, block_number / 1000, 0, address, count(*) FROM logs GROUP BY chain, block_number / 1000, address;
INSERT INTO log_counts (chain, bucket, kind, key, n)
	SELECT chain, block_number / 1000, 1, topic0, count(*) FROM logs WHERE topic0 IS NOT NULL
	GROUP BY chain, block_number / 1000, topic0;
INSERT INTO log_counts (chain, bucket, kind, key, n)
	SELECT chain, block_number / 1000, 2, address || topic0, count(*) FROM logs WHERE topic0 IS NOT NULL
	GROUP BY chain, block_number / 1000, address, topic0;
