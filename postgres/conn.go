package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
