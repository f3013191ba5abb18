-- A log of the rewrites of stored blocks: each rewind, and each write at a
-- height that held a block (or was rewound), appends the lowest height it
-- touched. The API keeps answers about deep blocks in memory (http's answer
-- cache) and reads this log with the chain's tip, once a second, to drop
-- those a rewrite reached, whichever process made it. One row per rewrite:
-- a few a day on a chain that reorgs often.
CREATE TABLE rewrites (
	chain       INTEGER NOT NULL,
	seq         INTEGER NOT NULL, -- 1, 2, ... per chain
	from_height INTEGER NOT NULL,
	PRIMARY KEY (chain, seq)
) WITHOUT ROWID;
