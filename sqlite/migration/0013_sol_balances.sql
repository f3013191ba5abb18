-- SOL Balance by Account: each account's SOL balance at the end of every
-- block that changed it (chainquery.SOLBalanceChange), found by account and
-- time as token_balances are.
CREATE TABLE sol_balances (
	account    BLOB    NOT NULL,
	block_time INTEGER NOT NULL, -- unix milliseconds
	slot       INTEGER NOT NULL,
	lamports   INTEGER NOT NULL,
	PRIMARY KEY (account, block_time, slot)
) WITHOUT ROWID;

-- The blocks whose SOL balance changes are stored without a gap: from
-- sol_from through sol_through (slots, and their blocks' unix
-- milliseconds); NULL until a batch is written with them. Rows below
-- sol_from are from before a gap and are never answered.
ALTER TABLE solana_cursor ADD COLUMN sol_from INTEGER;
ALTER TABLE solana_cursor ADD COLUMN sol_from_time INTEGER;
ALTER TABLE solana_cursor ADD COLUMN sol_through INTEGER;
ALTER TABLE solana_cursor ADD COLUMN sol_through_time INTEGER;
