package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Migrate brings a SQL store's schema up to date: it applies the migrations
// of fsys (the files migration/*.sql) not yet recorded, in name order, each
// in its own transaction together with its record and, for those that
// move data SQL cannot encode, a step in Go (migrationSteps). begin begins a
// transaction on the store's database; record is a statement that records
// the migration named by its one argument. The table of records must exist.
func Migrate(ctx context.Context, fsys fs.FS, begin func(context.Context) (Tx, error), record string) error {
	names, err := fs.Glob(fsys, "migration/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	if err := refuseNewer(ctx, names, begin); err != nil {
		return err
	}
	for _, name := range names {
		if err := migrate(ctx, fsys, name, begin, record); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

// refuseNewer returns an error when the database records a migration that
// names does not hold: a later release wrote it, in a layout this one
// would read wrong (migration 0017 moved the trace lists this release's
// reads would find missing, and such a server answered counts of 0
// without an error).
func refuseNewer(ctx context.Context, names []string, begin func(context.Context) (Tx, error)) error {
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var name string
	var unknown []string
	err = tx.Query(ctx, `SELECT name FROM schema_migrations ORDER BY name`, nil, []any{&name}, func() error {
		if !known[name] {
			unknown = append(unknown, path.Base(name))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		return fmt.Errorf("the database was migrated by a later release of chainquery (migrations %s are unknown to this one); use that release or a later one", strings.Join(unknown, ", "))
	}
	return nil
}

// PendingMigrations returns the names of the migrations of fsys that the
// database c reaches has not applied, in name order.
// A server started on a database that another process created or that a
// newer binary's migrations are still running on can be behind its schema.
func PendingMigrations(ctx context.Context, fsys fs.FS, c Conn) ([]string, error) {
	names, err := fs.Glob(fsys, "migration/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var pending []string
	for _, name := range names {
		var n int
		if _, err := queryRow(ctx, c, qMigrationApplied, []any{name}, &n); err != nil {
			return nil, err
		} else if n == 0 {
			pending = append(pending, path.Base(name))
		}
	}
	return pending, nil
}

func migrate(ctx context.Context, fsys fs.FS, name string, begin func(context.Context) (Tx, error), record string) error {
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if _, err := queryRow(ctx, tx, qMigrationApplied, []any{name}, &n); err != nil || n > 0 {
		return err
	}
	body, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	// Without arguments, a file of several statements runs as one.
	if _, err := tx.Exec(ctx, string(body)); err != nil {
		return err
	}
	if step := migrationSteps[path.Base(name)]; step != nil {
		if err := step(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, record, name); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// qMigrationApplied: name → the number of records of the migration.
const qMigrationApplied = `SELECT count(*) FROM schema_migrations WHERE name = $1`

// migrationSteps are the steps in Go of the migrations of both stores that
// have one, by file name: each runs after the file's SQL, in its
// transaction.
var migrationSteps = map[string]func(context.Context, Tx) error{
	"0017_trace_pages.sql":  convertTracePages,
	"0019_tx_hash_runs.sql": convertHashIndex,
	"0023_log_forms.sql":    splitMixedLists,
}
