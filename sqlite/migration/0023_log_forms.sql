-- An address's row of log_postings is all split (its entries in its
-- (address, topic0) pairs' lists) or all with groups and tags, so that a
-- count of an address with a topic0 reads the pairs' n alone where the
-- pair has a row (sqlstore/log_forms.go). Rows written before held both
-- kinds of piece when a bucket's writes were of different sizes; the
-- migration's step in Go (sqlstore.splitMixedLists) makes each such row
-- split. Nothing changes in the schema.
SELECT 1;
