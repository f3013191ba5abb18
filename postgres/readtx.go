package postgres

import (
	"context"

	"github.com/chainquery/chainquery/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// readTxOptions is a request's read transaction: one snapshot for all its
// statements (a count and its page agree while an ingester commits).
var readTxOptions = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// readTx is a request's read transaction (sqlstore.Store.ReadTx), begun
// with its first statement: BEGIN and that statement go to the server in
// one batch, one round trip where pgx's BeginTx spends one of its own.
// Each round trip costs serve and the server about what an HTTP request
// does on this machine's cores (docs/benchmarks.md, "What one statement
// costs each store"), and most requests run two to four statements.
//
// A request that runs no statement takes no connection. A readTx is used
// by one request at a time, as the Tx it implements.
type readTx struct {
	pool *pgxpool.Pool
	tx   pgx.Tx // nil until the first statement
}

func (db *DB) readTx(ctx context.Context) (sqlstore.Tx, error) {
	return &readTx{pool: db.read}, nil
}

func (t *readTx) Query(ctx context.Context, query string, args, dest []any, row func() error) error {
	if t.tx != nil {
		return conn{t.tx}.Query(ctx, query, args, dest, row)
	}
	br := t.begin(ctx, query, args)
	rows, err := br.Query()
	if err == nil {
		_, err = pgx.ForEachRow(rows, dest, row)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return wrap(err)
}

func (t *readTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if t.tx != nil {
		return conn{t.tx}.Exec(ctx, query, args...)
	}
	br := t.begin(ctx, query, args)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag.RowsAffected(), wrap(err)
}

// begin sends BEGIN and the first statement in one batch and returns the
// batch's results past BEGIN's (its error, if BEGIN failed). The
// transaction then holds the connection until Rollback, whether or not
// BEGIN succeeded (a closed one just releases it).
func (t *readTx) begin(ctx context.Context, query string, args []any) pgx.BatchResults {
	b := &pgx.Batch{}
	b.BeginTx(readTxOptions)
	b.Queue(query, args...)
	br := t.pool.SendBatch(ctx, b)
	t.tx = br.Tx()
	if _, err := br.Exec(); err != nil {
		br.Close()
		return pgx.FailedBatchResults(&pgx.Batch{}, err)
	}
	return br
}

// Commit ends the transaction as Rollback does: it wrote nothing.
func (t *readTx) Commit(ctx context.Context) error {
	if t.tx == nil {
		return nil
	}
	err := t.tx.Commit(ctx)
	t.tx = nil
	return wrap(err)
}

// Rollback ends the transaction, if a statement began it, and gives its
// connection back to the pool. Its error is of no interest: nothing is
// kept, and pgx resets a connection that broke.
func (t *readTx) Rollback() {
	if t.tx != nil {
		t.tx.Rollback(context.Background())
		t.tx = nil
	}
}
