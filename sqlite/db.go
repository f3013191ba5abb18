// Package sqlite is the embedded store: every chainquery read service and
// writer on one SQLite file, with no set-up. Readers and the one writer run
// side by side thanks to WAL mode.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// DB is the SQLite store.
type DB struct {
	// The reads, the API key writes and the block writes, written once
	// for both SQL stores over this store's statements (queries) and
	// connections.
	*shared

	path  string
	read  *sql.DB // readers: a pool, never writes
	write *sql.DB // the single writer: SQLite admits one at a time anyway

	// Statements of the write side, prepared at Open on the single write
	// connection: parsing them for every batch cost more than the inserts.
	// The reads' are kept by each connection of the read pool (read.go).
	writes *statements
	// The texts of the reads prepared on any connection (tests).
	readsPrepared sync.Map

	head *headMemo // Get Latest Block between commits (head.go)

	checkpoints *checkpointer // after block commits (checkpoint.go)
}

// shared is embedded under this name so that it stays unexported.
type shared = sqlstore.Store

var _ chainquery.Store = (*DB)(nil)

// Open opens or creates the database file at path and brings its schema up to
// date.
func Open(path string) (*DB, error) { return open(path, nil) }

// open is Open with the read pool's connector wrapped by wrapRead, if not
// nil: tests count what reaches the driver.
func open(path string, wrapRead func(driver.Connector) driver.Connector) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite: empty database path")
	}
	db := &DB{path: path}
	var err error
	// synchronous=NORMAL in WAL mode loses no committed transaction on a
	// process crash, only possibly the last ones on power loss; ingestion
	// resumes from the stored cursor either way.
	//
	// The WAL is copied back by the checkpointer, on a connection of its
	// own, after each block commit (checkpoint.go); the writer's own
	// wal_autocheckpoint is the net for when that one falls behind.
	//
	// The writer's page cache is 8 MiB (each reader's is 16, below):
	// modernc's allocator puts each cached page (4 KiB and SQLite's header)
	// in an 8 KiB slot, so a cache costs twice its size in RSS, and a large
	// writer's cache was much of the ingester's peak RSS. Since the traces'
	// address indexes lead with the block's bucket (migration 0007), the
	// pages a batch writes are its bucket's, a few MB per index, and a
	// larger cache ingested no faster (docs/benchmarks.md, "SQLite's
	// address indexes by bucket first"). The 16 MB of RSS that 8 MiB
	// fewer give back went to the ingester's heap (its memory limit,
	// cmd/chainquery): its collector ran 40% less often, and 5,000 blocks
	// went in at 49-50% of the raw fetch against 42-49%
	// (docs/benchmarks.md, issue 30, session 24). A larger page_size would cost
	// more: 8 and 16 KiB pages fall in 16 KiB slots and in mappings of
	// their own (docs/benchmarks.md, "16 KiB SQLite pages").
	pragmas := []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(OFF)", "temp_store(MEMORY)", "cache_size(-65536)"}
	writePragmas := append(pragmas[:len(pragmas)-1:len(pragmas)-1], "cache_size(-8192)", fmt.Sprintf("wal_autocheckpoint(%d)", walSafetyPages))
	if db.write, err = sql.Open("sqlite", dsn(path, writePragmas, "immediate")); err != nil {
		return nil, err
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetConnMaxIdleTime(0)
	if err := db.migrate(context.Background()); err != nil {
		db.write.Close()
		return nil, err
	}
	// Each reader's page cache is 16 MiB: at 64 MiB, four readers' caches
	// (twice their size in RSS, see above) took serve's peak RSS past what
	// is allowed, and at 16 MiB the same workloads ran as fast (same-run
	// ratios to the ceiling within the noise, docs/benchmarks.md). The
	// pages read most, the top of each B-tree, fit either way, and the rest
	// of a large dataset did not fit in 64 MiB either: those pages come
	// from the OS page cache.
	readPragmas := append(pragmas[:len(pragmas)-1:len(pragmas)-1], "cache_size(-16384)", "query_only(1)")
	connector, err := sqlite3.NewConnector(dsn(path, readPragmas, "deferred"))
	if err != nil {
		db.Close()
		return nil, err
	}
	if wrapRead != nil {
		connector = wrapRead(connector)
	}
	db.read = sql.OpenDB(readConnector{connector, &db.readsPrepared})
	n := 2 * runtime.GOMAXPROCS(0)
	db.read.SetMaxOpenConns(n)
	db.read.SetMaxIdleConns(n)
	// Readers and the writer share one file, so reads never lag: the
	// primary's reads are the API's.
	read := readPool{db.read}
	db.shared = &shared{Dialect: dialect, Read: read, Primary: read, Write: conn{q: db.write},
		ReadTx: db.readTx, BeginWrite: beginner(db.write), BeginBlocks: db.beginBlocks,
		AmountArg: bigArg, ScanAmount: scanAmount}
	if err := db.prepareWrites(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	// After migrate, the write connection is open in WAL mode: -shm exists.
	db.head = newHeadMemo(path)
	if db.checkpoints, err = newCheckpointer(path); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func dsn(path string, pragmas []string, txlock string) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", txlock)
	return "file:" + path + "?" + q.Encode()
}

// txStmt returns the prepared statement for q, bound to tx. Write
// statements are prepared at Open (see writeStatements): preparing here,
// while tx holds the only write connection, would wait for it forever.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	s := db.writes.lookup(q)
	if s == nil {
		return nil, fmt.Errorf("sqlite: statement not prepared at open: %.60s", q)
	}
	return tx.StmtContext(ctx, s), nil
}

// prepareWrites prepares every write statement on the write connection.
func (db *DB) prepareWrites(ctx context.Context) error {
	db.writes = newStatements(db.write)
	if err := db.writes.prepareAll(ctx, db.writeStatements()); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// Close closes the database.
func (db *DB) Close() error {
	db.CloseAppends()
	errs := []error{db.head.close(), db.checkpoints.close()}
	if db.writes != nil {
		errs = append(errs, db.writes.close())
	}
	if db.read != nil {
		errs = append(errs, db.read.Close())
	}
	if db.write != nil {
		errs = append(errs, db.write.Close())
	}
	return errors.Join(errs...)
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int64
	return db.Read.Query(ctx, `SELECT 1`, nil, []any{&one}, func() error { return nil })
}

// PendingMigrations returns the embedded migrations the database has not
// applied (chainquery.Store), asked of the primary.
func (db *DB) PendingMigrations(ctx context.Context) ([]string, error) {
	return sqlstore.PendingMigrations(ctx, migrationFS, db.Primary)
}

// migrate applies the embedded migrations not yet recorded
// (sqlstore.Migrate).
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, qCreateMigrations); err != nil {
		return fmt.Errorf("sqlite: create schema_migrations: %w", err)
	}
	if err := sqlstore.Migrate(ctx, migrationFS, beginner(db.write), qRecordMigration); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// wrap turns driver errors a client should see differently into chainquery
// errors: a database that stays locked or cannot be opened is unavailable,
// not an internal fault.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3lib.SQLITE_BUSY, sqlite3lib.SQLITE_LOCKED, sqlite3lib.SQLITE_CANTOPEN, sqlite3lib.SQLITE_IOERR, sqlite3lib.SQLITE_FULL:
			return sqlstore.UnavailableError(err)
		}
	}
	return err
}

// placeholders returns "?, ?, ..." with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
