// Package testenv gives tests what they need beyond their own package: the
// recorded chain data in the repository's testdata/ folder (testdata.go), and
// the PostgreSQL servers of scripts/pg, which come from outside.
//
// A missing prerequisite skips the test on a developer's machine, where not
// everything may be set up, but fails it when the environment variable CI is
// set (non-empty): a skip there would hide that part of the code is not
// tested at all, and the run would still be green. Every test that needs
// something from outside goes through this package, so that all of them
// behave alike.
//
// The recorded chain data are the exception: they live in testdata/ at the
// repository's root (see testdata/README.md), real node answers from public
// sources, part of the repository like the code. A missing file is
// therefore never a missing prerequisite to skip over but a broken
// checkout: the test fails.
//
// Files over 100 KB are stored gzipped, as NAME.gz. Tests name them by their
// plain NAME; ReadTestdata and GlobTestdata resolve the compressed copy, so
// that which files are compressed can change without touching any test.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// EnvCI is the environment variable that turns a missing prerequisite from a
// skip into a failure. .ci/run sets it.
const EnvCI = "CI"

// Environment variables of the PostgreSQL tests, set by scripts/pg.
const (
	PostgresAdmin     = "CHAINQUERY_TEST_POSTGRES"           // admin DSN of the primary
	PostgresReplica   = "CHAINQUERY_TEST_POSTGRES_REPLICA"   // admin DSN of its streaming replica
	PostgresStoppable = "CHAINQUERY_TEST_POSTGRES_STOPPABLE" // admin DSN of a server tests may stop
	PostgresPGCtl     = "CHAINQUERY_TEST_PGCTL"              // pg_ctl of that server
)

// Require does nothing when ok is true. Otherwise the prerequisite is
// missing: it fails tb when CI is set and skips it when not, with the message
// of format and args, which should say what is missing and how to provide
// it. Either way the test stops.
func Require(tb testing.TB, ok bool, format string, args ...any) {
	tb.Helper()
	if ok {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(EnvCI) != "" {
		tb.Fatalf("%s (%s is set, so a missing prerequisite fails the test instead of skipping it)", msg, EnvCI)
	}
	tb.Skip(msg)
}

// Env returns the value of the environment variable name, which the test
// needs; how says how to set it. Require decides what an unset variable does.
func Env(tb testing.TB, name, how string) string {
	tb.Helper()
	v := os.Getenv(name)
	Require(tb, v != "", "%s is not set: %s", name, how)
	return v
}

// Postgres returns the value of name, one of the variables scripts/pg sets
// (PostgresAdmin, ...): PostgreSQL tests need a server, which scripts/pg
// starts and throws away.
func Postgres(tb testing.TB, name string) string {
	tb.Helper()
	return Env(tb, name, "run PostgreSQL tests through scripts/pg, e.g. scripts/pg run go test ./...")
}
