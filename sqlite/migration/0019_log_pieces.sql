-- A write adds its logs to a bucket of log_postings as rows of their own,
-- one per key, its piece: piece is the offset in the bucket of the write's
-- lowest block. Appending to a bucket's rows rewrote each list once per
-- commit, ten times per bucket of 1,000 blocks on a backfill
-- (docs/benchmarks.md, issue 30). A read joins a key's pieces in piece
-- order (sqlstore/log_pieces.go): the bytes the appends made. The rows
-- there are one piece each: piece 0.
ALTER TABLE log_postings ADD COLUMN piece INTEGER NOT NULL DEFAULT 0;
DROP INDEX log_postings_key;
CREATE UNIQUE INDEX log_postings_key ON log_postings (chain, bucket, kind, key, piece);
