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
	c, br, err := t.p.send(ctx, true, query, args)
	t.c = c
	return wrap(scanBatch(br, err, dest, row))
}

func (t *readTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if t.c != nil {
		return conn{t.c}.Exec(ctx, query, args...)
	}
	c, br, err := t.p.send(ctx, true, query, args)
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
	c, br, err := r.p.send(ctx, false, query, args)
	if c != nil {
		defer r.p.put(c)
	}
	return wrap(scanBatch(br, err, dest, row))
}

func (r readConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	c, br, err := r.p.send(ctx, false, query, args)
	if c != nil {
		defer r.p.put(c)
	}
	n, err := execBatch(br, err)
	return n, wrap(err)
}

// scanBatch scans the rows of br's next result (readPool.send's, unless
// err) and closes br.
func scanBatch(br pgx.BatchResults, err error, dest []any, row func() error) error {
	if err != nil {
		return err
	}
	rows, err := br.Query()
	if err == nil {
		_, err = pgx.ForEachRow(rows, dest, row)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
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
