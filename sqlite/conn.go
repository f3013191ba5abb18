package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chainquery/chainquery/sqlstore"
)

// conn runs the shared store code's statements (sqlstore.Conn) on the
// write connection or a transaction of it, through database/sql: the
// statements of stmts, the block writes', when prepared there (nil:
// none). The reads run theirs on the read pool's connections (read.go).
type conn struct {
	q interface {
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	}
	stmts *statements
	tx    *sql.Tx // the transaction of q, if it is one
}

// stmt returns the prepared statement of query on c, or nil.
func (c conn) stmt(ctx context.Context, query string) *sql.Stmt {
	if c.stmts == nil {
		return nil
	}
	st := c.stmts.lookup(query)
	if st != nil && c.tx != nil {
		// Closed with the transaction.
		st = c.tx.StmtContext(ctx, st)
	}
	return st
}

func (c conn) Query(ctx context.Context, query string, args, dest []any, row func() error) error {
	var rows *sql.Rows
	var err error
	if st := c.stmt(ctx, query); st == nil {
		rows, err = c.q.QueryContext(ctx, bind(query), args...)
	} else {
		rows, err = st.QueryContext(ctx, args...)
	}
	if err != nil {
		return wrap(err)
	}
	defer rows.Close()
	scan := ownBytes(dest)
	for rows.Next() {
		if err := rows.Scan(scan...); err != nil {
			return wrap(err)
		} else if err := row(); err != nil {
			return err
		}
	}
	return wrap(rows.Err())
}

// ownBytes returns dest with each *[]byte scanned through an owned: the
// Scan of database/sql into a *[]byte copies the value the driver made,
// and modernc's driver makes a new slice for every blob of every row
// (conn.columnBlob), so that slice is already the caller's copy
// (sqlstore.Conn; TestConnBytes holds it). A page of Filter Traces by a
// hot address copied its two ~25 KB rows of trace_pages once more for
// nothing.
func ownBytes(dest []any) []any {
	var scan []any
	for i, d := range dest {
		if b, ok := d.(*[]byte); ok {
			if scan == nil {
				scan = slices.Clone(dest)
			}
			scan[i] = owned{b}
		}
	}
	if scan == nil {
		return dest
	}
	return scan
}

// owned scans a column into a []byte without a copy of a blob; other
// values are converted as database/sql converts them for a []byte.
type owned struct{ p *[]byte }

func (o owned) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		*o.p = v
	case string:
		*o.p = []byte(v)
	case nil:
		*o.p = nil
	case int64:
		*o.p = strconv.AppendInt(nil, v, 10)
	case float64:
		*o.p = strconv.AppendFloat(nil, v, 'g', -1, 64)
	case bool:
		*o.p = strconv.AppendBool(nil, v)
	case time.Time:
		*o.p = v.AppendFormat(nil, time.RFC3339Nano)
	default:
		return fmt.Errorf("sqlite: cannot scan %T into bytes", src)
	}
	return nil
}

// Exec runs the prepared statement of query where there is one (a write
// statement prepared at Open), else its text.
func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if st := c.stmt(ctx, query); st == nil {
		res, err = c.q.ExecContext(ctx, bind(query), args...)
	} else {
		res, err = st.ExecContext(ctx, args...)
	}
	if err != nil {
		return 0, wrap(err)
	}
	n, err := res.RowsAffected()
	return n, wrap(err)
}

// txConn is a database/sql transaction (sqlstore.Tx).
type txConn struct {
	conn
	sqlTx *sql.Tx
}

// beginTx begins a transaction on pool, the write connection: an
// immediate one, which holds the write lock from the start.
func beginTx(ctx context.Context, pool *sql.DB) (txConn, error) {
	tx, err := pool.BeginTx(ctx, nil)
	return txConn{conn{q: tx, tx: tx}, tx}, wrap(err)
}

// beginner returns beginTx on pool for the shared store code.
func beginner(pool *sql.DB) func(context.Context) (sqlstore.Tx, error) {
	return func(ctx context.Context) (sqlstore.Tx, error) {
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

// bind rewrites a statement of package sqlstore, whose placeholders are
// $1, $2, ..., into SQLite's ?1, ?2, ...; SQLite's own statements, written
// with ?, pass unchanged. sqlstore's statements hold no $ but in their
// placeholders. Statements are bound once, when prepared (statements); a
// statement run unprepared is bound on each run.
func bind(query string) string {
	if !strings.Contains(query, "$") {
		return query
	}
	return strings.ReplaceAll(query, "$", "?")
}
