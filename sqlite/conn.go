package sqlite

import (
	"context"
	"database/sql"

	"github.com/chainquery/chainquery"
)

// conn runs the shared store code's statements (chainquery.StoreConn) on a
// pool or a transaction of database/sql.
type conn struct {
	q interface {
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	}
}

func (c conn) Query(ctx context.Context, query string, args, dest []any, row func() error) error {
	rows, err := c.q.QueryContext(ctx, query, args...)
	if err != nil {
		return wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return wrap(err)
		} else if err := row(); err != nil {
			return err
		}
	}
	return wrap(rows.Err())
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, wrap(err)
	}
	n, err := res.RowsAffected()
	return n, wrap(err)
}

// txConn is a database/sql transaction (chainquery.StoreTx).
type txConn struct {
	conn
	sqlTx *sql.Tx
}

// beginTx begins a transaction on pool: on the read pool, a deferred
// transaction that reads one snapshot of the WAL; on the write connection,
// an immediate one that holds the write lock from the start.
func beginTx(ctx context.Context, pool *sql.DB) (txConn, error) {
	tx, err := pool.BeginTx(ctx, nil)
	return txConn{conn{tx}, tx}, wrap(err)
}

// beginner returns beginTx on pool for the shared store code.
func beginner(pool *sql.DB) func(context.Context) (chainquery.StoreTx, error) {
	return func(ctx context.Context) (chainquery.StoreTx, error) {
		tx, err := beginTx(ctx, pool)
		if err != nil {
			return nil, err
		}
		return tx, nil
	}
}

// Commit commits; the context plays no part (database/sql takes the one of
// BeginTx).
func (t txConn) Commit(context.Context) error { return wrap(t.sqlTx.Commit()) }

// Rollback rolls back, unless the transaction has ended.
func (t txConn) Rollback() { t.sqlTx.Rollback() }
