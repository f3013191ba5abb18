package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/sqltest"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
	"github.com/chainquery/chainquery/sqlstore"
)

// TestWriteBlocksInChunks writes 400 blocks of 31 rows (12,400 rows, more
// than one chunk of prepared rows) in one call, and the same blocks ten at a
// time into another database: every table must hold the same rows.
func TestWriteBlocksInChunks(t *testing.T) {
	ctx := context.Background()
	blocks := func() []*chainquery.BlockData {
		var out []*chainquery.BlockData
		for n := uint64(0); n < 400; n++ {
			d := storetest.Blocks()[chainquery.Polygon][0]
			d.Block.Number = n
			if n > 0 {
				d.Block.ParentHash = out[n-1].Block.Hash
			}
			d.Block.Hash[8], d.Block.Hash[9] = byte(n), byte(n>>8)
			for _, tx := range d.Transactions {
				tx.BlockNumber = n
				tx.Hash[8], tx.Hash[9] = byte(n), byte(n>>8)
			}
			out = append(out, d)
		}
		return out
	}
	dir := t.TempDir()
	write := func(name string, per int) string {
		path := filepath.Join(dir, name)
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		db.RowBlocks = -1 // every block stays rows: the rows' chunks are under test
		all := blocks()
		for len(all) > 0 {
			n := min(per, len(all))
			if err := db.WriteBlocks(ctx, chainquery.Polygon, all[:n]); err != nil {
				t.Fatal(err)
			}
			all = all[n:]
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	one, tens := dump(t, write("one.db", 400)), dump(t, write("tens.db", 10))
	if one != tens {
		t.Fatal("one call and calls of ten blocks stored different rows")
	}
	if !strings.Contains(one, "traces: 8000 rows") {
		t.Fatalf("unexpected counts:\n%.300s", one)
	}
}

// dump renders every row of the block tables, in key order.
func dump(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	for _, table := range sqlstore.BlockTables() {
		rows := sqltest.Rows(t, db, `SELECT * FROM `+table.Name+` ORDER BY 1, 2, 3, 4`)
		for _, vals := range rows {
			fmt.Fprintln(&b, vals...)
		}
		n := len(rows)
		fmt.Fprintf(&b, "%s: %d rows\n", table.Name, n)
	}
	return b.String()
}
