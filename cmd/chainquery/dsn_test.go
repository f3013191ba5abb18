package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/jsonrpc/jsonrpctest"
)

// TestMain_DSN checks the one place that reads --db: every form that is
// neither sqlite:PATH nor postgres:// is refused with a message that says
// what to write instead, a PostgreSQL server that cannot be reached is named
// by its redacted DSN, and a password is never echoed.
func TestMain_DSN(t *testing.T) {
	for _, tt := range []struct {
		name string
		db   string
		code int
		want string
	}{
		{"ErrPostgresRefused", "postgres://user:secret@127.0.0.1:1/chainquery?password=secret", 1,
			"chainquery: open database postgres://user@127.0.0.1:1/chainquery: postgres: connect: failed to connect to `user=user database=chainquery`"},
		{"ErrPostgresqlBadHost", "postgresql://user:secret@db.nonexistent.invalid/chainquery?sslmode=disable", 1,
			"chainquery: open database postgresql://user@db.nonexistent.invalid/chainquery: postgres: connect: "},
		{"ErrUnknownScheme", "mysql://user:secret@127.0.0.1/chainquery", 2, `--db scheme "mysql" is not supported: use sqlite:PATH or postgres://`},
		{"ErrBarePath", "chainquery.db", 2, `--db "chainquery.db" has no scheme: use sqlite:chainquery.db`},
		{"ErrKeywordDSN", "host=db password=secret", 2, "--db has no scheme"},
		{"ErrEmptyPath", "sqlite:", 2, "needs a file path"},
		{"ErrSQLiteURL", "sqlite:///var/lib/chainquery.db", 2, "not a URL"},
		{"ErrQuery", "sqlite:x.db?mode=ro", 2, "takes no query parameters"},
		{"ErrMemory", "sqlite::memory:", 2, "use a file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, args := range [][]string{
				{"serve", "--listen", "127.0.0.1:0", "--db", tt.db},
				{"keys", "create", "--name", "k", "--endpoints", "all", "--db", tt.db},
				{"keys", "list", "--db", tt.db},
				{"keys", "revoke", "--name", "k", "--db", tt.db},
			} {
				r := execute(t, nil, args...)
				r.wantFailure(t, tt.code, tt.want)
				if !strings.HasPrefix(r.stderr, "chainquery: ") {
					t.Errorf("%v: stderr does not start with \"chainquery: \":\n%s", args, r.stderr)
				}
				if strings.Contains(r.stderr, "secret") {
					t.Errorf("%v: the password is echoed:\n%s", args, r.stderr)
				}
			}
		})
	}

	t.Run("ErrPostgresIngest", func(t *testing.T) {
		// The node answers: the database is opened only after it has.
		node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			jsonrpctest.Answer(w, body, func(string) (any, *jsonrpc.RPCError) { return "0x89", nil })
		}))
		defer node.Close()
		r := execute(t, nil, "ingest", "evm", "--chain", "polygon", "--rpc", node.URL,
			"--db", "postgres://user:secret@127.0.0.1:1/chainquery")
		r.wantFailure(t, 1, "chainquery: open database postgres://user@127.0.0.1:1/chainquery: ")
		if strings.Contains(r.stderr, "secret") {
			t.Errorf("the password is echoed:\n%s", r.stderr)
		}
	})

	t.Run("ErrReadDBUnreachable", func(t *testing.T) {
		// The primary is the first server contacted, so the error is its;
		// the message still names the replica, redacted.
		r := execute(t, nil, "serve", "--listen", "127.0.0.1:0", "--db", "postgres://user:secret@127.0.0.1:1/chainquery",
			"--read-db", "postgres://reader:secret2@127.0.0.1:2/chainquery")
		r.wantFailure(t, 1, "chainquery: open database postgres://user@127.0.0.1:1/chainquery (reads from postgres://reader@127.0.0.1:2/chainquery): ")
		if strings.Contains(r.stderr, "secret") {
			t.Errorf("a password is echoed:\n%s", r.stderr)
		}
	})

	t.Run("HelpHidesPassword", func(t *testing.T) {
		// -h shows the default, which CHAINQUERY_DB may set with a password.
		env := map[string]string{"CHAINQUERY_DB": "postgres://user:secret@db.example:5432/chainquery", "CHAINQUERY_READ_DB": "postgres://r:secret@replica.example/chainquery"}
		for _, args := range [][]string{{"serve", "-h"}, {"ingest", "evm", "-h"}, {"keys", "list", "-h"}} {
			r := execute(t, env, args...)
			if r.code != 0 || strings.Contains(r.stdout, "secret") || !strings.Contains(r.stdout, "postgres://user@db.example:5432/chainquery") {
				t.Errorf("%v: code %d; want the redacted DSN as the default and no password:\n%s", args, r.code, r.stdout)
			}
		}
	})

	t.Run("ErrMissingFile", func(t *testing.T) {
		db := "sqlite:" + filepath.Join(t.TempDir(), "missing.db")
		execute(t, nil, "keys", "list", "--db", db).wantFailure(t, 1, "does not exist")
	})

	t.Run("ErrMissingFileAfterDev", func(t *testing.T) {
		// keys list with the default database, where chainquery dev ran:
		// the error names the dev database.
		t.Chdir(t.TempDir())
		execute(t, nil, "keys", "list").wantFailure(t, 1, "database sqlite:chainquery.db does not exist (chainquery keys create")
		if err := os.WriteFile("chainquery-dev.db", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		execute(t, nil, "keys", "list").wantFailure(t, 1, "the dev database is chainquery-dev.db: add --db sqlite:chainquery-dev.db")
	})
}

// TestRedactPostgres checks what logs show of a PostgreSQL DSN: user, hosts
// and database, never a password, whether in the user info or a parameter.
func TestRedactPostgres(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"postgres://u:pw@db.example:5432/chainquery?sslmode=require", "postgres://u@db.example:5432/chainquery"},
		{"postgresql://u@h1:5432,h2:5432/cq?target_session_attrs=read-write&password=pw", "postgresql://u@h1:5432,h2:5432/cq"},
		{"postgres://:pw@[::1]/cq?sslpassword=pw", "postgres://[::1]/cq"},
		{"postgres:///cq?host=/run/postgresql", "postgres:///cq"},
	} {
		d, err := parseDSN(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.String(); got != tt.want {
			t.Errorf("%s: redacted %s, want %s", tt.in, got, tt.want)
		}
		for _, s := range secrets(d.url) {
			if s != "pw" {
				t.Errorf("%s: secret %q, want pw", tt.in, s)
			}
		}
	}
	d, _ := parseDSN("postgres://u:pw@h/cq?connect_timeout=3")
	if got := connString(d.url); got != "postgres://u:pw@h/cq?connect_timeout=3" {
		t.Errorf("a DSN's own connect_timeout is replaced: %s", got)
	}
	d, _ = parseDSN("postgres://u:pw@h/cq?sslmode=disable")
	if got := connString(d.url); !strings.Contains(got, "connect_timeout=10") || !strings.Contains(got, "sslmode=disable") {
		t.Errorf("connect_timeout not added: %s", got)
	}
}
