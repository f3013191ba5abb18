package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/chainquery/chainquery/sqlstore"
)

// The read side runs its statements on the driver's connections directly,
// not through database/sql's statements, rows and transactions: for a
// statement of one row, database/sql's path (a statement bound to the
// transaction, rows watched by a goroutine of their own, each value
// converted through reflection) cost as much of serve's CPU as SQLite's
// work, and BEGIN and ROLLBACK were parsed again for every request
// (docs/benchmarks.md, issue 31, session 38). database/sql still keeps the
// pool: a read takes one of its connections (sql.Conn) and holds it while
// it runs its statements there.

// readConnector makes the read pool's connections: the driver's, each with
// the statements it has prepared.
type readConnector struct {
	driver.Connector
	prepared *sync.Map // the texts prepared on any connection (tests)
}

func (c readConnector) Connect(ctx context.Context) (driver.Conn, error) {
	inner, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &readConn{Conn: inner, stmts: map[string]driver.Stmt{}, prepared: c.prepared}, nil
}

// readConn is a connection of the read pool. database/sql uses it as the
// driver's own (Prepare, Begin, Close); the store's reads run their
// statements on it, each prepared once and kept until the connection
// closes. Only the holder of its sql.Conn uses it, one call at a time.
type readConn struct {
	driver.Conn
	stmts    map[string]driver.Stmt
	prepared *sync.Map
	values   []driver.Value // a row's values, reused
}

// Close closes the kept statements, then the connection: SQLite keeps a
// connection whose statements are not finalized as a zombie.
func (c *readConn) Close() error {
	var errs []error
	for _, st := range c.stmts {
		errs = append(errs, st.Close())
	}
	c.stmts = nil
	return errors.Join(append(errs, c.Conn.Close())...)
}

// ResetSession and IsValid are the driver's, so that the pool discards a
// connection the driver calls unusable.
func (c *readConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *readConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// stmt returns the statement of q prepared on c, kept for the next callers
// while fewer than maxReadStatements are; closeAfter says the caller must
// close it.
func (c *readConn) stmt(ctx context.Context, q string) (st driver.Stmt, closeAfter bool, err error) {
	if st, ok := c.stmts[q]; ok {
		return st, false, nil
	}
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, bind(q))
	} else {
		st, err = c.Conn.Prepare(bind(q))
	}
	if err != nil {
		return nil, false, err
	}
	if len(c.stmts) >= maxReadStatements {
		return st, true, nil
	}
	c.stmts[q] = st
	c.prepared.Store(q, true)
	return st, false, nil
}

// query runs q on c and, for each row, assigns its values to dest and
// calls row (sqlstore.Conn.Query).
func (c *readConn) query(ctx context.Context, q string, args, dest []any, row func() error) error {
	named, err := namedArgs(args)
	if err != nil {
		return err
	}
	st, closeAfter, err := c.stmt(ctx, q)
	if err != nil {
		return wrap(err)
	}
	if closeAfter {
		defer st.Close()
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, named)
	if err != nil {
		return wrap(err)
	}
	err = c.each(rows, dest, row)
	if cerr := rows.Close(); err == nil {
		err = wrap(cerr)
	}
	return err
}

// each assigns each row of rows to dest and calls row.
func (c *readConn) each(rows driver.Rows, dest []any, row func() error) error {
	if n := len(rows.Columns()); n != len(dest) {
		return fmt.Errorf("sqlite: %d destinations for %d columns", len(dest), n)
	}
	if cap(c.values) < len(dest) {
		c.values = make([]driver.Value, len(dest))
	}
	vals := c.values[:len(dest)]
	for {
		if err := rows.Next(vals); err == io.EOF {
			break
		} else if err != nil {
			return wrap(err)
		}
		for i, v := range vals {
			if err := assign(dest[i], v); err != nil {
				return fmt.Errorf("sqlite: column %d: %w", i, err)
			}
		}
		if err := row(); err != nil {
			return err
		}
	}
	return nil
}

// exec runs q on c and returns the number of rows it changed.
func (c *readConn) exec(ctx context.Context, q string, args []any) (int64, error) {
	named, err := namedArgs(args)
	if err != nil {
		return 0, err
	}
	st, closeAfter, err := c.stmt(ctx, q)
	if err != nil {
		return 0, wrap(err)
	}
	if closeAfter {
		defer st.Close()
	}
	res, err := st.(driver.StmtExecContext).ExecContext(ctx, named)
	if err != nil {
		return 0, wrap(err)
	}
	n, err := res.RowsAffected()
	return n, wrap(err)
}

// namedArgs converts args as database/sql does for a driver without a
// converter of its own.
func namedArgs(args []any) ([]driver.NamedValue, error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("sqlite: argument %d: %w", i+1, err)
		}
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return named, nil
}

// readPool runs the API's single statements on the read pool
// (sqlstore.Store.Read): each takes a connection for its run.
type readPool struct{ pool *sql.DB }

func (p readPool) Query(ctx context.Context, q string, args, dest []any, row func() error) error {
	s, err := holdRead(ctx, p.pool)
	if err != nil {
		return err
	}
	defer s.release(false)
	return s.c.query(ctx, q, args, dest, row)
}

