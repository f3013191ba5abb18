package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// conn runs the shared store code's statements (sqlstore.Conn) on a
// pgx pool, connection or transaction.
type conn struct {
	q interface {
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	}
}

func (c conn) Query(ctx context.Context, query string, args, dest []any, row func() error) error {
	rows, err := c.q.Query(ctx, query, args...)
	if err == nil {
		_, err = pgx.ForEachRow(rows, dest, row)
	}
	return wrap(err)
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, query, args...)
	return tag.RowsAffected(), wrap(err)
}

// txConn is a pgx transaction (sqlstore.Tx).
type txConn struct {
	conn
	pgxTx pgx.Tx
}

func (t txConn) Commit(ctx context.Context) error { return wrap(t.pgxTx.Commit(ctx)) }

// Rollback ends the transaction unless it has ended. Its error is of no
// interest: nothing is kept, and pgx resets a connection that broke.
func (t txConn) Rollback() { t.pgxTx.Rollback(context.Background()) }

// qBeginRead begins a request's read transaction: one snapshot for all
// its statements (a count and its page agree) while an ingester commits.
const qBeginRead = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`

// readTx is a request's read transaction (sqlstore.Tx) that costs no round
// trip of its own: its BEGIN goes to the server with its first statement,
// in one pgx batch, and its end (ROLLBACK: it wrote nothing) runs after
// the request has its answer. BeginTx, then Rollback, were two of the
// five or six round trips of a request of history (docs/benchmarks.md,
// issue 31). A transaction that runs no statement takes no connection.
type readTx struct {
	pool *pgxpool.Pool
	c    *pgxpool.Conn // nil until the first statement
}

// first acquires the connection and runs the first statement after BEGIN;
// run reads the statement's results from the batch.
func (t *readTx) first(ctx context.Context, query string, args []any, run func(pgx.BatchResults) error) error {
	c, err := t.pool.Acquire(ctx)
	if err != nil {
		return wrap(err)
	}
	t.c = c
	b := &pgx.Batch{}
	b.Queue(qBeginRead)
	b.Queue(query, args...)
	br := c.SendBatch(ctx, b)
	if _, err = br.Exec(); err == nil {
		err = run(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return wrap(err)
}

func (t *readTx) Query(ctx context.Context, query string, args, dest []any, row func() error) error {
	if t.c != nil {
		return conn{t.c}.Query(ctx, query, args, dest, row)
	}
	return t.first(ctx, query, args, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err == nil {
			_, err = pgx.ForEachRow(rows, dest, row)
		}
		return err
	})
}

func (t *readTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if t.c != nil {
		return conn{t.c}.Exec(ctx, query, args...)
	}
	var n int64
	err := t.first(ctx, query, args, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// Commit ends the transaction, waiting for it: a read-only transaction
// keeps nothing either way.
func (t *readTx) Commit(ctx context.Context) error {
	if t.c == nil {
		return nil
	}
	c := t.c
	t.c = nil
	defer c.Release()
	_, err := c.Exec(ctx, `COMMIT`)
	return wrap(err)
}

// Rollback ends the transaction unless it has ended, on a goroutine of its
// own: the connection goes back to the pool once the server has ended it
// (pgx closes one that broke), and the request does not wait for that.
func (t *readTx) Rollback() {
	if t.c == nil {
		return
	}
	c := t.c
	t.c = nil
	go func() {
		c.Exec(context.Background(), `ROLLBACK`)
		c.Release()
	}()
}
