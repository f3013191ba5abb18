-- The Solana cursor records the blockhash of its block, so that a resumed
-- ingester can check that the node's chain is the stored one. A cursor
-- stored before this migration keeps a NULL hash: it cannot be checked, and
-- the ingester says so and resumes; its next write records a hash.
ALTER TABLE solana_cursor ADD COLUMN blockhash TEXT; -- base58
