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

// ReadStatements returns the number of read statements prepared on any
// connection of the read pool.
func ReadStatements(db *DB) int {
	n := 0
	db.readsPrepared.Range(func(any, any) bool { n++; return true })
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
