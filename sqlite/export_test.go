package sqlite

// Hooks for the tests of package sqlite_test (test builds only).

import (
	"database/sql"
	"database/sql/driver"
)

// OpenWrapped is Open with the read pool's connector wrapped by wrap.
func OpenWrapped(path string, wrap func(driver.Connector) driver.Connector) (*DB, error) {
	return open(path, wrap)
}

// WaitPrepared waits until the read statements being prepared in the
// background are.
func WaitPrepared(db *DB) { db.reads.wait() }

// ReadStatements returns the number of read statements prepared.
func ReadStatements(db *DB) int {
	db.reads.mu.Lock()
	defer db.reads.mu.Unlock()
	n := 0
	for _, s := range db.reads.m {
		if s != nil {
			n++
		}
	}
	return n
}

// ReadConns returns the size of the read pool.
func ReadConns(db *DB) int { return db.read.Stats().MaxOpenConnections }

// TipQueries returns how many Get Latest Block reads reached the store, and
// whether the WAL-index header is being watched at all.
func TipQueries(db *DB) (int64, bool) {
	return db.head.queries.Load(), db.head.shm != nil && !db.head.off.Load()
}

// ReadPool returns the read pool as the store configured it.
func ReadPool(db *DB) *sql.DB { return db.read }
