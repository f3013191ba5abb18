package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/chainquery/chainquery/sqlstore"
)

// bulkRows is how many rows one INSERT statement carries. Each statement
// execution has a fixed cost in the driver; many rows per statement spread
// it (measured: see BenchmarkWriteBlocks). 64 rows of the widest table (20
// columns) stay far below SQLite's limit of 32766 parameters.
const bulkRows = 64

// bulkTable is a table written in bulk: its INSERT statements for 64, 32,
// 16, 8, 4, 2 and 1 rows, so that any number of rows goes in at most
// log2(bulkRows)+1 statements per 64 rows. They are prepared at Open
// (writeStatements).
type bulkTable struct {
	sizes []int    // bulkRows, bulkRows/2, ..., 1
	stmts []string // the INSERT of sizes[i] rows
}

// traceCounts is the table of sqlstore.BlockBatch.AddTraceCounts: its
// INSERTs add to the rows that exist.
var traceCounts = sqlstore.Table{Name: "trace_counts", Columns: []string{"chain", "dir", "address", "bucket", "n", "list"}}

// logPostings is the table of sqlstore.BlockBatch.AddLogPostings: its
// INSERTs add to the rows that exist (and Insert's of a bucket's first
// rows are the same statements).
var logPostings = sqlstore.LogPostings

// logCounts is the table of sqlstore.BlockBatch.AddLogCounts: its INSERTs
// add to the rows that exist.
var logCounts = sqlstore.Table{Name: "log_counts", Columns: []string{"chain", "kind", "key", "bucket", "n"}}

// bulkTables are the tables of a block batch (sqlstore.BlockTables,
// sqlstore.HistoryTables, and traceCounts), by name.
//
// The INSERTs say OR FAIL. With SQLite's default (ABORT), a statement that
// writes several rows must be able to undo itself alone, so SQLite copies
// every page it is about to change into a statement journal first, a
// visible share of the ingester's CPU (subjournalPage, memjrnlWrite). FAIL
// stops at the bad row without undoing the statement, which needs no
// journal; the error still ends the batch, whose whole transaction is
// rolled back (conformance: Reorg/FailedWriteLeavesNothing). The same-run
// A/B is in docs/benchmarks.md ("What changed", OR FAIL).
var bulkTables = func() map[string]bulkTable {
	m := map[string]bulkTable{}
	for _, t := range append(append(sqlstore.BlockTables(), sqlstore.HistoryTables()...), traceCounts, logPostings, logCounts) {
		head := "INSERT OR FAIL INTO " + t.Name + " (" + strings.Join(t.Columns, ", ") + ") VALUES "
		tuple := "(" + placeholders(len(t.Columns)) + ")"
		tail := ""
		if t.Name == traceCounts.Name {
			// A list given is appended to the row's (its bytes after
			// those there: history.DecodePostings reads them as runs).
			// || makes text of blobs, byte for byte; CAST keeps a blob.
			tail = ` ON CONFLICT (chain, bucket, dir, address) DO UPDATE SET n = n + excluded.n,
				list = CASE WHEN excluded.list IS NULL THEN list ELSE CAST(coalesce(list, x'') || excluded.list AS BLOB) END`
		}
		if t.Name == logCounts.Name {
			tail = ` ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = n + excluded.n`
		}
		if t.Name == logPostings.Name {
			tail = ` ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = n + excluded.n,
				topics = CAST(topics || excluded.topics AS BLOB), list = CAST(list || excluded.list AS BLOB),
				tags = CAST(tags || excluded.tags AS BLOB)`
		}
		var b bulkTable
		for n := bulkRows; n >= 1; n /= 2 {
			b.sizes = append(b.sizes, n)
			b.stmts = append(b.stmts, head+strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ")+tail)
		}
		m[t.Name] = b
	}
	return m
}()

// insert inserts the rows of t in tx, the largest statements first.
func (db *DB) insert(ctx context.Context, tx *sql.Tx, t *sqlstore.Table) error {
	b, cols := bulkTables[t.Name], len(t.Columns)
	values := t.Values
	for i, n := range b.sizes {
		for len(values) >= n*cols {
			stmt, err := db.txStmt(ctx, tx, b.stmts[i])
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, values[:n*cols]...); err != nil {
				return err
			}
			values = values[n*cols:]
		}
	}
	return nil
}
