package postgres

import (
	"context"

	"github.com/chainquery/chainquery/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// readTx is a request's read transaction (sqlstore.Store.ReadTx), begun
// with its first statement and ended by the next read of its connection,
// both in that read's batch (readPool): no round trip of their own. A
// request that runs no statement takes no connection. A readTx is used by
// one request at a time, as the Tx it implements.
type readTx struct {
	p *readPool
	c *pgxpool.Conn // nil until the first statement
}

func (db *DB) readTx(ctx context.Context) (sqlstore.Tx, error) {
	return &readTx{p: db.reads}, nil
}

func (t *readTx) Query(ctx context.Context, query string, args, dest []any, row func() error) error {
	if t.c != nil {
		return conn{t.c}.Query(ctx, query, args, dest, row)
	}
	return t.QueryBatch(ctx, []sqlstore.Query{{SQL: query, Args: args, Dest: dest, Row: row}})
}

// QueryBatch sends qs in one round trip (sqlstore.Batcher), with BEGIN
// when they are the transaction's first statements.
func (t *readTx) QueryBatch(ctx context.Context, qs []sqlstore.Query) error {
	if t.c != nil {
		return wrap(scanBatch(t.c.SendBatch(ctx, batchOf(qs)), nil, qs))
	}
	c, br, err := t.p.send(ctx, true, qs)
	t.c = c
	return wrap(scanBatch(br, err, qs))
}

func (t *readTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if t.c != nil {
		return conn{t.c}.Exec(ctx, query, args...)
	}
	c, br, err := t.p.send(ctx, true, []sqlstore.Query{{SQL: query, Args: args}})
	t.c = c
	n, err := execBatch(br, err)
	return n, wrap(err)
}

// Commit ends the request as Rollback does: a read-only transaction has
// nothing to commit.
func (t *readTx) Commit(context.Context) error {
	t.Rollback()
	return nil
}

// Rollback gives the connection back, its transaction to be ended by the
// next read that takes it (or by the sweep).
func (t *readTx) Rollback() {
	if t.c != nil {
		t.p.put(t.c)
		t.c = nil
	}
}

// readConn runs the one-statement reads of the read pool
// (sqlstore.Store.Read), through readPool so that they too end a parked
// transaction in their batch.
type readConn struct{ p *readPool }

func (r readConn) Query(ctx context.Context, query string, args, dest []any, row func() error) error {
	qs := []sqlstore.Query{{SQL: query, Args: args, Dest: dest, Row: row}}
	c, br, err := r.p.send(ctx, false, qs)
	if c != nil {
		defer r.p.put(c)
	}
	return wrap(scanBatch(br, err, qs))
}

func (r readConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	c, br, err := r.p.send(ctx, false, []sqlstore.Query{{SQL: query, Args: args}})
	if c != nil {
		defer r.p.put(c)
	}
	n, err := execBatch(br, err)
	return n, wrap(err)
}

// scanBatch scans the rows of br's next results into qs in turn
// (readPool.send's, unless err) and closes br.
func scanBatch(br pgx.BatchResults, err error, qs []sqlstore.Query) error {
	if err != nil {
		return err
	}
	for _, q := range qs {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			_, err = pgx.ForEachRow(rows, q.Dest, q.Row)
		}
		if err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// batchOf is a batch of qs' statements.
func batchOf(qs []sqlstore.Query) *pgx.Batch {
	b := &pgx.Batch{}
	for _, q := range qs {
		b.Queue(q.SQL, q.Args...)
	}
	return b
}

// execBatch returns the rows br's next result changed and closes br.
func execBatch(br pgx.BatchResults, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag.RowsAffected(), err
}
