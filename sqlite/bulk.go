package sqlite

import (
	"context"
	"database/sql"
	"strings"
)

// bulkRows is how many rows one INSERT statement carries. Each statement
// execution has a fixed cost in the driver; many rows per statement spread
// it (measured: see BenchmarkWriteBlocks). 64 rows of the widest table (20
// columns) stay far below SQLite's limit of 32766 parameters.
const bulkRows = 64

// bulkInsert buffers rows of one table and inserts them bulkRows per
// statement, the rest one by one, within one transaction. Its two statements
// are prepared at Open (writeStatements).
type bulkInsert struct {
	db    *DB
	tx    *sql.Tx
	table bulkTable
	args  []any
}

// bulkTable is a table written in bulk: its single-row and its bulkRows-row
// INSERT statements.
type bulkTable struct {
	cols      int
	one, many string
}

func newBulkTable(table string, columns ...string) bulkTable {
	head := "INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES "
	tuple := "(" + placeholders(len(columns)) + ")"
	return bulkTable{
		cols: len(columns),
		one:  head + tuple,
		many: head + strings.TrimSuffix(strings.Repeat(tuple+", ", bulkRows), ", "),
	}
}

func newBulkInsert(db *DB, tx *sql.Tx, t bulkTable) *bulkInsert {
	return &bulkInsert{db: db, tx: tx, table: t}
}

// add buffers one row; it inserts the buffer when it is full.
func (b *bulkInsert) add(ctx context.Context, values ...any) error {
	if len(values) != b.table.cols {
		panic("sqlite: bulk insert with the wrong number of values")
	}
	b.args = append(b.args, values...)
	if len(b.args) == bulkRows*b.table.cols {
		return b.flush(ctx)
	}
	return nil
}

// flush inserts the buffered rows.
func (b *bulkInsert) flush(ctx context.Context) error {
	defer func() { clear(b.args); b.args = b.args[:0] }()
	if len(b.args) == bulkRows*b.table.cols {
		stmt, err := b.db.txStmt(ctx, b.tx, b.table.many)
		if err != nil {
			return err
		}
		_, err = stmt.ExecContext(ctx, b.args...)
		return err
	}
	stmt, err := b.db.txStmt(ctx, b.tx, b.table.one)
	if err != nil {
		return err
	}
	for i := 0; i < len(b.args); i += b.table.cols {
		if _, err := stmt.ExecContext(ctx, b.args[i:i+b.table.cols]...); err != nil {
			return err
		}
	}
	return nil
}
