package postgres

// Test helpers shared by the tests of package postgres and postgres_test
// (exported here, they exist in test builds only).

import (
	"context"
	"fmt"
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

// DisableAutovacuum turns autovacuum off, for the heap and the TOAST of
// every table of the database of dsn, and makes with it off the partitions
// of traces and logs that a write of blocks lo to hi needs (their ranges
// and the one after, as ensurePartitions does), before the writer makes
// them without. A test whose plans depend on the tables' statistics or
// pages calls it after Open and before it writes, and CheckAutovacuumOff
// once it has written: autovacuum comes by a new database at a moment that
// depends on everything else the server does, and a vacuum or an analyze
// in between changes the plans. A vacuum truncates a partition whose rows a
// freeze turned into history, which the planner then takes for empty and
// scans sequentially (issue 29).
func DisableAutovacuum(tb testing.TB, dsn string, lo, hi uint64) {
	tb.Helper()
	ctx, conn := connectForTest(tb, dsn)
	for r := int64(lo / PartitionBlocks); r <= int64(hi/PartitionBlocks)+1; r++ {
		for _, table := range partitionedTables {
			q := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF %s FOR VALUES FROM (%d) TO (%d)`,
				partitionName(table, r), table, r*PartitionBlocks, (r+1)*PartitionBlocks)
			if _, err := conn.Exec(ctx, q); err != nil {
				tb.Fatal(err)
			}
		}
	}
	// Partitioned tables take no storage parameters; autovacuum never
	// processes them, only their partitions.
	tables, err := queryStrings(ctx, conn, `SELECT oid::regclass::text FROM pg_class
		WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'`)
	if err != nil {
		tb.Fatal(err)
	}
	for _, t := range tables {
		if _, err := conn.Exec(ctx, `ALTER TABLE `+t+` SET (autovacuum_enabled = off, toast.autovacuum_enabled = off)`); err != nil {
			tb.Fatal(err)
		}
	}
}

// CheckAutovacuumOff fails the test if a table of the database of dsn may
// be vacuumed or analyzed by autovacuum: one that DisableAutovacuum did not
// foresee, such as a partition the writer made for blocks outside the
// range it was given.
func CheckAutovacuumOff(tb testing.TB, dsn string) {
	tb.Helper()
	ctx, conn := connectForTest(tb, dsn)
	on, err := queryStrings(ctx, conn, `SELECT oid::regclass::text FROM pg_class c
		WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' AND NOT EXISTS (
			SELECT FROM pg_options_to_table(c.reloptions) WHERE option_name = 'autovacuum_enabled' AND option_value IN ('off', 'false'))
		ORDER BY 1`)
	if err != nil {
		tb.Fatal(err)
	}
	if len(on) > 0 {
		tb.Fatalf("autovacuum may change the statistics of %v while the test runs: give DisableAutovacuum the blocks written", on)
	}
}

// connectForTest connects to dsn for the test's end or a minute, whichever
// comes first.
func connectForTest(tb testing.TB, dsn string) (context.Context, *pgx.Conn) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	tb.Cleanup(cancel)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return ctx, conn
}

// queryStrings returns the first column of the rows of sql.
func queryStrings(ctx context.Context, conn *pgx.Conn, sql string) ([]string, error) {
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
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
