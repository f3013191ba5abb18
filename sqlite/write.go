package sqlite

import (
	"context"
	"database/sql"

	"github.com/chainquery/chainquery/sqlstore"
)

// blockBatch is the write transaction of one batch of blocks
// (sqlstore.BlockBatch), on the single write connection, with the write
// statements prepared at Open.
type blockBatch struct {
	txConn
	db    *DB
	chain int64
}

func (db *DB) beginBlocks(ctx context.Context, chain int64, _ []uint64) (sqlstore.BlockBatch, error) {
	tx, err := beginTx(ctx, db.write)
	if err != nil {
		return nil, err
	}
	return &blockBatch{txConn: tx, db: db, chain: chain}, nil
}

// PriorVersions looks each height up, except above the highest height
// stored or orphaned when the batch began: an ingester moving forward (the
// common case) needs no lookup at all.
func (b *blockBatch) PriorVersions(ctx context.Context, heights []uint64) (map[uint64]int, error) {
	top, err := b.db.txStmt(ctx, b.sqlTx, qTopHeight)
	if err != nil {
		return nil, err
	}
	var highest sql.NullInt64
	if err := top.QueryRowContext(ctx, b.chain).Scan(&highest); err != nil {
		return nil, wrap(err)
	}
	version, err := b.db.txStmt(ctx, b.sqlTx, qBlockVersion)
	if err != nil {
		return nil, err
	}
	prior := map[uint64]int{}
	for _, h := range heights {
		if highest.Valid && int64(h) > highest.Int64 {
			continue
		}
		var v sql.NullInt64
		if err := version.QueryRowContext(ctx, b.chain, int64(h)).Scan(&v); err != nil {
			return nil, wrap(err)
		} else if v.Valid {
			prior[h] = int(v.Int64)
		}
	}
	return prior, nil
}

// DeleteHeights runs the prepared deletes of one height for each height.
func (b *blockBatch) DeleteHeights(ctx context.Context, heights []uint64) error {
	for _, q := range qDeleteHeight {
		stmt, err := b.db.txStmt(ctx, b.sqlTx, q)
		if err != nil {
			return err
		}
		for _, h := range heights {
			if _, err := stmt.ExecContext(ctx, b.chain, int64(h)); err != nil {
				return wrap(err)
			}
		}
	}
	return nil
}

