package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
	"github.com/jackc/pgx/v5"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) chainquery.Store { return postgres.MustOpenDB(tb) })
}

// TestConnBytes: the reads' []byte destinations are copies a caller
// keeps (storetest.CheckConnBytes).
func TestConnBytes(t *testing.T) {
	db := postgres.MustOpenDB(t)
	storetest.CheckConnBytes(t, db, db.Read)
}

// TestOpenConcurrently starts four processes' worth of Open on one empty
// database at once: the advisory lock must let exactly one of them apply
// each migration while the others wait and then find it done.
func TestOpenConcurrently(t *testing.T) {
	dsn := postgres.NewTestDatabase(t, postgres.RequireEnv(t, postgres.EnvAdminDSN))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(ctx, dsn, postgres.Options{})
			if err == nil {
				err = db.Ping(ctx)
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE name = 'migration/0001_init.sql'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("0001_init.sql recorded %d times (%v), want once", n, err)
	}
}

// TestOpenUnavailable opens a server that is not there: the error must be
// EUNAVAILABLE with the message every store gives, not connection details.
func TestOpenUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Port 1 on loopback: nothing listens there, the dial is refused.
	_, err := postgres.Open(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=5", postgres.Options{})
	if code := chainquery.ErrorCode(err); code != chainquery.EUNAVAILABLE {
		t.Fatalf("code = %q (%v), want %q", code, err, chainquery.EUNAVAILABLE)
	}
	if msg := chainquery.ErrorMessage(err); msg != "the database is unavailable; try again shortly" {
		t.Fatalf("message = %q", msg)
	}
}

// TestPartitions checks that writes create the partitions of the ranges
// they touch, and the next range ahead, and that rows land in them.
func TestPartitions(t *testing.T) {
	dsn := postgres.NewTestDatabase(t, postgres.RequireEnv(t, postgres.EnvAdminDSN))
	db := postgres.MustOpen(t, dsn, postgres.Options{})
	ctx := context.Background()
	// Two fixture blocks on both sides of a partition boundary.
	blocks := storetest.Blocks()[chainquery.Polygon][:2]
	blocks[0].Block.Number = 2*postgres.PartitionBlocks - 1
	blocks[1].Block.Number = 2 * postgres.PartitionBlocks
	for _, d := range blocks {
		for _, tr := range d.Traces {
			tr.BlockNumber = d.Block.Number
		}
		for _, l := range d.Logs {
			l.BlockNumber = d.Block.Number
		}
	}
	if err := db.WriteBlocks(ctx, chainquery.Polygon, blocks); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	err := db.QueryForTest(ctx, `SELECT c.relname::text, (SELECT count(*) FROM traces t WHERE t.tableoid = c.oid)
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'traces'::regclass ORDER BY 1`, func(rows pgx.Rows) error {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return err
		}
		got[name] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"traces_p1": storetest.PolygonBlockTraces, "traces_p2": 0, "traces_p3": 0}
	if len(got) != len(want) || got["traces_p1"] != want["traces_p1"] || got["traces_p2"] != 0 || got["traces_p3"] != 0 {
		t.Fatalf("partitions of traces (rows) = %v, want %v", got, want)
	}
	// A second store on the same database (another process) finds the
	// partitions made and writes into them.
	blocks = storetest.Blocks()[chainquery.Polygon][2:]
	blocks[0].Block.Number = 2*postgres.PartitionBlocks + 1
	blocks[0].Traces[0].BlockNumber = blocks[0].Block.Number
	if err := postgres.MustOpen(t, dsn, postgres.Options{}).WriteBlocks(ctx, chainquery.Polygon, blocks); err != nil {
		t.Fatal(err)
	}
	n := uint64(2*postgres.PartitionBlocks - 1)
	m := n + 2
	traces, count, err := db.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &n, ToBlock: &m, Page: chainquery.Page{Limit: 50}})
	if err != nil || count != storetest.PolygonBlockTraces+1 || len(traces) != count {
		t.Fatalf("traces across the boundary: %d of count %d, %v", len(traces), count, err)
	}
}

// TestExports holds the exports to the filter endpoints' pages
// (storetest.CheckExports).
func TestExports(t *testing.T) {
	storetest.CheckExports(t, func(tb testing.TB) chainquery.Store { return postgres.MustOpenDB(tb) })
}

// TestWritesInProcess: PostgreSQL's commits run on its server.
func TestWritesInProcess(t *testing.T) {
	var s chainquery.Store = postgres.MustOpenDB(t)
	if w, ok := s.(chainquery.InProcessWriter); !ok || w.WritesInProcess() {
		t.Fatal("PostgreSQL says it writes in process")
	}
}
