// Package postgres is the server store: every chainquery read service and
// writer on PostgreSQL, for chains too large for one machine's SQLite file.
// It answers exactly as package sqlite does (one conformance suite runs
// against both), reads through a pgx pool that may point at a streaming
// replica, writes with COPY to the primary, and keeps traces and logs in
// block-range partitions.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// Options tunes a DB. The zero value is usable.
type Options struct {
	// MaxConns caps the read pool; 0 means pgxpool's default (the larger of
	// 4 and the number of CPUs).
	MaxConns int32

	// StatementTimeout cancels a read statement that runs longer; 0 means
	// no limit. It is not applied to writes: a large COPY batch may
	// legitimately take longer than any API query should.
	StatementTimeout time.Duration

	// ReadDSN, when set, sends every API read to that server (a streaming
	// replica of the primary); writes always go to the primary.
	ReadDSN string
}

// maxWriteConns caps the write pool: an ingester writes one batch at a
// time, and key commands are rare.
const maxWriteConns = 4

// DB is the PostgreSQL store. It is safe for concurrent use.
type DB struct {
	rpool *pgxpool.Pool // API reads: the replica when Options.ReadDSN is set
	wpool *pgxpool.Pool // writes, and the reads a writer must see (BlockHash)

	// parts holds the partition ranges known to exist, so that a write
	// asks the catalog only when it enters a new range.
	partMu sync.Mutex
	parts  map[int64]bool
}

// Compile-time checks that DB is every service the API and ingesters need.
var (
	_ chainquery.TraceService        = (*DB)(nil)
	_ chainquery.LogService          = (*DB)(nil)
	_ chainquery.ReceiptService      = (*DB)(nil)
	_ chainquery.BlockService        = (*DB)(nil)
	_ chainquery.TokenBalanceService = (*DB)(nil)
	_ chainquery.APIKeyService       = (*DB)(nil)
	_ chainquery.BlockWriter         = (*DB)(nil)
	_ chainquery.TokenBalanceWriter  = (*DB)(nil)
)

// Open connects to the primary at dsn, brings its schema up to date and
// returns the store. Several processes may open the same database at once:
// migrations run under an advisory lock. A server that cannot be reached
// gives EUNAVAILABLE.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	if dsn == "" {
		return nil, fmt.Errorf("postgres: empty DSN")
	}
	wcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	wcfg.MaxConns = maxWriteConns
	if opts.MaxConns > 0 && opts.MaxConns < maxWriteConns {
		wcfg.MaxConns = opts.MaxConns
	}
	rdsn := dsn
	if opts.ReadDSN != "" {
		rdsn = opts.ReadDSN
	}
	rcfg, err := pgxpool.ParseConfig(rdsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: read DSN: %w", err)
	}
	if opts.MaxConns > 0 {
		rcfg.MaxConns = opts.MaxConns
	}
	if opts.StatementTimeout > 0 {
		rcfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprint(opts.StatementTimeout.Milliseconds())
	}
	// Both pools keep pgx's default QueryExecModeCacheStatement: each
	// connection prepares a statement the first time it runs it. Reads
	// then always run the statement's generic plan: planning a join over
	// partitions for each request's values cost more than executing it
	// (measured: a Filter Traces page 0.54 ms with custom plans, 0.14 ms
	// generic), and the generic plans are the value-independent index
	// walks that TestQueryPlans checks, like the SQLite store's.
	rcfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"

	if err := migrate(ctx, wcfg.ConnConfig); err != nil {
		return nil, err
	}
	db := &DB{parts: map[int64]bool{}}
	if db.wpool, err = pgxpool.NewWithConfig(ctx, wcfg); err != nil {
		return nil, wrap(err)
	}
	if db.rpool, err = pgxpool.NewWithConfig(ctx, rcfg); err != nil {
		db.wpool.Close()
		return nil, wrap(err)
	}
	return db, nil
}

// Close closes both pools, waiting for connections in use to be returned.
func (db *DB) Close() error {
	db.rpool.Close()
	db.wpool.Close()
	return nil
}

// Ping checks that the read server and the primary answer. It returns
// EUNAVAILABLE if either does not.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.rpool.Ping(ctx); err != nil {
		return wrap(err)
	}
	return wrap(db.wpool.Ping(ctx))
}

// migrationLock is the pg_advisory_lock key held while migrating: any
// fixed number works as long as nothing else in the database uses it
// ("chainque" in ASCII).
const migrationLock int64 = 0x636861696e717565

// migrate applies the embedded migrations not yet recorded, in name order,
// each in its own transaction with its record. It holds a session advisory
// lock throughout, so that processes starting together apply each migration
// once: the others wait, then find it recorded.
func migrate(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", wrap(err))
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("postgres: migration lock: %w", wrap(err))
	}
	// Closing the connection would release the lock too; unlocking
	// explicitly keeps the order of events plain in the server log.
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, migrationLock)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("postgres: create schema_migrations: %w", wrap(err))
	}
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		if err := migrateFile(ctx, conn, name); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", name, wrap(err))
		}
	}
	return nil
}

func migrateFile(ctx context.Context, conn *pgx.Conn, name string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	var done bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1)`, name).Scan(&done); err != nil {
		return err
	} else if done {
		return nil
	}
	body, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return err
	}
	// Exec without arguments uses the simple protocol, which runs a file
	// of several statements.
	if _, err := tx.Exec(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, name); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// chainID returns the key of an EVM chain's rows.
func chainID(c chainquery.Chain) (int32, error) {
	id := c.ID()
	if id == 0 {
		return 0, chainquery.Errorf(chainquery.EINVALID, "chain %q is not an EVM chain", c)
	}
	return int32(id), nil
}

// readTx begins the read-only REPEATABLE READ transaction of a request that
// runs several statements, so that they all see one snapshot (a count and
// its page agree) even while an ingester commits.
func (db *DB) readTx(ctx context.Context) (pgx.Tx, error) {
	tx, err := db.rpool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	return tx, wrap(err)
}

// rollback ends a read transaction; its error is of no interest, since
// nothing was written and the connection is reset if it broke.
func rollback(tx pgx.Tx) { tx.Rollback(context.Background()) }

// notFound turns pgx.ErrNoRows into ENOTFOUND with the given message.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return chainquery.Errorf(chainquery.ENOTFOUND, format, args...)
	}
	return wrap(err)
}
