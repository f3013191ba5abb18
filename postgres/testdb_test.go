package postgres

// Test helpers shared by the tests of package postgres and postgres_test
// (exported here, they exist in test builds only).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment of the tests, set by scripts/pg.
const (
	EnvAdminDSN     = "CHAINQUERY_TEST_POSTGRES"           // admin DSN of the primary
	EnvReplicaDSN   = "CHAINQUERY_TEST_POSTGRES_REPLICA"   // admin DSN of its streaming replica
	EnvStoppableDSN = "CHAINQUERY_TEST_POSTGRES_STOPPABLE" // admin DSN of a server tests may stop
	EnvPGCtl        = "CHAINQUERY_TEST_PGCTL"              // pg_ctl of that server
)

// RequireEnv returns the environment variable name, or skips the test when it
// is unset: PostgreSQL tests need a server, which scripts/pg provides. In
// CI (env CI set) a missing server fails the test instead, since a skipped
// PostgreSQL test there would hide that the store is not tested at all.
func RequireEnv(tb testing.TB, name string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v != "" {
		return v
	}
	msg := name + " is not set: run PostgreSQL tests through scripts/pg, e.g. scripts/pg run go test ./postgres/"
	if os.Getenv("CI") != "" {
		tb.Fatal(msg + " (CI is set, so a skipped PostgreSQL test is a failure)")
	}
	tb.Skip(msg)
	return ""
}

// NewTestDatabase creates an empty database with a random name on the
// server of adminDSN, drops it when the test ends, and returns its DSN.
// Whatever uses the database must be closed by then: register its cleanup
// after calling NewTestDatabase.
func NewTestDatabase(tb testing.TB, adminDSN string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var b [8]byte
	rand.Read(b[:])
	name := "cq_test_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		tb.Fatalf("connect to the admin DSN: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, adminDSN)
		if err != nil {
			tb.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	return WithDatabase(tb, adminDSN, name)
}

// WithDatabase returns dsn with its database replaced by name.
func WithDatabase(tb testing.TB, dsn, name string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("DSN is not a URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
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
	rows, err := db.wpool.Query(ctx, sql, args...)
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
	err = db.rpool.QueryRow(ctx, `SELECT pg_is_in_recovery(), inet_server_port()`).Scan(&standby, &port)
	return standby, port, err
}