func (p readPool) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	s, err := holdRead(ctx, p.pool)
	if err != nil {
		return 0, err
	}
	defer s.release(false)
	return s.c.exec(ctx, q, args)
}

// heldRead is a connection of the read pool, held.
type heldRead struct {
	held *sql.Conn
	c    *readConn
}

// holdRead takes a connection of pool. database/sql lends the driver's
// connection only inside sql.Conn.Raw; it is used after Raw returns, while
// held: no one else is given that connection before release, and
// database/sql calls into a held connection only through the sql.Conn.
func holdRead(ctx context.Context, pool *sql.DB) (heldRead, error) {
	held, err := pool.Conn(ctx)
	if err != nil {
		return heldRead{}, wrap(err)
	}
	var c *readConn
	if err := held.Raw(func(dc any) error {
		var ok bool
		c, ok = dc.(*readConn)
		if !ok {
			return fmt.Errorf("sqlite: the read pool's connection is a %T", dc)
		}
		return nil
	}); err != nil {
		held.Close()
		return heldRead{}, err
	}
	return heldRead{held, c}, nil
}

// release gives the connection back to the pool, or has the pool discard
// it when bad (a transaction that did not end).
func (h heldRead) release(bad bool) {
	if bad {
		h.held.Raw(func(any) error { return driver.ErrBadConn })
	}
	h.held.Close()
}

// readTx is a read transaction on a held connection (sqlstore.Tx): a
// deferred BEGIN, whose first statement opens one snapshot of the WAL that
// every statement after it reads.
type readTx struct {
	heldRead
	ended bool
}

// readTx begins a read transaction (sqlstore.Store.ReadTx).
func (db *DB) readTx(ctx context.Context) (sqlstore.Tx, error) {
	h, err := holdRead(ctx, db.read)
	if err != nil {
		return nil, err
	}
	if _, err := h.c.exec(ctx, "BEGIN", nil); err != nil {
		h.release(true)
		return nil, err
	}
	return &readTx{heldRead: h}, nil
}

func (t *readTx) Query(ctx context.Context, q string, args, dest []any, row func() error) error {
	if t.ended {
		return sql.ErrTxDone
	}
	return t.c.query(ctx, q, args, dest, row)
}

func (t *readTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	if t.ended {
		return 0, sql.ErrTxDone
	}
	return t.c.exec(ctx, q, args)
}

// Commit ends the transaction; a read has nothing to commit.
func (t *readTx) Commit(context.Context) error { return t.end("COMMIT") }

// Rollback ends the transaction, unless it has ended. It runs whatever the
// request's context has become: the connection must leave the transaction
// before it goes back to the pool.
func (t *readTx) Rollback() { t.end("ROLLBACK") }

func (t *readTx) end(q string) error {
	if t.ended {
		return sql.ErrTxDone
	}
	t.ended = true
	_, err := t.c.exec(context.Background(), q, nil)
	t.release(err != nil)
	return err
}

// assign stores src, a value of the driver's row, in dest, one of the
// destinations sqlstore.Conn lists, converting as database/sql's Scan does
// for them. A []byte is the driver's own copy for this row (modernc's
// driver makes one for each value), kept as it is.
func assign(dest any, src driver.Value) error {
	switch d := dest.(type) {
	case *int64:
		return assignInt(d, src)
	case *int:
		var v int64
		if err := assignInt(&v, src); err != nil {
			return err
		}
		*d = int(v)
		return nil
	case *[]byte:
		return owned{d}.Scan(src)
	case *string:
		switch s := src.(type) {
		case string:
			*d = s
		case []byte:
			*d = string(s)
		case int64:
			*d = strconv.FormatInt(s, 10)
		case float64:
			*d = strconv.FormatFloat(s, 'g', -1, 64)
		default:
			return fmt.Errorf("cannot assign %T to a string", src)
		}
		return nil
	case **int64:
		if src == nil {
			*d = nil
			return nil
		}
		*d = new(int64)
		return assignInt(*d, src)
	case **string:
		if src == nil {
			*d = nil
			return nil
		}
		*d = new(string)
		return assign(*d, src)
	case *bool:
		b, err := driver.Bool.ConvertValue(src)
		if err != nil {
			return err
		}
		*d = b.(bool)
		return nil
	case *float64:
		switch s := src.(type) {
		case float64:
			*d = s
		case int64:
			*d = float64(s)
		default:
			return fmt.Errorf("cannot assign %T to a float64", src)
		}
		return nil
	case sql.Scanner:
		return d.Scan(src)
	case *any:
		*d = src
		return nil
	}
	return fmt.Errorf("cannot assign to %T", dest)
}

// assignInt stores an integer column in d; text holding an integer, as
// SQLite may give for a column of no declared type, is parsed.
func assignInt(d *int64, src driver.Value) error {
	switch s := src.(type) {
	case int64:
		*d = s
		return nil
	case string:
		v, err := strconv.ParseInt(s, 10, 64)
		*d = v
		return err
	case []byte:
		v, err := strconv.ParseInt(string(s), 10, 64)
		*d = v
		return err
	case nil:
		return errors.New("converting NULL to an integer is unsupported")
	}
	return fmt.Errorf("cannot assign %T to an integer", src)
}
