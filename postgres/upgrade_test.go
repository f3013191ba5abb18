package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/sqltest"
	"github.com/chainquery/chainquery/postgres"
)

// openOld makes a database as a binary of an older version left it: every
// migration whose file name sorts before before applied and recorded, then
// fill run on it. It returns the store that opens it (and so applies the
// rest), for the upgrade checks of storetest.
func openOld(t *testing.T, before string, fill func(ctx context.Context, conn *pgx.Conn) error) *postgres.DB {
	t.Helper()
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
	sqltest.ApplyBefore(t, before, func(name, body string) error {
		// Without arguments, Exec sends the statements as one simple query.
		if _, err := conn.Exec(ctx, body); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, name)
		return err
	})
	if err := fill(ctx, conn); err != nil {
		t.Fatal(err)
	}
	return postgres.MustOpen(t, dsn, postgres.Options{})
}
