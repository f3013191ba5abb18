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

// Commit commits and lets the checkpointer copy what it wrote.
func (b *blockBatch) Commit(ctx context.Context) error {
	err := b.txConn.Commit(ctx)
	if err == nil {
		b.db.checkpoints.poke()
	}
	return err
}

func (db *DB) beginBlocks(ctx context.Context, chain int64, _ []uint64) (sqlstore.BlockBatch, error) {
	tx, err := beginTx(ctx, db.write)
	if err != nil {
		return nil, err
	}
	tx.stmts = db.writes
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

// Insert inserts each table's rows in bulk (bulk.go).
func (b *blockBatch) Insert(ctx context.Context, tables []sqlstore.Table) error {
	for i := range tables {
		if err := b.db.insert(ctx, b.sqlTx, &tables[i]); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// AddTraceCounts upserts the rows in bulk (bulk.go).
func (b *blockBatch) AddTraceCounts(ctx context.Context, rows []sqlstore.BucketRow) error {
	t := sqlstore.Table{Name: traceCounts.Name, Columns: traceCounts.Columns, Values: make([]any, 0, 6*len(rows))}
	chain, bucket := boxed(b.chain), boxedBucket()
	for _, r := range rows {
		var list any // NULL: the row's list stays as it is
		if r.List != nil {
			list = r.List
		}
		t.Values = append(t.Values, chain, r.Kind, r.Key, bucket(r.Bucket), r.N, list)
	}
	return wrap(b.db.insert(ctx, b.sqlTx, &t))
}

// AddLogPostings upserts the rows in bulk (bulk.go).
func (b *blockBatch) AddLogPostings(ctx context.Context, rows []sqlstore.BucketRow) error {
	t := sqlstore.Table{Name: logPostings.Name, Columns: logPostings.Columns, Values: make([]any, 0, 8*len(rows))}
	chain, bucket := boxed(b.chain), boxedBucket()
	for _, r := range rows {
		t.Values = append(t.Values, chain, r.Kind, r.Key, bucket(r.Bucket), r.N, r.Topics, r.List, r.Tags)
	}
	return wrap(b.db.insert(ctx, b.sqlTx, &t))
}

// AddLogCounts upserts the rows in bulk (bulk.go).
func (b *blockBatch) AddLogCounts(ctx context.Context, rows []sqlstore.BucketRow) error {
	t := sqlstore.Table{Name: logCounts.Name, Columns: logCounts.Columns, Values: make([]any, 0, 5*len(rows))}
	chain, bucket := boxed(b.chain), boxedBucket()
	for _, r := range rows {
		t.Values = append(t.Values, chain, r.Kind, r.Key, bucket(r.Bucket), r.N)
	}
	return wrap(b.db.insert(ctx, b.sqlTx, &t))
}

// boxed returns v in an interface once, for every row that takes it: an
// int64 above 255 put into an interface is an allocation each time, and
// the rows of a bucket's lists are hundreds of thousands.
func boxed(v int64) any { return v }

// boxedBucket returns a function that boxes a bucket number, once for a
// run of rows of the same bucket (rows come in key order, bucket first).
func boxedBucket() func(int64) any {
	last, box := int64(-1), any(nil)
	return func(b int64) any {
		if b != last || box == nil {
			last, box = b, b
		}
		return box
	}
}

// Write statements of blocks, prepared once at Open.
const (
	qBlockVersion = `SELECT max(version) FROM (
		SELECT version FROM blocks WHERE chain = ?1 AND number = ?2
		UNION ALL SELECT version FROM orphaned_blocks WHERE chain = ?1 AND number = ?2)`
	qTopHeight = `SELECT max(m) FROM (SELECT max(number) AS m FROM blocks WHERE chain = ?1
		UNION ALL SELECT max(number) FROM orphaned_blocks WHERE chain = ?1)`
)

// writeStatements lists every statement the write side prepares at Open.
// the shared store's deletes of a batch's heights among them, which run
// once per height.
func (db *DB) writeStatements() []string {
	qs := append([]string{qBlockVersion, qTopHeight}, db.HeightDeletes()...)
	for _, t := range bulkTables {
		qs = append(qs, t.stmts...)
	}
	return qs
}
