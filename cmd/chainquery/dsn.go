package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlite"
)

// defaultDSN is where a first run keeps its data: a file in the working
// directory, so that trying chainquery needs no set-up at all.
const defaultDSN = "sqlite:chainquery.db"

const dsnUsage = `
Databases (--db, or the environment variable CHAINQUERY_DB; default ` + defaultDSN + `):
  sqlite:PATH          the embedded SQLite store in the file PATH, created with
                       its schema if missing (e.g. sqlite:/var/lib/chainquery.db)
  postgres://USER:PASSWORD@HOST:PORT/DATABASE?PARAMS   (or postgresql://)
                       the PostgreSQL store (12 or later); the schema is created
                       and migrated at start. PARAMS are libpq's (sslmode=...).
                       Logs show it as postgres://USER@HOST:PORT/DATABASE.
`

// dsn is a parsed --db value. It is the one place that knows the accepted
// forms, so that every command refuses the same mistakes the same way.
type dsn struct {
	scheme string // "sqlite" or "postgres"
	path   string // the file of a sqlite DSN
	url    *url.URL
}

// parseDSN parses s. It is strict on purpose: a bare path or a sqlite://
// URL might mean several files, and guessing wrong silently creates an empty
// database somewhere unexpected. Errors never repeat s whole, since a DSN can
// hold a password.
func parseDSN(s string) (dsn, error) {
	switch {
	case s == "":
		return dsn{}, fmt.Errorf("--db is empty: use sqlite:PATH, e.g. %s", defaultDSN)
	case strings.HasPrefix(s, "sqlite:"):
		path := strings.TrimPrefix(s, "sqlite:")
		switch {
		case path == "":
			return dsn{}, fmt.Errorf("--db sqlite: needs a file path, e.g. %s", defaultDSN)
		case strings.HasPrefix(path, "//"):
			return dsn{}, fmt.Errorf("--db takes sqlite:PATH, not a URL: write sqlite:chainquery.db for a relative path or sqlite:/var/lib/chainquery.db for an absolute one")
		case strings.ContainsAny(path, "?#"):
			return dsn{}, fmt.Errorf("--db sqlite:PATH takes no query parameters: the store sets its own (WAL mode, busy timeout)")
		case path == ":memory:":
			return dsn{}, fmt.Errorf("--db sqlite::memory: is not supported: the store keeps separate reader and writer connections, which an in-memory database cannot share; use a file")
		}
		return dsn{scheme: "sqlite", path: path}, nil
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		u, err := url.Parse(s)
		if err != nil {
			return dsn{}, fmt.Errorf("--db is not a valid PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
		}
		return dsn{scheme: "postgres", url: u}, nil
	}
	if scheme, _, ok := strings.Cut(s, ":"); ok && scheme != "" && !strings.ContainsAny(scheme, `/\.`) {
		return dsn{}, fmt.Errorf("--db scheme %q is not supported: use sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE", scheme)
	}
	if strings.ContainsAny(s, "=@ ") { // a keyword DSN or similar: may hold a password
		return dsn{}, fmt.Errorf("--db has no scheme: use sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE")
	}
	return dsn{}, fmt.Errorf("--db %q has no scheme: use sqlite:%s for a SQLite file, or postgres://USER:PASSWORD@HOST:PORT/DATABASE", s, s)
}

// String returns the DSN fit for logs and error messages; a PostgreSQL DSN
// loses its password and its parameters (see redactPostgres).
func (d dsn) String() string {
	switch d.scheme {
	case "sqlite":
		return "sqlite:" + d.path
	case "postgres":
		return redactPostgres(d.url)
	}
	return ""
}

// storeOptions is how to open a store, beyond its DSN.
type storeOptions struct {
	// mustExist makes a SQLite file that does not exist an error instead
	// of a new empty database: listing or revoking keys in a mistyped file
	// should not quietly succeed on nothing. A PostgreSQL database must
	// exist anyway (the store creates tables, not databases).
	mustExist bool
	pg        pgOptions // PostgreSQL only; the zero value means pgx's defaults
	readDB    *dsn      // PostgreSQL only: the replica that answers reads
}

// open opens the store d names and returns it with the function that closes
// it (its Close).
func (d dsn) open(ctx context.Context, o storeOptions) (chainquery.Store, func() error, error) {
	switch d.scheme {
	case "sqlite":
		if o.mustExist {
			if _, err := os.Stat(d.path); os.IsNotExist(err) {
				// After chainquery dev, its database is the one meant.
				dev := strings.TrimPrefix(defaultDevDSN, "sqlite:")
				if _, err := os.Stat(dev); err == nil && d.path != dev {
					return nil, nil, fmt.Errorf("database %s does not exist; the dev database is %s: add --db %s", d, dev, defaultDevDSN)
				}
				return nil, nil, fmt.Errorf("database %s does not exist (chainquery keys create or serve creates it)", d)
			}
		}
		db, err := sqlite.Open(d.path)
		if err != nil {
			return nil, nil, fmt.Errorf("open database %s: %w", d, err)
		}
		return db, db.Close, nil
	case "postgres":
		db, err := openPostgres(ctx, d, o)
		if err != nil {
			return nil, nil, err
		}
		return db, db.Close, nil
	}
	return nil, nil, fmt.Errorf("no database configured")
}

// openStore opens the database and keeps it for Close.
func (m *Main) openStore(ctx context.Context, d dsn, o storeOptions) (chainquery.Store, error) {
	s, closeStore, err := d.open(ctx, o)
	if err != nil {
		return nil, err
	}
	m.closers = append(m.closers, closeStore)
	return s, nil
}

// dbDefault returns the --db value used when the flag is not given:
// CHAINQUERY_DB, else defaultDSN. It is registered as the flag's default so
// that -h shows what will really be used.
func (m *Main) dbDefault() string { return m.env("CHAINQUERY_DB", defaultDSN) }

// parseDBFlag parses the --db value of the command named help.
func parseDBFlag(help, s string) (dsn, error) {
	d, err := parseDSN(s)
	if err != nil {
		return dsn{}, &usageError{msg: err.Error(), help: help}
	}
	return d, nil
}
