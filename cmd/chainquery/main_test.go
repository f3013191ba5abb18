package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cqhttp "github.com/chainquery/chainquery/http"
)

// TestMain_EndToEnd drives the program the way an operator does: create
// keys, list them, serve, call the API with and without a key, revoke a key
// while the server runs, and stop with a signal (a cancelled context).
func TestMain_EndToEnd(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "chainquery.db")

	out := mustExecute(t, nil, "keys", "create", "--db", db, "--name", "alice", "--endpoints", "all")
	alice := lastLine(out)
	if !strings.HasPrefix(alice, "cq_") || strings.ContainsAny(alice, " \t") {
		t.Fatalf("last line of keys create is %q, want the key alone", alice)
	}
	out = mustExecute(t, nil, "keys", "create", "--db", db, "--name", "bob", "--endpoints", "get_block, filter_traces")
	bob := lastLine(out)

	t.Run("ErrDuplicateName", func(t *testing.T) {
		r := execute(t, nil, "keys", "create", "--db", db, "--name", "alice", "--endpoints", "all")
		r.wantFailure(t, 1, `chainquery: an API key named "alice" already exists`)
		if r.stdout != "" {
			t.Errorf("stdout = %q, want nothing: no key was made", r.stdout)
		}
	})

	t.Run("List", func(t *testing.T) {
		out := mustExecute(t, nil, "keys", "list", "--db", db)
		rows := keysTable(t, out)
		if len(rows) != 2 {
			t.Fatalf("keys list printed %d keys, want 2:\n%s", len(rows), out)
		}
		for i, want := range []string{"alice", "all", "bob", "filter_traces,get_block"} {
			if got := rows[i/2][[]string{"NAME", "ENDPOINTS"}[i%2]]; got != want {
				t.Errorf("key %d: %q, want %q:\n%s", i/2, got, want, out)
			}
		}
		for _, row := range rows {
			created := row["CREATED"]
			if at, err := time.Parse(time.RFC3339, created); err != nil || !strings.HasSuffix(created, "Z") || time.Since(at) > time.Minute {
				t.Errorf("created %q: want a recent RFC 3339 UTC time", created)
			}
			for _, c := range limitColumns {
				if row[c] != "default" {
					t.Errorf("%s of %s = %q, want default (none given)", c, row["NAME"], row[c])
				}
			}
		}
		if strings.Contains(out, alice) || strings.Contains(out, bob) {
			t.Errorf("keys list shows a key:\n%s", out)
		}
	})

	// Serve on a free port; Stderr collects the logs, checked at the end.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	m := NewMain()
	m.Stdout, m.Stderr, m.Getenv = io.Discard, logs, noEnv
	if err := m.ParseFlags(ctx, []string{"serve", "--db", db, "--listen", "127.0.0.1:0", "--log-format", "json"}); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- m.Run(ctx) }()
	select {
	case <-m.Listening():
	case err := <-served:
		t.Fatalf("serve ended before listening: %v", err)
	}
	base := "http://" + m.Addr().String()
	latest := base + "/api/v1/customer/ethereum/blocks/latest"

	t.Run("NothingIndexed", func(t *testing.T) {
		wantStatus(t, get(t, latest, alice), http.StatusNotFound)
	})
	t.Run("ErrNoKey", func(t *testing.T) {
		wantStatus(t, get(t, latest, ""), http.StatusUnauthorized)
	})
	t.Run("ErrKeyNotEnabled", func(t *testing.T) {
		wantStatus(t, get(t, latest, bob), http.StatusForbidden)
	})
	t.Run("Revoke", func(t *testing.T) {
		out := mustExecute(t, nil, "keys", "revoke", "--db", db, "--name", "alice")
		if !strings.Contains(out, "alice") {
			t.Errorf("keys revoke printed %q", out)
		}
		// serve trusts a key it found for cqhttp.DefaultKeyCacheTTL.
		time.Sleep(cqhttp.DefaultKeyCacheTTL)
		wantStatus(t, get(t, latest, alice), http.StatusUnauthorized)
		execute(t, nil, "keys", "revoke", "--db", db, "--name", "alice").
			wantFailure(t, 1, `chainquery: no API key named "alice"`)
	})

	// Graceful shutdown: a request whose handler is running when the signal
	// comes is answered, and only then does Run return. Expect:
	// 100-continue tells exactly when that is: the server sends "100
	// Continue" when the handler starts to read the body.
	conn, err := net.Dial("tcp", m.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"from_block": 0, "to_block": 99}`
	fmt.Fprintf(conn, "POST /api/v1/customer/polygon/traces/filter HTTP/1.1\r\nHost: test\r\napikey: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", bob, len(body))
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue, got %v, %v", resp, err)
	}
	cancel()
	select {
	case err := <-served:
		t.Fatalf("Run returned (%v) before the in-flight request finished", err)
	case <-time.After(300 * time.Millisecond):
	}
	io.WriteString(conn, body)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("in-flight request got no answer: %v", err)
	}
	var traces struct {
		Count  *int              `json:"count"`
		Result []json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&traces); err != nil || resp.StatusCode != http.StatusOK || traces.Count == nil || *traces.Count != 0 {
		t.Errorf("in-flight request: status %d, count %v, err %v; want 200 with count 0", resp.StatusCode, traces.Count, err)
	}
	resp.Body.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Run after shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the context was cancelled")
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	log := logs.String()
	if !strings.Contains(log, `"msg":"listening"`) || !strings.Contains(log, m.Addr().String()) {
		t.Errorf("logs do not tell the address:\n%s", log)
	}
	if strings.Contains(log, alice) || strings.Contains(log, bob) {
		t.Errorf("a key reached the logs:\n%s", log)
	}
}

// TestMain_Environment checks that CHAINQUERY_DB and CHAINQUERY_LISTEN
// replace the defaults and that flags win over them.
func TestMain_Environment(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"CHAINQUERY_DB":     "sqlite:" + filepath.Join(dir, "env.db"),
		"CHAINQUERY_LISTEN": "127.0.0.1:9999",
	}
	mustExecute(t, env, "keys", "create", "--name", "k", "--endpoints", "get_block")
	if out := mustExecute(t, env, "keys", "list"); !strings.Contains(out, "get_block") {
		t.Errorf("keys list with CHAINQUERY_DB does not show the key:\n%s", out)
	}
	other := "sqlite:" + filepath.Join(dir, "other.db")
	execute(t, env, "keys", "list", "--db", other).wantFailure(t, 1, "does not exist")

	for _, tt := range []struct {
		args       []string
		db, listen string
	}{
		{[]string{"serve"}, env["CHAINQUERY_DB"], env["CHAINQUERY_LISTEN"]},
		{[]string{"serve", "--db", other, "--listen", "127.0.0.1:0"}, other, "127.0.0.1:0"},
	} {
		m := NewMain()
		m.Stdout, m.Stderr, m.Getenv = io.Discard, io.Discard, func(k string) string { return env[k] }
		if err := m.ParseFlags(context.Background(), tt.args); err != nil {
			t.Fatal(err)
		}
		c := m.cmd.(*serveCmd)
		if c.db.String() != tt.db || c.listen != tt.listen {
			t.Errorf("%v: db %s listen %s, want %s %s", tt.args, c.db, c.listen, tt.db, tt.listen)
		}
	}
	m := NewMain()
	m.Getenv = noEnv
	if err := m.ParseFlags(context.Background(), []string{"serve"}); err != nil {
		t.Fatal(err)
	}
	if c := m.cmd.(*serveCmd); c.db.String() != defaultDSN || c.listen != defaultListen {
		t.Errorf("defaults: db %s listen %s", c.db, c.listen)
	}
}

// TestMain_Usage checks exit codes and messages of command-line mistakes.
func TestMain_Usage(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "u.db")
	const pg = "postgres://user:secret@127.0.0.1:1/chainquery" // never opened: the mistakes are found first
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"ErrNoCommand", nil, 2, "chainquery: no command given"},
		{"ErrUnknownCommand", []string{"frobnicate"}, 2, `chainquery: unknown command "frobnicate"`},
		{"ErrKeysNoSubcommand", []string{"keys"}, 2, "keys needs a subcommand"},
		{"ErrUnknownFlag", []string{"serve", "--port", "80"}, 2, "flag provided but not defined: -port"},
		{"ErrStrayArgument", []string{"keys", "list", "--db", db, "extra"}, 2, `unexpected argument "extra"`},
		{"ErrNameMissing", []string{"keys", "create", "--db", db, "--endpoints", "all"}, 2, "--name is required"},
		{"ErrBadName", []string{"keys", "create", "--db", db, "--name", "two words", "--endpoints", "all"}, 2, "--name must be"},
		{"ErrEndpointsMissing", []string{"keys", "create", "--db", db, "--name", "k"}, 2, "--endpoints is required"},
		{"ErrBadEndpoint", []string{"keys", "create", "--db", db, "--name", "k", "--endpoints", "get_blocks"}, 2, `unknown endpoint "get_blocks"`},
		{"ErrBadListen", []string{"serve", "--db", db, "--listen", "8080"}, 2, "--listen must be host:port"},
		{"ErrBadLogFormat", []string{"serve", "--db", db, "--log-format", "xml"}, 2, "--log-format must be text or json"},
		{"ErrBadLogLevel", []string{"serve", "--db", db, "--log-level", "loud"}, 2, "-log-level"},
		{"ErrBadTraceStart", []string{"serve", "--db", db, "--trace-history-start", "solana=2025-01-01T00:00:00Z"}, 2, "chain must be one of: ethereum, polygon"},
		{"ErrRevokeUnknown", []string{"keys", "revoke", "--db", db, "--name", "nobody"}, 1, `no API key named "nobody"`},
		{"ErrNegativeLimit", []string{"keys", "create", "--db", db, "--name", "k", "--endpoints", "all", "--rate", "-1"}, 2, "--rate must be a finite number of at least 0"},
		{"ErrUpdateNothing", []string{"keys", "update", "--db", db, "--name", "k"}, 2, "nothing to change"},
		{"ErrUpdateNameMissing", []string{"keys", "update", "--db", db, "--rate", "1"}, 2, "--name is required"},
		{"ErrReadDBWithSQLite", []string{"serve", "--db", db, "--read-db", "postgres://u@replica/db"}, 2, "--read-db needs a PostgreSQL --db"},
		{"ErrReadDBSQLite", []string{"serve", "--db", pg, "--read-db", db}, 2, "--read-db must be a postgres:// DSN"},
		{"ErrReadDBBad", []string{"serve", "--db", pg, "--read-db", "replica.example"}, 2, `--read-db: "replica.example" has no scheme`},
		{"ErrPGFlagWithSQLite", []string{"serve", "--db", db, "--pg-max-conns", "8"}, 2, "--pg-max-conns applies to a PostgreSQL --db only"},
		{"ErrPGTimeoutWithSQLite", []string{"ingest", "evm", "--db", db, "--chain", "polygon", "--rpc", "http://a:1", "--pg-statement-timeout", "1s"}, 2, "--pg-statement-timeout applies to a PostgreSQL --db only"},
		{"ErrPGMaxConns", []string{"serve", "--db", pg, "--pg-max-conns", "0"}, 2, "--pg-max-conns must be between 1 and 1000"},
		{"ErrPGMaxConnsIngest", []string{"ingest", "evm", "--db", pg, "--chain", "polygon", "--rpc", "http://a:1", "--pg-max-conns", "5000"}, 2, "--pg-max-conns must be between 1 and 1000"},
		{"ErrPGTimeout", []string{"serve", "--db", pg, "--pg-statement-timeout", "-1s"}, 2, "--pg-statement-timeout must be 0 (no limit) or at least 1ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "ErrRevokeUnknown" {
				mustExecute(t, nil, "keys", "create", "--db", db, "--name", "somebody", "--endpoints", "all")
			}
			execute(t, nil, tt.args...).wantFailure(t, tt.code, tt.want)
		})
	}

	t.Run("Help", func(t *testing.T) {
		for _, args := range [][]string{{"-h"}, {"help"}, {"serve", "-h"}, {"keys", "-h"}, {"keys", "create", "--help"}, {"keys", "update", "-h"}, {"keys", "list", "-h"}, {"keys", "revoke", "-h"}} {
			r := execute(t, nil, args...)
			if r.code != 0 || !strings.Contains(r.stdout, "Usage:") || r.stderr != "" {
				t.Errorf("%v: code %d, stdout %q, stderr %q; want usage on stdout and code 0", args, r.code, r.stdout, r.stderr)
			}
		}
	})

	t.Run("Version", func(t *testing.T) {
		if out := mustExecute(t, nil, "version"); !strings.HasPrefix(out, "chainquery ") {
			t.Errorf("version printed %q", out)
		}
	})
}

// result is what one run of the program left behind.
type result struct {
	stdout, stderr string
	code           int
}

// execute runs the program with args as the binary would, with env as the
// whole environment.
func execute(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &stdout, &stderr
	m.Getenv = func(k string) string { return env[k] }
	code := m.Execute(context.Background(), args)
	return result{stdout.String(), stderr.String(), code}
}

// mustExecute runs the program and fails the test unless it succeeds; it
// returns the standard output.
func mustExecute(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	r := execute(t, env, args...)
	if r.code != 0 {
		t.Fatalf("chainquery %s: exit code %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

func (r result) wantFailure(t *testing.T, code int, msg string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stderr, msg) {
		t.Errorf("exit code %d, stderr:\n%s\nwant code %d and %q", r.code, r.stderr, code, msg)
	}
}

func noEnv(string) string { return "" }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// get calls url with key in the apikey header (none when key is empty).
func get(t *testing.T, url, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("apikey", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// wantStatus checks the status and that the body is the JSON error shape.
func wantStatus(t *testing.T, resp *http.Response, status int) {
	t.Helper()
	defer resp.Body.Close()
	var body struct {
		Detail *string `json:"detail"`
	}
	err := json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d", resp.StatusCode, status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if err != nil || body.Detail == nil || *body.Detail == "" {
		t.Errorf("body is not {\"detail\": ...}: %v", err)
	}
}

// syncBuffer is a bytes.Buffer that the server's goroutines may write to
// while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestUsage_DBOptional: every command that opens a database has a default
// one (sqlite:chainquery.db, or CHAINQUERY_DB), so no usage line shows
// --db as required.
func TestUsage_DBOptional(t *testing.T) {
	for _, args := range [][]string{{"serve"}, {"ingest", "evm"}, {"ingest", "solana"}, {"registry", "import"},
		{"keys", "create"}, {"keys", "update"}, {"keys", "list"}, {"keys", "revoke"}, {"dev"}} {
		r := execute(t, nil, append(args, "-h")...)
		usage, _, _ := strings.Cut(r.stdout+r.stderr, "\n")
		if !strings.HasPrefix(usage, "Usage: chainquery "+strings.Join(args, " ")) || !strings.Contains(usage, "[--db DSN") {
			t.Errorf("%v -h: usage line %q: want --db shown as optional", args, usage)
		}
	}
}
