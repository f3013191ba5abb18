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
	"fmt"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
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
	// The reads, the API key writes and the block writes, written once
	// for both SQL stores over this store's statements (queries) and
	// pools.
	*shared

	read  *pgxpool.Pool // API reads: the replica when Options.ReadDSN is set
	reads *readPool     // every read of read, handed out (readpool.go)
	write *pgxpool.Pool // writes, and the reads a writer must see (BlockHash)

	// parts holds the partition ranges known to exist, so that a write
	// asks the catalog only when it enters a new range.
	partMu sync.Mutex
	parts  map[int64]bool
}

// appendOpenFor is how long an ingester's append transaction may stay open
// here: long enough for a backfill's transaction to end where a bucket of
// the log lists ends (1,000 blocks, at 100 blocks a second or more), as
// it does on its own at the bucket's end. A transaction cut inside the
// bucket leaves the next to upsert the bucket's log lists and rewrite its
// trace pages, which cost the server a third of its work (docs/benchmarks.md,
// issue 30, session 26). Unlike SQLite's, an open transaction here keeps
// no other writer waiting but another writer of the same chain; readers
// see a backfill's blocks when it commits.
const appendOpenFor = 10 * time.Second

// shared is embedded under this name so that it stays unexported.
type shared = sqlstore.Store

var _ chainquery.Store = (*DB)(nil)

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
	// (docs/benchmarks.md, "Figures that code comments held"), and the
	// generic plans are the value-independent index
	// walks that TestQueryPlans checks, like the SQLite store's.
	rcfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"

	if err := migrate(ctx, wcfg.ConnConfig); err != nil {
		return nil, err
	}
	db := &DB{parts: map[int64]bool{}}
	if db.write, err = pgxpool.NewWithConfig(ctx, wcfg); err != nil {
		return nil, wrap(err)
	}
	if db.read, err = pgxpool.NewWithConfig(ctx, rcfg); err != nil {
		db.write.Close()
		return nil, wrap(err)
	}
	db.reads = newReadPool(db.read, parkFor)
	db.shared = &shared{Dialect: dialect, Read: readConn{db.reads}, Primary: conn{db.write}, Write: conn{db.write},
		ReadTx: db.readTx, BeginWrite: db.beginWrite, BeginBlocks: db.beginBlocks,
		AppendOpenFor: appendOpenFor, AmountArg: bigArg, ScanAmount: scanAmount}
	return db, nil
}

// Close closes both pools, waiting for connections in use to be returned.
// It always returns nil: pgxpool reports no error on closing.
func (db *DB) Close() error {
	db.CloseAppends()
	db.reads.close()
	db.read.Close()
	db.write.Close()
	return nil
}

// Ping checks that the read server and the primary answer. It returns
// EUNAVAILABLE if either does not.
func (db *DB) Ping(ctx context.Context) error {
	if _, err := db.Read.Exec(ctx, "SELECT 1"); err != nil {
		return err
	}
	return wrap(db.write.Ping(ctx))
}

// migrationLock is the pg_advisory_lock key held while migrating: any
// fixed number works as long as nothing else in the database uses it
// ("chainque" in ASCII).
const migrationLock int64 = 0x636861696e717565

// PendingMigrations returns the embedded migrations the database has not
// applied (chainquery.Store), asked of the primary.
func (db *DB) PendingMigrations(ctx context.Context) ([]string, error) {
	return sqlstore.PendingMigrations(ctx, migrationFS, db.Primary)
}

// migrate applies the embedded migrations not yet recorded
// (sqlstore.Migrate). It holds a session advisory lock throughout, so
// that processes starting together apply each migration once: the others
// wait, then find it recorded.
func migrate(ctx context.Context, cfg *pgx.ConnConfig) error {
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", wrap(err))
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("postgres: migration lock: %w", wrap(err))
	}
	// Closing the connection would release the lock too; unlocking
	// explicitly keeps the order of events plain in the server log.
	defer c.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, migrationLock)

	if _, err := c.Exec(ctx, qCreateMigrations); err != nil {
		return fmt.Errorf("postgres: create schema_migrations: %w", wrap(err))
	}
	begin := func(ctx context.Context) (sqlstore.Tx, error) {
		tx, err := c.Begin(ctx)
		if err != nil {
			return nil, wrap(err)
		}
		return txConn{conn{tx}, tx}, nil
	}
	if err := sqlstore.Migrate(ctx, migrationFS, begin, qRecordMigration); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
