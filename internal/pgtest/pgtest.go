// Package pgtest gives tests a throwaway PostgreSQL database on the servers
// scripts/pg starts. It is the one copy of that helper: the tests of the
// postgres store, of the commands, of ingestion and the end-to-end tests all
// use it, so that creating, naming and dropping test databases (and the
// rule that a missing server fails under CI) are written once.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/chainquery/chainquery/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// Admin returns the admin DSN of the primary scripts/pg started; without
// one the test skips, or fails under CI (testenv.Postgres).
func Admin(tb testing.TB) string {
	tb.Helper()
	return testenv.Postgres(tb, testenv.PostgresAdmin)
}

// NewDatabase creates an empty database with a random name on the server
// of adminDSN, drops it when the test ends, and returns its name and DSN.
// Whatever uses the database must be closed by then: register its cleanup
// after calling NewDatabase (cleanups run last registered first).
func NewDatabase(tb testing.TB, adminDSN string) (name, dsn string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var b [8]byte
	rand.Read(b[:])
	name = "cq_test_" + hex.EncodeToString(b[:])
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
	return name, WithDatabase(tb, adminDSN, name)
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
