package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/postgres"
)

// Defaults of the PostgreSQL flags of serve and ingest evm.
//
// A pool of 16 read connections per API server keeps a few servers well
// under PostgreSQL's default max_connections (100) while covering the
// concurrency one server can use: every API query is a bounded index walk,
// short enough that 16 connections serve thousands of requests a second
// (the reads' times on PostgreSQL: docs/benchmarks.md, "SQLite and
// PostgreSQL on the same data"). The statement timeout bounds what a
// request can cost the database when it is overloaded or a replica stalls:
// 5 s is far above any API query's normal time and well below the HTTP
// write timeout (30 s), so the client gets a 503 it may retry rather than a
// dropped connection.
const (
	defaultPGMaxConns         = 16
	defaultPGStatementTimeout = 5 * time.Second
	maxPGMaxConns             = 1000

	// pgConnectTimeout is the connect_timeout (seconds) given to a DSN that
	// sets none: without it a dial to an unreachable host waits for the
	// kernel to give up (about two minutes on Linux), which at start looks
	// like a hang and during an outage holds requests instead of answering
	// 503.
	pgConnectTimeout = "10"
)

// pgOptions are the --pg-* flags. They tune the read pool of the PostgreSQL
// store; the write pool has at most 4 connections, and writes have no
// statement timeout (a large COPY batch may take longer than any query).
type pgOptions struct {
	maxConns         int
	statementTimeout time.Duration
}

// register adds the flags to fs.
func (o *pgOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&o.maxConns, "pg-max-conns", defaultPGMaxConns,
		"PostgreSQL only: connections of the read pool (`N`); the write pool has at most 4")
	fs.DurationVar(&o.statementTimeout, "pg-statement-timeout", defaultPGStatementTimeout,
		"PostgreSQL only: cancel a read statement after `DURATION` (the request gets 503); 0: no limit")
}

// check returns a usage error for values out of range, or for --pg-* flags
// given with a database that is not PostgreSQL (set holds the flags given).
func (o *pgOptions) check(help string, db dsn, set map[string]bool) error {
	if db.scheme != "postgres" {
		for _, name := range []string{"pg-max-conns", "pg-statement-timeout"} {
			if set[name] {
				return usagef(help, "--%s applies to a PostgreSQL --db only", name)
			}
		}
		return nil
	}
	if o.maxConns < 1 || o.maxConns > maxPGMaxConns {
		return usagef(help, "--pg-max-conns must be between 1 and %d", maxPGMaxConns)
	}
	if o.statementTimeout < 0 || (o.statementTimeout > 0 && o.statementTimeout < time.Millisecond) {
		return usagef(help, "--pg-statement-timeout must be 0 (no limit) or at least 1ms")
	}
	return nil
}

// checkReadDB parses the --read-db value s (empty: none), which only a
// PostgreSQL --db takes.
func checkReadDB(help, s string, db dsn) (*dsn, error) {
	if s == "" {
		return nil, nil
	}
	d, err := parseDSN(s)
	if err != nil {
		return nil, usagef(help, "--read-db: %s", strings.TrimPrefix(err.Error(), "--db "))
	}
	if d.scheme != "postgres" {
		return nil, usagef(help, "--read-db must be a postgres:// DSN (a streaming replica of the --db server)")
	}
	if db.scheme != "postgres" {
		return nil, usagef(help, "--read-db needs a PostgreSQL --db: it names a streaming replica of that server")
	}
	return &d, nil
}

// openPostgres opens the PostgreSQL store of d. Its errors name the server
// by its redacted DSN and never hold a password.
func openPostgres(ctx context.Context, d dsn, o storeOptions) (*postgres.DB, error) {
	opts := postgres.Options{
		MaxConns:         int32(o.pg.maxConns),
		StatementTimeout: o.pg.statementTimeout,
	}
	where := d.String()
	if o.readDB != nil {
		opts.ReadDSN = connString(o.readDB.url)
		where += " (reads from " + o.readDB.String() + ")"
	}
	db, err := postgres.Open(ctx, connString(d.url), opts)
	if err != nil {
		hidden := secrets(d.url)
		if o.readDB != nil {
			hidden = append(hidden, secrets(o.readDB.url)...)
		}
		return nil, fmt.Errorf("open database %s: %s", where, scrub(causeText(err), hidden...))
	}
	return db, nil
}

// causeText returns err's text without the chainquery error that the store
// joins to a driver error ("chainquery error: code=unavailable ..."): that
// part is for the API's clients, and an operator reading why the database
// would not open wants the driver's own words.
func causeText(err error) string {
	text := err.Error()
	var e *chainquery.Error
	if errors.As(err, &e) {
		text = strings.Replace(text, e.Error()+"\n", "", 1)
	}
	return text
}

// connString returns the DSN handed to pgx: u as given, with a
// connect_timeout unless u or the environment (PGCONNECT_TIMEOUT) sets one.
func connString(u *url.URL) string {
	q := u.Query()
	if q.Has("connect_timeout") || os.Getenv("PGCONNECT_TIMEOUT") != "" {
		return u.String()
	}
	c := *u
	q.Set("connect_timeout", pgConnectTimeout)
	c.RawQuery = q.Encode()
	return c.String()
}

// redactPostgres returns a PostgreSQL DSN fit for logs:
// postgres://USER@HOST:PORT/DATABASE. The password goes, and so do the
// parameters, since libpq lets them carry one too (password=,
// sslpassword=).
func redactPostgres(u *url.URL) string {
	out := u.Scheme + "://"
	if u.User != nil && u.User.Username() != "" {
		out += u.User.Username() + "@"
	}
	return out + u.Host + u.EscapedPath()
}

// secrets returns the passwords a PostgreSQL DSN holds.
func secrets(u *url.URL) []string {
	var out []string
	if p, ok := u.User.Password(); ok && p != "" {
		out = append(out, p)
	}
	q := u.Query()
	for _, k := range []string{"password", "sslpassword"} {
		if p := q.Get(k); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// scrub returns text with every secret masked. pgx does not put passwords
// in its errors; this keeps it so whatever a later version or a server
// message does.
func scrub(text string, secrets ...string) string {
	for _, s := range secrets {
		text = strings.ReplaceAll(text, s, "xxxxx")
	}
	return text
}

// dsnFlag is the value of --db and --read-db. Its String, which -h shows as
// the default, is the redacted DSN: the default comes from the environment
// (CHAINQUERY_DB), which may hold a password.
type dsnFlag struct{ s string }

func (f *dsnFlag) String() string {
	if f == nil || f.s == "" {
		return ""
	}
	if d, err := parseDSN(f.s); err == nil {
		return d.String()
	}
	return "(not a valid DSN)"
}

func (f *dsnFlag) Set(s string) error { f.s = s; return nil }

// dsnVar defines a DSN flag with default def.
func dsnVar(fs *flag.FlagSet, name, def, usage string) *dsnFlag {
	f := &dsnFlag{s: def}
	fs.Var(f, name, usage)
	return f
}
