-- The zstd dictionaries of history's segments (sqlstore/history_dicts.go,
-- history/dict.go): per chain and kind of segment, made of the beginnings
-- of a few of the chain's own segments; a segment's zstd frame names its
-- dictionary by id, a hash of its content. A row is written in the
-- transaction of the first segments that use it and never changed.
CREATE TABLE history_dicts (
	chain   INTEGER NOT NULL,
	kind    INTEGER NOT NULL, -- 0 transactions, 1 logs, 2 traces
	since   INTEGER NOT NULL, -- the lowest height of its samples
	id      INTEGER NOT NULL PRIMARY KEY,
	content BLOB    NOT NULL
);
