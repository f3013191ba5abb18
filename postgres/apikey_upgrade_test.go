package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
)

// TestAPIKeyLimitsUpgrade opens a database made before keys had limits
// (every migration before 0008_api_key_limits.sql applied) that holds a key
// (storetest.CheckAPIKeyUpgrade).
func TestAPIKeyLimitsUpgrade(t *testing.T) {
	dsn := postgres.NewTestDatabase(t, postgres.RequireEnv(t, postgres.EnvAdminDSN))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob("migration/*.sql") // in name order
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name >= "migration/0008" {
			break
		}
		body, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		// Without arguments, Exec sends the statements as one simple query.
		if _, err := conn.Exec(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, name); err != nil {
			t.Fatal(err)
		}
	}
	k := storetest.OldAPIKey
	if _, err := conn.Exec(ctx, `INSERT INTO api_keys (name, hash, endpoints, created_at) VALUES ($1, $2, $3, $4)`,
		k.Name, k.Hash[:], storetest.OldAPIKeyEndpoints, k.CreatedAt.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	storetest.CheckAPIKeyUpgrade(t, postgres.MustOpen(t, dsn, postgres.Options{}))
}
