package postgres

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestReadInterrupted: a read statement ends when its context's deadline
// passes (pgx cancels it on the server), not when the statement would, and
// the read pool answers at once afterwards, on its only connection. The
// API's request deadline relies on it; the server's statement_timeout
// (--pg-statement-timeout) is the net below it.
func TestReadInterrupted(t *testing.T) {
	db := MustOpen(t, NewTestDatabase(t, RequireEnv(t, EnvAdminDSN)), Options{MaxConns: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := db.read.Exec(ctx, `SELECT pg_sleep(60)`)
	if err == nil {
		t.Fatal("a 60 s statement returned within its 200 ms")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the statement ended %s after it started, with a deadline of 200ms", d)
	}
	var n int
	if err := db.read.QueryRow(context.Background(), `SELECT 1`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the pool after the interrupt: %v", err)
	}
	// Nothing of the statement is left running on the server (the cancel
	// request is asynchronous: give it a moment).
	var running int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err = db.write.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active'`).Scan(&running)
		if err != nil {
			t.Fatal(err)
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d statements still running on the server 5 s after their deadline", running)
		}
	}
}
