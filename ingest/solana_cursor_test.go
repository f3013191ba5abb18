package ingest_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/internal/pgtest"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// solanaStore is what the cursor tests need of a store.
type solanaStore interface {
	chainquery.TokenBalanceService
	chainquery.TokenBalanceWriter
}

// solanaStores are the stores the cursor tests run on; PostgreSQL needs
// scripts/pg.
var solanaStores = []struct {
	name string
	open func(t *testing.T) solanaStore
}{
	{"SQLite", func(t *testing.T) solanaStore { return openSQLite(t) }},
	{"PostgreSQL", openPostgres},
}

// openPostgres opens a PostgreSQL store on a fresh database of the primary
// scripts/pg started (pgtest); without one it skips, or fails in CI.
func openPostgres(t *testing.T) solanaStore {
	_, dsn := pgtest.NewDatabase(t, pgtest.Admin(t))
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestSolanaCursorCheck resumes a store filled from one node against nodes
// that do not hold its cursor's block: each must stop before writing
// anything, with an error that names the slot, the hashes and what to do,
// while the node it was filled from resumes.
func TestSolanaCursorCheck(t *testing.T) {
	const t0 = int64(1_700_000_000)
	// The chain the store is filled from: blocks at slots 100 and 105
	// (101-104 skipped), each changing account A.
	chain := func(t *testing.T, slots ...uint64) *solanatest.Server {
		node := solanatest.NewServer(t)
		for _, slot := range slots {
			amount := "5"
			if slot == 105 {
				amount = "6"
			}
			node.AddBlock(slot, synBlock(t0+(int64(slot)-100)*60, synTx("null", "", synBal(0, amount, synOwn))))
		}
		return node
	}
	other := synHash(42) // the block at slot 100 on another fork
	at105 := time.Unix(t0+300, 0).UTC()

	// filled returns a store ingested from slot 100 to 104: the window ends
	// in skipped slots and the cursor stays at the last block, slot 100.
	filled := func(t *testing.T, open func(*testing.T) solanaStore) solanaStore {
		db := open(t)
		if err := runSolana(t, db, chain(t, 100, 105), 104, nil); err != nil {
			t.Fatal(err)
		}
		wantCursor(t, db, chainquery.SolanaCursor{Slot: 100, Blockhash: synHash(t0), BlockTime: time.Unix(t0, 0)})
		return db
	}
	// unchanged fails unless db still holds only slot 100.
	unchanged := func(t *testing.T, db solanaStore) {
		t.Helper()
		wantCursor(t, db, chainquery.SolanaCursor{Slot: 100, Blockhash: synHash(t0), BlockTime: time.Unix(t0, 0)})
		k, _ := chainquery.ParsePublicKey("a", synA)
		if _, err := db.FindTokenBalance(context.Background(), chainquery.TokenBalanceFilter{Account: k, At: at105}); chainquery.ErrorCode(err) != chainquery.ENOTFOUND {
			t.Fatalf("slot 105 was written: %v", err)
		}
	}

	for _, st := range solanaStores {
		t.Run(st.name, func(t *testing.T) {
			t.Run("OK", func(t *testing.T) {
				db := filled(t, st.open)
				if err := runSolana(t, db, chain(t, 100, 105), 105, nil); err != nil {
					t.Fatal(err)
				}
				wantCursor(t, db, chainquery.SolanaCursor{Slot: 105, Blockhash: synHash(t0 + 300), BlockTime: at105})
			})
			t.Run("ErrOtherFork", func(t *testing.T) {
				db := filled(t, st.open)
				fork := chain(t, 100, 105)
				fork.SetBlockhash(100, other)
				err := runSolana(t, db, fork, 105, nil)
				wantErr(t, err, "the stored cursor is slot 100 with blockhash "+synHash(t0)+
					", but the node's block at slot 100 has blockhash "+other+
					": this database holds another chain or fork: use a fresh database")
				unchanged(t, db)
				// The node it was filled from still resumes.
				if err := runSolana(t, db, chain(t, 100, 105), 105, nil); err != nil {
					t.Fatal(err)
				}
				wantCursor(t, db, chainquery.SolanaCursor{Slot: 105, Blockhash: synHash(t0 + 300), BlockTime: at105})
			})
			t.Run("ErrNoBlockAtCursor", func(t *testing.T) {
				db := filled(t, st.open)
				// Slot 100 skipped on this node's chain, or pruned by it.
				err := runSolana(t, db, chain(t, 105), 105, nil)
				wantErr(t, err, "the node has no block at slot 100, where the stored cursor has blockhash "+synHash(t0), "cannot verify", "a fresh database")
				unchanged(t, db)
			})
			t.Run("ErrNodeBehind", func(t *testing.T) {
				db := filled(t, st.open)
				node := chain(t, 50)
				err := runSolana(t, db, node, 105, nil)
				wantErr(t, err, "the node's confirmed slot 50 is behind the stored cursor (slot 100")
				unchanged(t, db)
			})
			t.Run("CursorWithoutHash", func(t *testing.T) {
				// A cursor stored before blockhashes were recorded cannot
				// be checked: the run says so and resumes, and records one.
				db := st.open(t)
				ctx := context.Background()
				if err := db.WriteSolana(ctx, &chainquery.SolanaWrite{Cursor: chainquery.SolanaCursor{Slot: 100, BlockTime: time.Unix(t0, 0)}}); err != nil {
					t.Fatal(err)
				}
				fork := chain(t, 100, 105)
				fork.SetBlockhash(100, other)
				var logs bytes.Buffer
				if err := runSolana(t, db, fork, 105, &logs); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(logs.String(), "the stored cursor has no blockhash") {
					t.Errorf("no warning in the log:\n%s", logs.String())
				}
				wantCursor(t, db, chainquery.SolanaCursor{Slot: 105, Blockhash: synHash(t0 + 300), BlockTime: at105})
			})
		})
	}
}

// runSolana runs a new ingester (a new process) of node into db from slot
// 100, or after the stored cursor, to slot to.
func runSolana(t *testing.T, db solanaStore, node *solanatest.Server, to uint64, logs *bytes.Buffer) error {
	t.Helper()
	from := uint64(100)
	e := &ingest.SolanaLoop{Store: db, Source: quickSource(node), From: &from, To: &to, BatchSlots: 1}
	if logs != nil {
		e.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	// A bound, so that a node behind the cursor, which a run without the
	// check would wait for, fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return e.Run(ctx)
}

func wantCursor(t *testing.T, db solanaStore, want chainquery.SolanaCursor) {
	t.Helper()
	c, ok, err := db.SolanaCursor(context.Background())
	if err != nil || !ok || c.Slot != want.Slot || c.Blockhash != want.Blockhash || !c.BlockTime.Equal(want.BlockTime) {
		t.Fatalf("cursor %+v, %v, %v; want %+v", c, ok, err, want)
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not say %q", err, p)
		}
	}
}
