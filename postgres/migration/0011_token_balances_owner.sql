-- Token Balances by Owner: the changes of each owner's accounts, by
-- account, so that the accounts an owner has had by a time are one range
-- of this index (sqlstore/owner.go).
CREATE INDEX token_balances_owner ON token_balances (owner, account, block_time) WHERE owner IS NOT NULL;
