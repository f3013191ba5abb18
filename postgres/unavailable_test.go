package postgres_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/postgres"
)

// TestServerStopped stops the PostgreSQL server under an open store: every
// read and write must fail with EUNAVAILABLE, the API must answer 503 with a
// detail, and once the server is back the same store must answer again by
// itself. It runs on the separate server of CHAINQUERY_TEST_POSTGRES_STOPPABLE
// so that stopping it disturbs no other test.
func TestServerStopped(t *testing.T) {
	admin := postgres.RequireEnv(t, postgres.EnvStoppableDSN)
	pgctl := strings.Fields(postgres.RequireEnv(t, postgres.EnvPGCtl))
	db := postgres.MustOpen(t, postgres.NewTestDatabase(t, admin), postgres.Options{MaxConns: 4})
	storetest.Load(t, db)
	mustCreateTestKey(t, db)
	api := serve(db)
	block := request{http.MethodGet, "/api/v1/customer/polygon/block?block_number=68000000", ""}
	if w := do(api, block); w.Code != http.StatusOK {
		t.Fatalf("before the stop: %d %s", w.Code, w.Body)
	}

	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(pgctl[0], append(pgctl[1:], args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pg_ctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("stop", "-m", "fast")
	stopped := true
	t.Cleanup(func() {
		if stopped { // leave the server up for the next run whatever failed
			run("start")
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := storetest.PolygonBlock
	for name, call := range map[string]func() error{
		"Ping":        func() error { return db.Ping(ctx) },
		"FindBlock":   func() error { _, err := db.FindBlock(ctx, chainquery.Polygon, n, true); return err },
		"LatestBlock": func() error { _, err := db.LatestBlock(ctx, chainquery.Polygon); return err },
		"FindTraces": func() error {
			_, _, err := db.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &n, ToBlock: &n, Page: chainquery.Page{Limit: 10}})
			return err
		},
		"FindAPIKeyByHash": func() error { _, err := db.FindAPIKeyByHash(ctx, chainquery.HashAPIKey(testKey)); return err },
		"BlockHash":        func() error { _, err := db.BlockHash(ctx, chainquery.Polygon, n); return err },
		"WriteBlocks":      func() error { return db.WriteBlocks(ctx, chainquery.Polygon, storetest.Blocks()[chainquery.Polygon]) },
		"WriteTokens":      func() error { return db.WriteTokens(ctx, storetest.Tokens()) },
	} {
		err := call()
		t.Logf("%s: %v", name, err)
		if chainquery.ErrorCode(err) != chainquery.EUNAVAILABLE || chainquery.ErrorMessage(err) != "the database is unavailable; try again shortly" {
			t.Errorf("%s with the server stopped: code %q, message %q (%v)", name, chainquery.ErrorCode(err), chainquery.ErrorMessage(err), err)
		}
	}
	w := do(api, block)
	var body struct{ Detail string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); w.Code != http.StatusServiceUnavailable || err != nil || body.Detail == "" {
		t.Fatalf("API with the server stopped: %d %s, want 503 with a detail", w.Code, w.Body)
	}
	t.Logf("API with the server stopped: %d %s", w.Code, strings.TrimSpace(w.Body.String()))

	run("start")
	stopped = false
	start := time.Now()
	for {
		w := do(api, block)
		if w.Code == http.StatusOK {
			t.Logf("the store answered again %v after the server was back", time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the store did not recover within 30 s: %d %s", w.Code, w.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := db.WriteBlocks(ctx, chainquery.Polygon, storetest.Blocks()[chainquery.Polygon]); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
}
