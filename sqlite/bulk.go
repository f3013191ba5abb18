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

// bulkTable is a table written in bulk: its INSERT statements for 64, 32,
// 16, 8, 4, 2 and 1 rows, so that any number of rows goes in at most
// log2(bulkRows)+1 statements.
type bulkTable struct {
	cols  int
	sizes []int    // bulkRows, bulkRows/2, ..., 1
	stmts []string // the INSERT of sizes[i] rows
}

func newBulkTable(table string, columns ...string) bulkTable {
	head := "INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES "
	tuple := "(" + placeholders(len(columns)) + ")"
	t := bulkTable{cols: len(columns)}
	for n := bulkRows; n >= 1; n /= 2 {
		t.sizes = append(t.sizes, n)
		t.stmts = append(t.stmts, head+strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", "))
	}
	return t
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
	args := b.args
	for i, n := range b.table.sizes {
		for len(args) >= n*b.table.cols {
			stmt, err := b.db.txStmt(ctx, b.tx, b.table.stmts[i])
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, args[:n*b.table.cols]...); err != nil {
				return err
			}
			args = args[n*b.table.cols:]
		}
	}
	return nil
}
