package sqlite_test

import (
	"context"
	"slices"
	"testing"
)

// TestPendingMigrations: a migration the database has no record of is
// pending, by its file name.
func TestPendingMigrations(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	if _, err := db.Write.Exec(ctx, `DELETE FROM schema_migrations WHERE name = 'migration/0004_traces_to_from_addr.sql'`); err != nil {
		t.Fatal(err)
	}
	pending, err := db.PendingMigrations(ctx)
	if err != nil || !slices.Equal(pending, []string{"0004_traces_to_from_addr.sql"}) {
		t.Fatalf("pending = %v, %v", pending, err)
	}
}
