-- Token Balances by Owner: the accounts whose changes name each owner, so
-- that an owner's accounts are found one seek each, in account order
-- (sqlstore/owner.go, and the statements' skip scan).
CREATE INDEX token_balances_owner ON token_balances (owner, account) WHERE owner IS NOT NULL;
