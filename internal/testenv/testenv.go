// Package testenv checks what tests need from outside the repository: the
// shared test data read in place, and the PostgreSQL servers of scripts/pg.
//
// A missing prerequisite skips the test on a developer's machine, where not
// everything may be set up, but fails it when the environment variable CI is
// set (non-empty): a skip there would hide that part of the code is not
// tested at all, and the run would still be green. Every test that needs
// something from outside goes through this package, so that all of them
// behave alike.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// EnvCI is the environment variable that turns a missing prerequisite from a
// skip into a failure. .ci/run sets it.
const EnvCI = "CI"

// EnvTestdata names the shared test data directory (the one holding evm/
// and solana/), overriding the search of SharedTestdata.
const EnvTestdata = "CHAINQUERY_TESTDATA"

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

// SharedTestdata returns the path of parts inside the shared test data, the
// real chain answers that tests read in place and never copy into the
// repository: EnvTestdata when set, else the first shared/testdata found in
// the working directory or one of its parents (the repository's
// ../shared/testdata, since go test runs in the package's directory). A
// missing directory goes through Require. A file missing inside it is not a
// missing prerequisite but broken data: the caller's read of it fails.
func SharedTestdata(tb testing.TB, parts ...string) string {
	tb.Helper()
	dir, err := findTestdata()
	Require(tb, err == nil, "shared test data not found: %v; put it at ../shared/testdata beside the repository or set %s to its path", err, EnvTestdata)
	return filepath.Join(append([]string{dir}, parts...)...)
}

func findTestdata() (string, error) {
	if dir := os.Getenv(EnvTestdata); dir != "" {
		if !isDir(dir) {
			return "", fmt.Errorf("%s=%s is not a directory", EnvTestdata, dir)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if c := filepath.Join(d, "shared", "testdata"); isDir(c) {
			return c, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no shared/testdata in %s or any parent", wd)
		}
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
