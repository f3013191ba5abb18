package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chainquery/chainquery/sqlite"
)

// TestReadInterrupted: a read statement on the store's read pool ends when
// its context's deadline passes, not when the statement would (the driver
// interrupts it through the context), and every connection of the pool
// answers at once afterwards. The API's request deadline relies on it.
func TestReadInterrupted(t *testing.T) {
	db := MustOpenDB(t)
	pool := sqlite.ReadPool(db)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	// Counts forever: only an interrupt ends it.
	var n int64
	err := pool.QueryRowContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c`).Scan(&n)
	if err == nil {
		t.Fatal("an endless statement returned")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the statement ended %s after its deadline of 200ms", d)
	}
	conns := sqlite.ReadConns(db)
	held := make([]func(), 0, conns)
	for range conns { // every connection, the interrupted one among them
		c, err := pool.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, func() { c.Close() })
		if err := c.QueryRowContext(context.Background(), `SELECT 1`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("a connection after the interrupt: %v", err)
		}
	}
	for _, f := range held {
		f()
	}
}
