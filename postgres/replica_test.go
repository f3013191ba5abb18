package postgres_test

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
	"github.com/jackc/pgx/v5"
)

// TestReplica ingests the fixture into the primary, serves reads from its
// streaming replica (Options.ReadDSN) once the replica has replayed the
// writes, and requires every API answer to equal the primary's, byte for
// byte; then again after a reorg written to the primary.
func TestReplica(t *testing.T) {
	admin := postgres.RequireEnv(t, postgres.EnvAdminDSN)
	replicaAdmin := postgres.RequireEnv(t, postgres.EnvReplicaDSN)
	dsn := postgres.NewTestDatabase(t, admin)
	name := dbName(t, dsn)
	primary := postgres.MustOpen(t, dsn, postgres.Options{})
	storetest.Load(t, primary)
	mustCreateTestKey(t, primary)

	// The database itself reaches the replica through the WAL too: open
	// the replica-reading store only after the catch-up.
	waitForReplay(t, admin, replicaAdmin)
	replicaDSN := postgres.WithDatabase(t, replicaAdmin, name)
	replicated := postgres.MustOpen(t, dsn, postgres.Options{ReadDSN: replicaDSN, MaxConns: 4, StatementTimeout: 10 * time.Second})

	ctx := context.Background()
	standby, port, err := replicated.ReadServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !standby || strconv.Itoa(port) != portOf(t, replicaAdmin) {
		t.Fatalf("reads go to a server with in_recovery=%v on port %d, want the replica on %s", standby, port, portOf(t, replicaAdmin))
	}
	if err := replicated.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	reqs := apiRequests()
	statuses := compareAPIs(t, "primary", serve(primary), "replica", serve(replicated), reqs)
	t.Logf("%d requests, statuses %v, identical from the primary and the replica", len(reqs), statuses)
	if statuses[200] < len(reqs)/3 {
		t.Fatalf("only %d answers were 200", statuses[200])
	}

	// A reorg written through the replica-reading store goes to the
	// primary and shows on the replica once replayed.
	fork := storetest.Blocks()[chainquery.Polygon][2]
	fork.Block.Number, fork.Block.Hash = storetest.PolygonEmptyBlock, storetest.H(storetest.TagBlock, 0x77)
	fork.Transactions[0].BlockNumber = storetest.PolygonEmptyBlock
	fork.Traces[0].BlockNumber = storetest.PolygonEmptyBlock
	if err := replicated.ReplaceBlocks(ctx, chainquery.Polygon, storetest.PolygonEmptyBlock, []*chainquery.BlockData{fork}); err != nil {
		t.Fatal(err)
	}
	// BlockHash reads the primary: the ingester sees its own write at once.
	if h, err := replicated.BlockHash(ctx, chainquery.Polygon, storetest.PolygonEmptyBlock); err != nil || h != fork.Block.Hash {
		t.Fatalf("BlockHash after the write = %s, %v; want the fork's", h.Hex(), err)
	}
	waitForReplay(t, admin, replicaAdmin)
	if n, err := replicated.LatestBlock(ctx, chainquery.Polygon); err != nil || n != storetest.PolygonEmptyBlock {
		t.Fatalf("latest block on the replica = %d, %v; want %d", n, err, storetest.PolygonEmptyBlock)
	}
	compareAPIs(t, "primary", serve(primary), "replica", serve(replicated), reqs)
}

// waitForReplay waits until the replica has replayed everything the primary
// has written so far, for at most 30 seconds. The target is the primary's
// insert position, not pg_current_wal_lsn() (its write position): with
// synchronous_commit off, a commit's record may not be written out yet, and
// a replica "caught up" to the write position would still miss it.
func waitForReplay(t *testing.T, primaryDSN, replicaDSN string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := pgx.Connect(ctx, primaryDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	var lsn string
	if err := p.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	r, err := pgx.Connect(ctx, replicaDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	start := time.Now()
	for {
		var done bool
		if err := r.QueryRow(ctx, `SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`, lsn).Scan(&done); err != nil {
			t.Fatalf("replica replay position: %v", err)
		}
		if done {
			t.Logf("replica replayed up to %s in %v", lsn, time.Since(start).Round(time.Millisecond))
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the replica did not replay up to %s within 30 s", lsn)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func dbName(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path[1:]
}

func portOf(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
