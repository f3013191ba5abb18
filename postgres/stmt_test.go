package postgres

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlstore"
)

// TestReadsPreparedOnce runs the same reads 20 times on a read pool of one
// connection, then reads that connection's pg_prepared_statements: each
// statement must have been prepared once and run 20 times (pgx's
// QueryExecModeCacheStatement), not parsed for each request.
func TestReadsPreparedOnce(t *testing.T) {
	db := MustOpen(t, NewTestDatabase(t, RequireEnv(t, EnvAdminDSN)), Options{MaxConns: 1})
	storetest.Load(t, db)
	ctx := context.Background()
	const n = 20
	for range n {
		if _, err := db.FindBlock(ctx, chainquery.Polygon, storetest.PolygonBlock, true); err != nil {
			t.Fatal(err)
		}
		if _, err := db.LatestBlock(ctx, chainquery.Polygon); err != nil {
			t.Fatal(err)
		}
	}
	statements := map[string]string{}
	for _, q := range sqlstore.PlanQueries(&dialect, 0, 99, chainquery.Page{Limit: 10}, chainquery.Address{}, chainquery.Address{}, sqlstore.PlanArgs{}) {
		statements[q.Name] = q.SQL
	}
	for _, name := range []string{"Get Block", "Get Block: transactions", "Get Latest Block"} {
		q := statements[name]
		if q == "" {
			t.Fatalf("no statement named %q among the plan queries", name)
		}
		var prepared, runs int64
		if err := db.read.QueryRow(ctx, `SELECT count(*), coalesce(sum(generic_plans + custom_plans), 0)
			FROM pg_prepared_statements WHERE statement = $1`, q).Scan(&prepared, &runs); err != nil {
			t.Fatal(err)
		}
		if prepared != 1 || runs != n {
			t.Errorf("%s: prepared %d times and run %d times on the connection, want once and %d times", name, prepared, runs, n)
		}
	}
}
