-- The next id of a run of each chain's transaction hash index: the SQLite
-- store's migration (sqlite/migration/0022_tx_hash_next.sql) says why.
CREATE TABLE tx_hash_next (
	chain integer PRIMARY KEY,
	id    bigint NOT NULL
);
INSERT INTO tx_hash_next (chain, id) SELECT chain, max(id) + 1 FROM tx_hash_runs GROUP BY chain;
