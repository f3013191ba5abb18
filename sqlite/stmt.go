package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// maxReadStatements bounds the read statements kept prepared. The reads'
// texts are fixed but for Filter Traces, whose count, page and bucket
// statements vary with the number of from and to addresses (at most
// chainquery.MaxFilterAddresses each) and with which of them is walked:
// under 300 texts in all, so the bound is never reached by the API's own
// requests; it keeps the cache finite should that ever change.
const maxReadStatements = 512

// statements are the prepared statements of one pool, by text, prepared
// once and reused: database/sql prepares a *sql.Stmt on each connection of
// the pool the first time it runs there and keeps it, and Tx.StmtContext
// runs it in a transaction on its connection's prepared statement: parsing
// a read's text for each request was a large share of serve's CPU on Get
// Block (sqlite3Prepare; docs/benchmarks.md).
//
// The write side's statements are all prepared at Open (prepareAll); the
// reads' are prepared the first time they are asked for (lookup), in the
// background: a read asks from inside its transaction, which holds one of
// the read pool's connections, and preparing waits for a free one, so
// preparing in the request would wait forever once every connection is
// held by a request doing the same. The read that found its statement
// missing runs its text, as every read did before.
type statements struct {
	pool *sql.DB
	max  int // reads: at most max prepared on lookup; 0 for none

	mu      sync.Mutex
	m       map[string]*sql.Stmt // nil while being prepared
	closed  bool
	pending sync.WaitGroup
}

func newStatements(pool *sql.DB, max int) *statements {
	return &statements{pool: pool, max: max, m: map[string]*sql.Stmt{}}
}

// prepareAll prepares each of qs now.
func (s *statements) prepareAll(ctx context.Context, qs []string) error {
	for _, q := range qs {
		st, err := s.pool.PrepareContext(ctx, bind(q))
		if err != nil {
			return fmt.Errorf("prepare %.60s: %w", q, err)
		}
		s.mu.Lock()
		s.m[q] = st
		s.mu.Unlock()
	}
	return nil
}

// lookup returns the statement of q, or nil if it is not prepared. On a
// miss, while fewer than max are kept, it starts preparing q in the
// background for the next callers. A nil *statements has none.
func (s *statements) lookup(q string) *sql.Stmt {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[q]
	if ok || s.closed || len(s.m) >= s.max {
		return st
	}
	s.m[q] = nil
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		// A statement that fails to prepare (a busy or closed database)
		// is left out, and asked for again by the next lookup.
		st, err := s.pool.PrepareContext(context.Background(), bind(q))
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case err != nil:
			delete(s.m, q)
		case s.closed:
			st.Close()
		default:
			s.m[q] = st
		}
	}()
	return nil
}

// close closes every statement; lookup finds none afterwards. The
// statements still being prepared close themselves when done: closing the
// pool ends their wait for a connection, and wait waits for them.
func (s *statements) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, st := range s.m {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	s.m, s.closed = nil, true
	return errors.Join(errs...)
}

// wait waits until no statement is being prepared.
func (s *statements) wait() { s.pending.Wait() }
