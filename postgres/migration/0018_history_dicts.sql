-- The zstd dictionaries of history's segments: the SQLite store's
-- migration (sqlite/migration/0018_history_dicts.sql) in PostgreSQL types.
CREATE TABLE history_dicts (
	chain   integer  NOT NULL,
	kind    smallint NOT NULL,
	since   bigint   NOT NULL,
	id      bigint   NOT NULL PRIMARY KEY,
	content bytea    NOT NULL
);
