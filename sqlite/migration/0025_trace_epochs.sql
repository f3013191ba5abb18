-- Counts over long ranges of history that do not grow with their length
-- (sqlstore/trace_epochs.go, log_epochs.go): per chain, direction of
-- trace_counts (0 sender, 1 recipient: the space; log_postings' kinds 0
-- address and 1 topic0 are spaces 10 and 11), part (history.EpochPart of the
-- key) and epoch of 10,000 heights (100 buckets,
-- sqlstore.TraceEpochBuckets), the addresses of the part and their number
-- of traces over the epoch (history/counts.go). A count over a range adds
-- up an address's rows of the whole epochs in it, found by one search of
-- the key, and the pages of the buckets at its ends: over a year of
-- Polygon ~1,600 rows, against ~157,000 pages of buckets.
--
-- An epoch is written once it is wholly history, from its buckets' pages,
-- in the write that moves trace_epochs_below past it; a thaw deletes those
-- from its bucket's epoch up. The epochs below trace_epochs_below are
-- written (those below the chain's lowest block hold nothing). A database
-- stored before gets them a write at a time, from its lowest block up, or
-- from `chainquery migrate`.
--
-- A rowid table with its key in an index, like log_postings: the rows of
-- busy parts are KBs.
CREATE TABLE epoch_counts (
	chain  INTEGER NOT NULL,
	space  INTEGER NOT NULL,
	part   INTEGER NOT NULL,
	epoch  INTEGER NOT NULL, -- block_number / 10,000
	counts BLOB    NOT NULL
);
CREATE UNIQUE INDEX epoch_counts_key ON epoch_counts (chain, space, part, epoch);
ALTER TABLE history ADD COLUMN trace_epochs_below INTEGER NOT NULL DEFAULT 0;
-- The logs' epochs from log_epochs_from to log_epochs_below are written:
-- those of the history whose logs are in log_postings.
ALTER TABLE history ADD COLUMN log_epochs_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE history ADD COLUMN log_epochs_below INTEGER NOT NULL DEFAULT 0;
