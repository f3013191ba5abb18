package sqlite_test

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery/sqlite"
)

// TestReadTxLeavesNoTransaction: a read transaction whose request's context
// ends between its statements still leaves its transaction when rolled
// back, so that no connection goes back to the pool inside one: every
// connection of the pool then begins a transaction of its own.
func TestReadTxLeavesNoTransaction(t *testing.T) {
	db := MustOpenDB(t)
	conns := sqlite.ReadConns(db)
	for range 2 * conns {
		ctx, cancel := context.WithCancel(context.Background())
		tx, err := db.ReadTx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := tx.Query(ctx, `SELECT count(*) FROM blocks`, nil, []any{&n}, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := tx.Query(ctx, `SELECT count(*) FROM blocks`, nil, []any{&n}, func() error { return nil }); err == nil {
			t.Fatal("a statement ran after its context was canceled")
		}
		tx.Rollback()
	}
	pool := sqlite.ReadPool(db)
	held := make([]func(), 0, conns)
	defer func() {
		for _, f := range held {
			f()
		}
	}()
	for range conns {
		c, err := pool.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, func() { c.Close() })
		if _, err := c.ExecContext(context.Background(), `BEGIN`); err != nil {
			t.Fatalf("a connection of the pool after the canceled reads: %v", err)
		}
		if _, err := c.ExecContext(context.Background(), `ROLLBACK`); err != nil {
			t.Fatal(err)
		}
	}
}
