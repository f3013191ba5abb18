package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// maxReadStatements bounds the read statements each connection of the read
// pool keeps prepared (read.go). The reads' texts are fixed but for Filter
// Traces', Filter Logs' and the exports', which vary with the number of
// addresses and keys and with which of them is walked: a few hundred texts
// in all, so the bound is not reached by the API's own requests; it keeps
// the cache finite should that ever change.
const maxReadStatements = 512

// statements are the write side's prepared statements, by text, all
// prepared at Open on the single write connection (prepareAll): preparing
// one later, while a transaction holds that connection, would wait for it
// forever. Tx.StmtContext runs one in a transaction on its connection's
// prepared statement.
type statements struct {
	pool *sql.DB

	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStatements(pool *sql.DB) *statements {
	return &statements{pool: pool, m: map[string]*sql.Stmt{}}
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

// lookup returns the statement of q, or nil if it is not prepared.
func (s *statements) lookup(q string) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[q]
}

// close closes every statement; lookup finds none afterwards.
func (s *statements) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, st := range s.m {
		errs = append(errs, st.Close())
	}
	s.m = nil
	return errors.Join(errs...)
}
