-- The transaction hash index of history becomes runs of sorted pages
-- (sqlstore/hash_runs.go): the prefixes of the blocks a write puts into
-- history become a run when it commits, and runs of a level merge four at
-- a time into one of the next. The prefixes went into recent_tx_hashes,
-- each at a random place, and every 2,000 heights into history_tx_hashes,
-- 200,000 random places all over it: a rewrite of the whole table, slower
-- as the history grew (docs/benchmarks.md, issue 30, session 20).
--
-- The Go step of this migration (sqlstore.convertHashIndex) makes each
-- chain's rows of history_tx_hashes one run, and those of
-- recent_tx_hashes another, and drops both tables, in the same
-- transaction.
CREATE TABLE tx_hash_runs (
	chain   INTEGER NOT NULL,
	id      INTEGER NOT NULL, -- the run's key in tx_hash_pages, higher for later runs
	level   INTEGER NOT NULL, -- merges that made it (its size in units of 4^level)
	low     INTEGER NOT NULL, -- its lowest block: pages store distances from it
	high    INTEGER NOT NULL, -- its highest block
	entries INTEGER NOT NULL,
	PRIMARY KEY (chain, id)
) WITHOUT ROWID;

-- The height below which the hashes had been merged, of no use now.
ALTER TABLE history DROP COLUMN hashes_merged;

-- A page of 64 entries of (prefix, block - low), sorted (history/hash_pages.go),
-- keyed by its first prefix (a prefix's entries are never cut between
-- pages): ~780 bytes, five cells a 4 KiB page.
CREATE TABLE tx_hash_pages (
	chain   INTEGER NOT NULL,
	run     INTEGER NOT NULL,
	prefix  INTEGER NOT NULL,
	entries BLOB    NOT NULL,
	PRIMARY KEY (chain, run, prefix)
) WITHOUT ROWID;
