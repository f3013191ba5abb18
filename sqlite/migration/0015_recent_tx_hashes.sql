-- The transaction hashes of the blocks written into history lately, as
-- history_tx_hashes holds the others: reads look in both. Every
-- sqlstore.HashMergeBlocks heights of history a write moves them into
-- history_tx_hashes in one pass in key order (sqlstore/history.go,
-- mergeHashes). Written straight into history_tx_hashes, a write of 100
-- blocks put 10,000 prefixes at random places of it: at 50,000 blocks a
-- commit rewrote ~8,500 of its 30,000 pages, about 350 KB a block of WAL
-- for 133 KB a block of data (docs/benchmarks.md, issue 30). A small table
-- takes those random writes in few pages, and a merge writes each page of
-- the large one once.
CREATE TABLE recent_tx_hashes (
	chain        INTEGER NOT NULL,
	prefix       INTEGER NOT NULL,
	block_number INTEGER NOT NULL,
	PRIMARY KEY (chain, prefix, block_number)
) WITHOUT ROWID;

-- The history below hashes_merged has its hashes in history_tx_hashes.
ALTER TABLE history ADD COLUMN hashes_merged INTEGER NOT NULL DEFAULT 0;
