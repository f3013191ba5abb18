package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery/sqlstore"
)

// TestReadTx holds what a request's read transaction promises now that its
// BEGIN travels with its first statement and its ROLLBACK with the next
// read of its connection: no connection before that statement, one
// snapshot for every statement after it (a write committed in between is
// not seen), read-only; after Rollback the connection waits in its
// transaction, to be ended by the next read that takes it or by the sweep;
// a parked connection the server closed is replaced, not reported.
func TestReadTx(t *testing.T) {
	db := MustOpen(t, NewTestDatabase(t, RequireEnv(t, EnvAdminDSN)), Options{MaxConns: 2})
	ctx := context.Background()
	if _, err := db.write.Exec(ctx, `CREATE TABLE readtx_probe (n int)`); err != nil {
		t.Fatal(err)
	}
	count := func(c sqlstore.Conn) int {
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
	// idleInTx counts the database's sessions left inside a transaction.
	idleInTx := func() int {
		t.Helper()
		var n int
		if err := db.write.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
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
	swept := func() {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); acquired() != 0 || idleInTx() != 0; {
			if time.Now().After(deadline) {
				t.Fatalf("%s after a request ended: %d connections held, %d sessions idle in a transaction, want none",
					5*time.Second, acquired(), idleInTx())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	tx := begin()
	if n := acquired(); n != 0 {
		t.Fatalf("a read transaction holds %d connections before its first statement, want 0", n)
	}
	insert()
	if n := count(tx); n != 1 {
		t.Fatalf("first statement counts %d rows, want 1", n)
	}
	insert() // committed by another connection: not in the snapshot
	if n := count(tx); n != 1 {
		t.Fatalf("second statement counts %d rows, want 1: the statements do not share a snapshot", n)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO readtx_probe VALUES (2)`); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write in the read transaction: %v, want a read-only transaction's error", err)
	}
	tx.Rollback()
	if n := idleInTx(); n != 1 {
		t.Fatalf("%d sessions idle in a transaction after Rollback, want 1 (parked)", n)
	}
	// The next read takes the parked connection, ends its transaction and
	// sees every commit.
	if n := count(db.Read); n != 2 {
		t.Fatalf("the next read counts %d rows, want 2", n)
	}
	if n, m := acquired(), idleInTx(); n != 0 || m != 0 {
		t.Fatalf("after a read that took the parked connection: %d held, %d idle in a transaction, want none", n, m)
	}

	// A parked transaction nobody takes is swept.
	tx = begin()
	count(tx)
	tx.Rollback()
	swept()

	// A parked connection that the server closes is replaced.
	tx = begin()
	count(tx)
	tx.Rollback()
	if _, err := db.write.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND state LIKE 'idle in transaction%'`); err != nil {
		t.Fatal(err)
	}
	if n := count(db.Read); n != 2 {
		t.Fatalf("after the parked session was terminated a read counts %d rows, want 2", n)
	}

	// A transaction whose first statement fails ends as well.
	tx = begin()
	if err := tx.Query(ctx, `SELECT no_such_column FROM readtx_probe`, nil, nil, func() error { return nil }); err == nil {
		t.Fatal("a failing first statement gave no error")
	}
	tx.Rollback()
	tx = begin()
	if n := count(tx); n != 2 {
		t.Fatalf("after a failed transaction a new one counts %d rows, want 2", n)
	}
	tx.Rollback()
	// An Exec begins one as a Query does; Commit gives the connection back.
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
	// Two transactions at once on a pool of two, then a read that waits
	// for one of them.
	a, b := begin(), begin()
	count(a)
	count(b)
	done := make(chan int)
	go func() {
		var n int
		db.Read.Query(ctx, `SELECT count(*) FROM readtx_probe`, nil, []any{&n}, func() error { return nil })
		done <- n
	}()
	time.Sleep(20 * time.Millisecond)
	a.Rollback()
	if n := <-done; n != 3 {
		t.Fatalf("a read waiting for a connection counts %d rows, want 3", n)
	}
	b.Rollback()
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	swept()
}

// TestReadPoolReleases runs read transactions one after the other, each
// taking the connection the one before left in its transaction: every
// releaseEvery-th still goes back to pgxpool, so that a connection under
// steady load meets pgxpool's lifetime and health checks.
func TestReadPoolReleases(t *testing.T) {
	db := MustOpen(t, NewTestDatabase(t, RequireEnv(t, EnvAdminDSN)), Options{MaxConns: 1})
	ctx := context.Background()
	const n = 2*releaseEvery + 1
	before := db.read.Stat().AcquireCount()
	for range n {
		tx, err := db.ReadTx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
	}
	if got := db.read.Stat().AcquireCount() - before; got != 3 {
		t.Fatalf("%d read transactions in a row acquired %d connections from pgxpool, want 3 (one, then one after each %d)", n, got, releaseEvery)
	}
}

// TestReadTxBatch sends statements in one batch through a read
// transaction (sqlstore.Batcher), as its first statements and later: each
// statement's rows reach its own Row in order, the batch that begins the
// transaction takes its snapshot, and an error in any statement is the
// batch's.
func TestReadTxBatch(t *testing.T) {
	db := MustOpen(t, NewTestDatabase(t, RequireEnv(t, EnvAdminDSN)), Options{MaxConns: 1})
	ctx := context.Background()
	if _, err := db.write.Exec(ctx, `CREATE TABLE readtx_probe (n int); INSERT INTO readtx_probe VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	var got []string
	var n int
	query := func(name, q string, args ...any) sqlstore.Query {
		return sqlstore.Query{SQL: q, Args: args, Dest: []any{&n}, Row: func() error {
			got = append(got, fmt.Sprintf("%s:%d", name, n))
			return nil
		}}
	}
	tx, err := db.ReadTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	b, ok := tx.(sqlstore.Batcher)
	if !ok {
		t.Fatal("the read transaction is no sqlstore.Batcher")
	}
	err = b.QueryBatch(ctx, []sqlstore.Query{
		query("a", `SELECT n FROM readtx_probe ORDER BY n`),
		query("b", `SELECT count(*)::int FROM readtx_probe WHERE n > $1`, 1),
		query("c", `SELECT n * 10 FROM readtx_probe ORDER BY n DESC`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a:1 a:2 b:1 c:20 c:10"; strings.Join(got, " ") != want {
		t.Fatalf("rows %q, want %q", strings.Join(got, " "), want)
	}
	if _, err := db.write.Exec(ctx, `INSERT INTO readtx_probe VALUES (3)`); err != nil {
		t.Fatal(err)
	}
	got = nil
	err = b.QueryBatch(ctx, []sqlstore.Query{
		query("d", `SELECT count(*)::int FROM readtx_probe`),
		query("e", `SELECT max(n) FROM readtx_probe`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "d:2 e:2"; strings.Join(got, " ") != want {
		t.Fatalf("in the batch's snapshot: rows %q, want %q", strings.Join(got, " "), want)
	}
	err = b.QueryBatch(ctx, []sqlstore.Query{
		query("f", `SELECT 1`),
		query("g", `SELECT no_such_column FROM readtx_probe`),
		query("h", `SELECT 1`),
	})
	if err == nil || !strings.Contains(err.Error(), "no_such_column") {
		t.Fatalf("a batch with a failing statement: %v, want its error", err)
	}
}
