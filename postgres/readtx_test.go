package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/sqlstore"
)

// TestReadTx holds what a request's read transaction promises now that its
// BEGIN travels with its first statement: no connection before that
// statement, one snapshot for every statement after it (a write committed
// in between is not seen), read-only, and the connection back in the pool
// after Rollback, also when the first statement failed.
func TestReadTx(t *testing.T) {
	db := MustOpen(t, NewTestDatabase(t, RequireEnv(t, EnvAdminDSN)), Options{MaxConns: 2})
	ctx := context.Background()
	if _, err := db.write.Exec(ctx, `CREATE TABLE readtx_probe (n int)`); err != nil {
		t.Fatal(err)
	}
	count := func(c interface {
		Query(context.Context, string, []any, []any, func() error) error
	}) int {
		t.Helper()
		var n int
		if err := c.Query(ctx, `SELECT count(*) FROM readtx_probe`, nil, []any{&n}, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert := func() {
		t.Helper()
		if _, err := db.write.Exec(ctx, `INSERT INTO readtx_probe VALUES (1)`); err != nil {
			t.Fatal(err)
		}
	}
	acquired := func() int32 { return db.read.Stat().AcquiredConns() }
	// begin rolls each transaction back when the test ends, also when it
	// fails: Close waits for every connection held.
	begin := func() sqlstore.Tx {
		t.Helper()
		tx, err := db.ReadTx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tx.Rollback)
		return tx
	}

	tx := begin()
	if n := acquired(); n != 0 {
		t.Fatalf("a read transaction holds %d connections before its first statement, want 0", n)
	}
	insert()
	if n := count(tx); n != 1 {
		t.Fatalf("first statement counts %d rows, want 1", n)
	}
	if n := acquired(); n != 1 {
		t.Fatalf("after its first statement the transaction holds %d connections, want 1", n)
	}
	insert() // committed by another connection: not in the snapshot
	if n := count(tx); n != 1 {
		t.Fatalf("second statement counts %d rows, want 1: the statements do not share a snapshot", n)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO readtx_probe VALUES (2)`); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write in the read transaction: %v, want a read-only transaction's error", err)
	}
	tx.Rollback()
	if n := acquired(); n != 0 {
		t.Fatalf("after Rollback %d connections are held, want 0", n)
	}
	if n := count(db.Read); n != 2 {
		t.Fatalf("the pool counts %d rows, want 2", n)
	}

	// A transaction whose first statement fails gives its connection back.
	tx = begin()
	if err := tx.Query(ctx, `SELECT no_such_column FROM readtx_probe`, nil, nil, func() error { return nil }); err == nil {
		t.Fatal("a failing first statement gave no error")
	}
	tx.Rollback()
	if n := acquired(); n != 0 {
		t.Fatalf("after a failed first statement and Rollback %d connections are held, want 0", n)
	}
	// As does one that ran nothing, and an Exec begins one as a Query does.
	begin().Rollback()
	tx = begin()
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	insert()
	if n := count(tx); n != 2 {
		t.Fatalf("after an Exec first the transaction counts %d rows, want 2", n)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if n := acquired(); n != 0 {
		t.Fatalf("after Commit %d connections are held, want 0", n)
	}
}
