-- Per-key limits of fair share between API keys (chainquery.KeyLimits):
-- requests per second and their burst, cost units (ms of store time) per
-- second and the budget they fill, and requests in the store at once. 0 is
-- serve's default for every key, so keys created before keep it.
ALTER TABLE api_keys ADD COLUMN rate        REAL    NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN burst       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN cost_rate   REAL    NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN cost_burst  REAL    NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN concurrency INTEGER NOT NULL DEFAULT 0;
