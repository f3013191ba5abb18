-- A write adds its logs to a bucket of log_postings as rows of their own,
-- one per key, its piece: piece is the offset in the bucket of the write's
-- lowest block. Appending to a bucket's rows rewrote each list once per
-- commit, ten times per bucket of 1,000 blocks on a backfill, and every
-- rewrite left the old row and its TOAST behind until a vacuum
-- (docs/benchmarks.md, issue 30). A read joins a key's pieces in piece
-- order (sqlstore/log_pieces.go): the bytes the appends made. The rows
-- there are one piece each: piece 0.
ALTER TABLE log_postings ADD COLUMN piece integer NOT NULL DEFAULT 0;
ALTER TABLE log_postings DROP CONSTRAINT log_postings_pkey;
ALTER TABLE log_postings ADD PRIMARY KEY (chain, bucket, kind, key, piece);
