-- The next id of a run of each chain's transaction hash index
-- (sqlstore/hash_runs.go): ids were the highest run's plus one, so that a
-- thaw that deleted the highest runs let the next write take their ids
-- again. Readers keep a complete run in memory by its id (hash_cache.go);
-- an id now names one run for good.
CREATE TABLE tx_hash_next (
	chain INTEGER PRIMARY KEY,
	id    INTEGER NOT NULL
);
INSERT INTO tx_hash_next (chain, id) SELECT chain, max(id) + 1 FROM tx_hash_runs GROUP BY chain;
