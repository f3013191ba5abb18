package postgres

// Test helpers shared by the tests of package postgres and postgres_test
// (exported here, they exist in test builds only).

import (
	"context"
	"testing"
	"time"

	"github.com/chainquery/chainquery/internal/pgtest"
	"github.com/chainquery/chainquery/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// Environment of the tests, set by scripts/pg (names kept here for the
// tests of this package; testenv holds them).
const (
	EnvAdminDSN     = testenv.PostgresAdmin     // admin DSN of the primary
	EnvReplicaDSN   = testenv.PostgresReplica   // admin DSN of its streaming replica
	EnvStoppableDSN = testenv.PostgresStoppable // admin DSN of a server tests may stop
	EnvPGCtl        = testenv.PostgresPGCtl     // pg_ctl of that server
)

// RequireEnv returns the value of the environment variable name, through
// testenv.Postgres: unset, it skips the test, or fails it in CI.
func RequireEnv(tb testing.TB, name string) string {
	tb.Helper()
	return testenv.Postgres(tb, name)
}

// NewTestDatabase creates an empty database on the server of adminDSN,
// dropped when the test ends, and returns its DSN (pgtest.NewDatabase).
func NewTestDatabase(tb testing.TB, adminDSN string) string {
	tb.Helper()
	_, dsn := pgtest.NewDatabase(tb, adminDSN)
	return dsn
}

// WithDatabase returns dsn with its database replaced by name.
func WithDatabase(tb testing.TB, dsn, name string) string {
	tb.Helper()
	return pgtest.WithDatabase(tb, dsn, name)
}

// MustOpen opens the store on dsn with opts and closes it when the test
// ends.
func MustOpen(tb testing.TB, dsn string, opts Options) *DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := Open(ctx, dsn, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// MustOpenDB opens the store on a fresh database of the primary.
func MustOpenDB(tb testing.TB) *DB {
	tb.Helper()
	return MustOpen(tb, NewTestDatabase(tb, RequireEnv(tb, EnvAdminDSN)), Options{})
}

// QueryForTest runs a query on the primary and calls each for every row.
func (db *DB) QueryForTest(ctx context.Context, sql string, each func(pgx.Rows) error, args ...any) error {
	rows, err := db.write.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ReadServer reports whether the server that answers reads is in recovery
// (a standby) and the port it listens on.
func (db *DB) ReadServer(ctx context.Context) (standby bool, port int, err error) {
	err = db.read.QueryRow(ctx, `SELECT pg_is_in_recovery(), inet_server_port()`).Scan(&standby, &port)
	return standby, port, err
}
