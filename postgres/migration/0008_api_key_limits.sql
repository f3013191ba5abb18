-- Per-key limits of fair share between API keys (chainquery.KeyLimits):
-- requests per second and their burst, cost units (ms of store time) per
-- second and the budget they fill, and requests in the store at once. 0 is
-- serve's default for every key, so keys created before keep it. A constant
-- default adds the columns without rewriting the table.
ALTER TABLE api_keys
	ADD COLUMN rate        double precision NOT NULL DEFAULT 0,
	ADD COLUMN burst       bigint           NOT NULL DEFAULT 0,
	ADD COLUMN cost_rate   double precision NOT NULL DEFAULT 0,
	ADD COLUMN cost_burst  double precision NOT NULL DEFAULT 0,
	ADD COLUMN concurrency bigint           NOT NULL DEFAULT 0;