// Insert inserts each table's rows in bulk (bulk.go).
func (b *blockBatch) Insert(ctx context.Context, tables []sqlstore.StoreTable) error {
	for i := range tables {
		if err := b.db.insert(ctx, b.sqlTx, &tables[i]); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// AddTraceCounts upserts the rows in bulk (bulk.go).
func (b *blockBatch) AddTraceCounts(ctx context.Context, rows []sqlstore.TraceCountRow) error {
	t := sqlstore.StoreTable{Name: traceCounts.Name, Columns: traceCounts.Columns, Values: make([]any, 0, 6*len(rows))}
	for _, r := range rows {
		var list any // NULL: the row's list stays as it is
		if r.List != nil {
			list = r.List
		}
		t.Values = append(t.Values, b.chain, r.Dir, r.Address, r.Bucket, r.N, list)
	}
	return wrap(b.db.insert(ctx, b.sqlTx, &t))
}

// AddLogPostings upserts the rows in bulk (bulk.go).
func (b *blockBatch) AddLogPostings(ctx context.Context, rows []sqlstore.TraceCountRow) error {
	t := sqlstore.StoreTable{Name: logPostings.Name, Columns: logPostings.Columns, Values: make([]any, 0, 6*len(rows))}
	for _, r := range rows {
		t.Values = append(t.Values, b.chain, r.Dir, r.Address, r.Bucket, r.N, r.List)
	}
	return wrap(b.db.insert(ctx, b.sqlTx, &t))
}

// AddLogCounts upserts the rows in bulk (bulk.go).
func (b *blockBatch) AddLogCounts(ctx context.Context, rows []sqlstore.TraceCountRow) error {
	t := sqlstore.StoreTable{Name: logCounts.Name, Columns: logCounts.Columns, Values: make([]any, 0, 5*len(rows))}
	for _, r := range rows {
		t.Values = append(t.Values, b.chain, r.Dir, r.Address, r.Bucket, r.N)
	}
	return wrap(b.db.insert(ctx, b.sqlTx, &t))
}

// uncountLogsSQL takes the logs of the blocks whose number matches cond (on
// ?2 and on; ?1 is the chain) off log_counts, before they are deleted; the
// rows it leaves at 0 are deleted by dropZeroLogCountsSQL, which is given
// the buckets that cond's blocks lie in. CAST keeps a blob of ||'s text.
func uncountLogsSQL(cond string) string {
	return `INSERT INTO log_counts (chain, bucket, kind, key, n)
		SELECT * FROM (
			SELECT ?1, block_number / 1000, 0, address, -count(*) FROM logs
				WHERE chain = ?1 AND block_number ` + cond + ` GROUP BY block_number / 1000, address
			UNION ALL SELECT ?1, block_number / 1000, 1, topic0, -count(*) FROM logs
				WHERE chain = ?1 AND block_number ` + cond + ` AND topic0 IS NOT NULL GROUP BY block_number / 1000, topic0
			UNION ALL SELECT ?1, block_number / 1000, 2, CAST(address || topic0 AS BLOB), -count(*) FROM logs
				WHERE chain = ?1 AND block_number ` + cond + ` AND topic0 IS NOT NULL GROUP BY block_number / 1000, address, topic0)
		WHERE true
		ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = n + excluded.n`
}

// dropZeroLogCountsSQL deletes the rows of log_counts at 0 in the buckets
// that match cond (on ?2 and on).
func dropZeroLogCountsSQL(cond string) string {
	return `DELETE FROM log_counts WHERE chain = ?1 AND bucket ` + cond + ` AND n = 0`
}

// uncountTracesSQL takes the traces of the blocks whose number matches cond
// (on ?2; ?1 is the chain) off trace_counts, before they are deleted. The
// WHERE true keeps SQLite from reading ON CONFLICT as a join's ON.
func uncountTracesSQL(cond string) string {
	return `INSERT INTO trace_counts (chain, dir, address, bucket, n)
		SELECT * FROM (
			SELECT ?1, 0, from_addr, block_number / 100, -count(*) FROM traces
				WHERE chain = ?1 AND block_number ` + cond + ` GROUP BY from_addr, block_number / 100
			UNION ALL SELECT ?1, 1, to_addr, block_number / 100, -count(*) FROM traces
				WHERE chain = ?1 AND block_number ` + cond + ` AND to_addr IS NOT NULL GROUP BY to_addr, block_number / 100
			UNION ALL SELECT ?1, 2, x'', number / 100, -sum(trace_count) FROM blocks
				WHERE chain = ?1 AND number ` + cond + ` AND trace_count > 0 GROUP BY number / 100)
		WHERE true
		ON CONFLICT (chain, bucket, dir, address) DO UPDATE SET n = n + excluded.n`
}

// Write statements of blocks, prepared once at Open.
const (
	qBlockVersion = `SELECT max(version) FROM (
		SELECT version FROM blocks WHERE chain = ?1 AND number = ?2
		UNION ALL SELECT version FROM orphaned_blocks WHERE chain = ?1 AND number = ?2)`
	qTopHeight = `SELECT max(m) FROM (SELECT max(number) AS m FROM blocks WHERE chain = ?1
		UNION ALL SELECT max(number) FROM orphaned_blocks WHERE chain = ?1)`
)

// qDeleteHeight removes every row of one block, children first, and its
// orphan record.
var qDeleteHeight = []string{
	uncountTracesSQL("= ?2"),
	uncountLogsSQL("= ?2"),
	dropZeroLogCountsSQL("= ?2 / 1000"),
	`DELETE FROM traces WHERE chain = ? AND block_number = ?`,
	`DELETE FROM logs WHERE chain = ? AND block_number = ?`,
	`DELETE FROM transactions WHERE chain = ? AND block_number = ?`,
	`DELETE FROM blocks WHERE chain = ? AND number = ?`,
	`DELETE FROM orphaned_blocks WHERE chain = ? AND number = ?`,
}

// writeStatements lists every statement the write side prepares at Open.
func writeStatements() []string {
	qs := append([]string{qBlockVersion, qTopHeight}, qDeleteHeight...)
	for _, t := range bulkTables {
		qs = append(qs, t.stmts...)
	}
	return qs
}
