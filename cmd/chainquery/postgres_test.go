package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/pgtest"
	"github.com/chainquery/chainquery/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// pgPassword is put in every test DSN: the throwaway servers trust local
// connections and never ask for it, so it shows only if chainquery prints
// it.
const pgPassword = "pw-never-printed"

// newPGDatabase creates an empty database with a random name on the server
// of adminDSN, drops it when the test ends, and returns its name. Whatever
// uses it must be stopped by then: call it before starting anything.
func newPGDatabase(t *testing.T, adminDSN string) string {
	t.Helper()
	name, _ := pgtest.NewDatabase(t, adminDSN)
	return name
}

// pgDSN returns adminDSN with its database replaced by name and pgPassword
// added.
func pgDSN(t *testing.T, adminDSN, name string) string {
	t.Helper()
	u, err := url.Parse(adminDSN)
	if err != nil {
		t.Fatalf("DSN is not a URL: %v", err)
	}
	u.Path = "/" + name
	u.User = url.UserPassword(u.User.Username(), pgPassword)
	return u.String()
}

func noPassword(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, pgPassword) {
		t.Errorf("the password is in %s:\n%s", what, s)
	}
}

// TestPostgres_KeysServe creates a key in a fresh PostgreSQL database,
// serves it, and calls the API with the key: nothing is indexed, so Get
// Latest Block answers 404 with a JSON detail.
func TestPostgres_KeysServe(t *testing.T) {
	admin := testenv.Postgres(t, testenv.PostgresAdmin)
	db := pgDSN(t, admin, newPGDatabase(t, admin))

	created := execute(t, nil, "keys", "create", "--db", db, "--name", "alice", "--endpoints", "all")
	if created.code != 0 {
		t.Fatalf("keys create: exit code %d\n%s", created.code, created.stderr)
	}
	key := lastLine(created.stdout)
	list := mustExecute(t, nil, "keys", "list", "--db", db)
	contains(t, "keys list", list, "alice", "all")

	api := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0", "--log-format", "json",
		"--pg-max-conns", "4", "--pg-statement-timeout", "2s")
	wantStatus(t, get(t, api.base()+"/api/v1/customer/ethereum/blocks/latest", key), http.StatusNotFound)
	wantStatus(t, get(t, api.base()+"/api/v1/customer/ethereum/blocks/latest", "cq_wrong"), http.StatusUnauthorized)

	mustExecute(t, nil, "keys", "revoke", "--db", db, "--name", "alice")
	time.Sleep(cqhttp.DefaultKeyCacheTTL) // serve trusts a key it found for that long
	wantStatus(t, get(t, api.base()+"/api/v1/customer/ethereum/blocks/latest", key), http.StatusUnauthorized)
	api.stop(t)

	logs := api.stderr.String()
	u, _ := url.Parse(db)
	contains(t, "the log", logs, `"msg":"listening"`, `"db":"postgres://postgres@`+u.Host+u.Path+`"`)
	for what, s := range map[string]string{"keys create": created.stdout + created.stderr, "keys list": list, "the serve log": logs} {
		noPassword(t, what, s)
	}
}

// TestPostgres_IngestReplica ingests a real anvil chain into PostgreSQL,
// then serves it from the streaming replica with --read-db: once the
// replica has replayed the writes, the API answers with the ingested head
// and its traces. Then serve --config follows the chain into the primary
// while the API still reads from the replica.
func TestPostgres_IngestReplica(t *testing.T) {
	admin, replicaAdmin := testenv.Postgres(t, testenv.PostgresAdmin), testenv.Postgres(t, testenv.PostgresReplica)
	name := newPGDatabase(t, admin)
	db, readDB := pgDSN(t, admin, name), pgDSN(t, replicaAdmin, name)
	c := startChain(t)
	head := c.rounds(t, 3)
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "all"))

	r := execute(t, nil, "ingest", "evm", "--db", db, "--chain", "polygon", "--rpc", c.node.URL,
		"--to", fmt.Sprint(head), "--confirmations", "0", "--batch", "2", "--pg-max-conns", "2")
	if r.code != 0 {
		t.Fatalf("ingest: exit code %d\n%s", r.code, r.stderr)
	}
	contains(t, "the ingest log", r.stderr, "msg=done", fmt.Sprintf("stored_head=%d", head))
	noPassword(t, "the ingest log", r.stderr)

	api := start(t, nil, "serve", "--db", db, "--read-db", readDB, "--listen", "127.0.0.1:0")
	waitReplica(t, api, key, head)
	status, body := call(t, "POST", api.base()+"/api/v1/customer/polygon/traces/filter?limit=50", key,
		map[string]any{"from_block": 0, "to_block": head})
	if status != http.StatusOK || count(t, body) == 0 {
		t.Fatalf("Filter Traces from the replica: status %d, %v; want traces", status, body)
	}
	// The answers came from the replica: serve's read pool holds
	// connections to the database on the standby.
	if standby, conns := pgConnections(t, replicaAdmin, name); !standby || conns == 0 {
		t.Errorf("the replica server: in recovery %v, %d connections to the database; want a standby with serve's read pool on it", standby, conns)
	}
	api.stop(t)
	ru, _ := url.Parse(readDB)
	contains(t, "the serve log", api.stderr.String(), "read_db=postgres://postgres@"+ru.Host+ru.Path)
	noPassword(t, "the serve log", api.stderr.String())

	t.Run("Followers", func(t *testing.T) {
		// The follower writes to the primary and resumes from the
		// primary's head; the API reads the replica.
		config := filepath.Join(t.TempDir(), "c.json")
		writeFile(t, config, `{"db": "`+db+`", "read_db": "`+readDB+`", "listen": "127.0.0.1:0",
  "chains": [{"chain": "polygon", "rpc": "`+c.node.URL+`", "confirmations": 0, "batch": 2}]}`)
		api := start(t, nil, "serve", "--config", config)
		newHead := c.rounds(t, 2)
		waitReplica(t, api, key, newHead)
		api.stop(t)
		contains(t, "the serve log", api.stderr.String(), "resuming after the stored head", fmt.Sprintf("stored_head=%d", head))
		noPassword(t, "the serve log", api.stderr.String())
	})
}

// waitReplica polls Get Latest Block until it answers want. Until the
// replica has replayed the database, the key and the blocks, other answers
// (500, 401, an older block) are expected.
func waitReplica(t *testing.T, api *running, key string, want uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var status int
	var body map[string]any
	for time.Now().Before(deadline) {
		status, body = call(t, "GET", api.base()+"/api/v1/customer/polygon/blocks/latest", key, nil)
		if status == http.StatusOK && fmt.Sprint(body["block_number"]) == fmt.Sprint(want) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Get Latest Block through the replica after 20s: status %d, %v; want block %d\n%s", status, body, want, api.stderr)
}

// pgConnections reports whether the server of adminDSN is a standby, and how
// many connections it has to the database name.
func pgConnections(t *testing.T, adminDSN, name string) (standby bool, conns int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT pg_is_in_recovery(), (SELECT count(*) FROM pg_stat_activity WHERE datname = $1)`, name).Scan(&standby, &conns)
	if err != nil {
		t.Fatal(err)
	}
	return standby, conns
}
