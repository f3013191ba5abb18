package main

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// TestServe_Config runs serve with a config file naming an anvil node: the
// follower ingests while the API serves, keeps following new blocks, and
// stops with the server.
func TestServe_Config(t *testing.T) {
	c := startChain(t)
	head := c.rounds(t, 2)
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "serve.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "all"))
	config := filepath.Join(dir, "chainquery.json")
	writeFile(t, config, `// The test's config: the flag --db wins over "db" here.
{
  "db": "sqlite:`+filepath.Join(dir, "unused.db")+`",
  "listen": "127.0.0.1:0",
  "chains": [
    // the anvil node, from its first block, with no confirmations
    {"chain": "polygon", "rpc": "`+c.node.URL+`", "from": 0, "confirmations": 0, "batch": 2}
  ]
}
`)
	api := start(t, nil, "serve", "--config", config, "--db", db, "--log-format", "json")
	waitLatest(t, api.base(), "polygon", key, head, api.stderr)

	// The follower keeps up with the node while the API serves.
	head = c.rounds(t, 2)
	waitLatest(t, api.base(), "polygon", key, head, api.stderr)
	status, body := call(t, "POST", api.base()+"/api/v1/customer/polygon/traces/filter?limit=50", key,
		map[string]any{"from_block": head, "to_block": head})
	if status != 200 || count(t, body) == 0 {
		t.Errorf("Filter Traces of the followed head: status %d, %v; want traces", status, body)
	}
	api.stop(t)
	contains(t, "the log", api.stderr.String(), `"msg":"ingestion plan"`, `"chain":"polygon"`, `"msg":"stopped"`)
	if _, err := os.Stat(filepath.Join(dir, "unused.db")); err == nil {
		t.Errorf("the config's db was opened although --db was given")
	}
}

// TestServe_ConfigNodeDown checks the follower's failure policy end to end:
// a node that does not answer is logged, the API goes on serving, and the
// server still stops at once while the follower waits to try again.
func TestServe_ConfigNodeDown(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "down.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "all"))
	config := filepath.Join(dir, "c.json")
	writeFile(t, config, `{"chains": [{"chain": "gnosis", "rpc": "http://127.0.0.1:1/secret"}]}`)
	api := start(t, nil, "serve", "--config", config, "--db", db, "--listen", "127.0.0.1:0")
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(api.stderr.String(), "follower failed") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	contains(t, "the log", api.stderr.String(), "level=ERROR", "follower failed", "chain=gnosis", "retry_in=30s", "eth_chainId from http://127.0.0.1:1/...")
	if strings.Contains(api.stderr.String(), "secret") {
		t.Errorf("the URL path reached the log:\n%s", api.stderr)
	}
	if got := latest(t, api.base(), "gnosis", key); got != -1 {
		t.Errorf("Get Latest Block answers %d, want 404", got)
	}
	start := time.Now()
	api.stop(t)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("serve took %s to stop while a follower waited to retry", d)
	}
}

// TestServe_ConfigPrecedence checks where db and listen come from: flags,
// then the environment, then the file, then the defaults.
func TestServe_ConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "c.json")
	writeFile(t, config, `{"db": "sqlite:file.db", "listen": "127.0.0.1:7001"}`)
	for _, tt := range []struct {
		env        map[string]string
		args       []string
		db, listen string
	}{
		{nil, nil, "sqlite:file.db", "127.0.0.1:7001"},
		{map[string]string{"CHAINQUERY_DB": "sqlite:env.db", "CHAINQUERY_LISTEN": "127.0.0.1:7002"}, nil, "sqlite:env.db", "127.0.0.1:7002"},
		{map[string]string{"CHAINQUERY_DB": "sqlite:env.db"}, []string{"--db", "sqlite:flag.db", "--listen", "127.0.0.1:7003"}, "sqlite:flag.db", "127.0.0.1:7003"},
	} {
		m := NewMain()
		m.Getenv = func(k string) string { return tt.env[k] }
		if err := m.ParseFlags(t.Context(), append([]string{"serve", "--config", config}, tt.args...)); err != nil {
			t.Fatal(err)
		}
		if c := m.cmd.(*serveCmd); c.db.String() != tt.db || c.listen != tt.listen {
			t.Errorf("env %v, flags %v: db %s, listen %s; want %s, %s", tt.env, tt.args, c.db, c.listen, tt.db, tt.listen)
		}
	}
}

// TestServe_ReadDBPrecedence checks where --read-db comes from (the flag,
// then CHAINQUERY_READ_DB, then the file's read_db) and the defaults of the
// PostgreSQL flags.
func TestServe_ReadDBPrecedence(t *testing.T) {
	const (
		primary = "postgres://u:pw@primary/db"
		file    = "postgres://u:pw@file-replica/db"
		env     = "postgres://u:pw@env-replica/db"
		flag    = "postgres://u:pw@flag-replica/db"
	)
	config := filepath.Join(t.TempDir(), "c.json")
	writeFile(t, config, `{"db": "`+primary+`", "read_db": "`+file+`"}`)
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--db", primary}, ""},
		{nil, []string{"--config", config}, "postgres://u@file-replica/db"},
		{map[string]string{"CHAINQUERY_READ_DB": env}, []string{"--config", config}, "postgres://u@env-replica/db"},
		{map[string]string{"CHAINQUERY_READ_DB": env}, []string{"--config", config, "--read-db", flag}, "postgres://u@flag-replica/db"},
	} {
		m := NewMain()
		m.Getenv = func(k string) string { return tt.env[k] }
		if err := m.ParseFlags(t.Context(), append([]string{"serve"}, tt.args...)); err != nil {
			t.Fatal(err)
		}
		c := m.cmd.(*serveCmd)
		got := ""
		if c.readDB != nil {
			got = c.readDB.String()
		}
		if got != tt.want || c.db.String() != "postgres://u@primary/db" {
			t.Errorf("env %v, flags %v: db %s, read db %q; want postgres://u@primary/db, %q", tt.env, tt.args, c.db, got, tt.want)
		}
		if c.pg.maxConns != 16 || c.pg.statementTimeout != 5*time.Second {
			t.Errorf("PostgreSQL defaults: --pg-max-conns %d, --pg-statement-timeout %s; want 16, 5s", c.pg.maxConns, c.pg.statementTimeout)
		}
	}
}

// TestConfig checks the decoding and validation of config files.
func TestConfig(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		cfg, chains, err := parseConfig([]byte(`// comment lines, indented or not, are blank to the decoder
{
  "db": "sqlite:/var/lib/chainquery.db",
    // "listen": "0.0.0.0:80",
  "chains": [
    {"chain": "polygon", "rpc": "https://polygon.example/key"},
    {"chain": "ethereum", "rpc": "http://127.0.0.1:8545", "from": 0, "confirmations": 3, "traces": "debug_trace", "concurrency": 8, "batch": 50}
  ]
}`))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.DB != "sqlite:/var/lib/chainquery.db" || cfg.Listen != "" || len(chains) != 2 {
			t.Fatalf("config %+v, %d chains", cfg, len(chains))
		}
		p, e := chains[0], chains[1]
		if p.chain != chainquery.Polygon || p.from != nil || p.confirmations != 128 || p.traces != "auto" || p.concurrency != 4 || p.batch != 10 {
			t.Errorf("polygon with defaults: %+v", p)
		}
		if e.chain != chainquery.Ethereum || e.from == nil || *e.from != 0 || e.confirmations != 3 || e.traces != "debug_trace" || e.concurrency != 8 || e.batch != 50 {
			t.Errorf("ethereum as given: %+v", e)
		}
		// Filter Traces and Get Block serve both followed chains, as both are traced.
		if got := tracedChains(chains); !slices.Equal(got, []chainquery.Chain{chainquery.Polygon, chainquery.Ethereum}) {
			t.Errorf("traced chains %v", got)
		}
		_, chains, err = parseConfig([]byte(`{"chains": [{"chain": "base", "rpc": "http://a:1"}, {"chain": "polygon", "rpc": "http://b:1", "traces": "off"}]}`))
		if err != nil || len(tracedChains(chains)) != 0 {
			t.Errorf("traced chains of chains without traces: %v, %v", tracedChains(chains), err)
		}
	})

	chain := func(fields string) string {
		return `{"chains": [{"chain": "polygon", "rpc": "http://127.0.0.1:8545"` + fields + `}]}`
	}
	for _, tt := range []struct {
		name, file, want string
	}{
		{"ErrUnknownField", `{"db": "sqlite:x.db", "chain": []}`, `unknown field "chain" in the top level (the fields are: db, read_db, listen, chains, ready_max_lag, request_timeout, fair_share, store_concurrency, key_concurrency, key_cost_rate, key_cost_burst, queue_wait)`},
		{"ErrUnknownChainField", chain(`, "rpcs": "x"`), `unknown field "rpcs" in chains[0] (the fields are: chain, rpc, from, confirmations, traces, concurrency, batch, rpc_max_response_mb, rpc_timeout)`},
		{"ErrDuplicateChain", `{"chains": [{"chain": "polygon", "rpc": "http://a:1"}, {"chain": "base", "rpc": "http://b:1"}, {"chain": "polygon", "rpc": "http://c:1"}]}`,
			"chains[2]: chain polygon is already followed by chains[0]: one follower per chain"},
		{"ErrUnknownChain", `{"chains": [{"chain": "solana", "rpc": "http://a:1"}]}`, `chains[0]: chain "solana" is not an EVM chain: use one of ethereum,`},
		{"ErrNoChain", `{"chains": [{"rpc": "http://a:1"}]}`, `chains[0]: "chain" is required`},
		{"ErrNoRPC", `{"chains": [{"chain": "gnosis"}]}`, `chains[0]: gnosis: "rpc" is required`},
		{"ErrBadRPC", `{"chains": [{"chain": "gnosis", "rpc": "127.0.0.1:8545"}]}`, `chains[0]: gnosis: rpc must be an http:// or https:// URL`},
		{"ErrBadTraces", chain(`, "traces": "all"`), `chains[0]: polygon: traces must be auto, trace_block, debug_trace or off, not "all"`},
		{"ErrConcurrency", chain(`, "concurrency": 100`), `chains[0]: polygon: concurrency must be between 1 and 64`},
		{"ErrBatch", chain(`, "batch": -1`), `chains[0]: polygon: batch must be between 1 and 1000`},
		{"ErrFromType", "{\n  \"chains\": [{\"chain\": \"polygon\", \"rpc\": \"http://a:1\",\n  \"from\": \"68000000\"}]}", "line 3: chains.from must be a non-negative integer, not string"},
		{"ErrNegativeFrom", chain(`, "from": -5`), "chains.from must be a non-negative integer, not number -5"},
		{"ErrSyntax", "{\n  // a comment\n  \"db\": \"sqlite:x.db\",\n}\n", "line 4, column 1: invalid JSON"},
		{"ErrTrailingComment", `{"db": "sqlite:x.db"} // not a whole line`, "invalid JSON"},
		{"ErrNotObject", `["polygon"]`, "want a JSON object with the fields db, read_db, listen, chains"},
		{"ErrEmpty", "// nothing but comments\n", "the file is empty"},
		{"ErrTwoValues", `{} {}`, "line 1, column 4: invalid JSON"},
		{"ErrDB", `{"db": "mysql://u:p@h/d"}`, `db: scheme "mysql" is not supported`},
		{"ErrListen", `{"listen": "8080"}`, "listen must be host:port"},
		{"ErrReadDBSQLite", `{"read_db": "sqlite:x.db"}`, "read_db must be a postgres:// DSN"},
		{"ErrReadDB", `{"read_db": "replica:5432"}`, `read_db: scheme "replica" is not supported`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseConfig([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}

	t.Run("ErrThroughServe", func(t *testing.T) {
		// A bad file stops serve before it opens anything, with exit code 1
		// and the file's name.
		dir := t.TempDir()
		config := filepath.Join(dir, "bad.json")
		writeFile(t, config, `{"chains": [{"chain": "polygon", "rpc": "http://a:1", "confirmation": 5}]}`)
		execute(t, nil, "serve", "--config", config, "--db", "sqlite:"+filepath.Join(dir, "x.db")).
			wantFailure(t, 1, "chainquery: config "+config+`: unknown field "confirmation" in chains[0]`)
		execute(t, nil, "serve", "--config", filepath.Join(dir, "missing.json")).
			wantFailure(t, 1, "chainquery: config: open "+filepath.Join(dir, "missing.json"))
		if _, err := os.Stat(filepath.Join(dir, "x.db")); err == nil {
			t.Error("the database was created although the config is invalid")
		}
	})
}

// TestConfig_DocExample keeps the example of docs/config.md valid.
func TestConfig_DocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```jsonc\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/config.md has no jsonc example")
	}
	cfg, chains, err := parseConfig(m[1])
	if err != nil {
		t.Fatalf("the example of docs/config.md: %v", err)
	}
	if cfg.DB == "" || cfg.Listen == "" || len(chains) != 3 {
		t.Errorf("the example sets db %q, listen %q and %d chains; want all fields shown", cfg.DB, cfg.Listen, len(chains))
	}
}

// TestConfig_ExampleFile keeps chainquery.example.json, the file the README
// tells a first user to copy, loadable as shipped, with each chain's values
// the defaults of chainDefaults: the polygon entry as it is, the other
// chains once their commented-out lines are uncommented. Its node URLs are
// placeholders under the reserved .example domain.
func TestConfig_ExampleFile(t *testing.T) {
	const path = "../../chainquery.example.json"
	check := func(t *testing.T, cfg *config, chains []chainSettings, want []chainquery.Chain) {
		t.Helper()
		if cfg.DB != defaultDSN || cfg.Listen != defaultListen {
			t.Errorf("db %q, listen %q; want the defaults %q, %q", cfg.DB, cfg.Listen, defaultDSN, defaultListen)
		}
		var got []chainquery.Chain
		for _, s := range chains {
			got = append(got, s.chain)
			if def := newChainSettings(s.chain, s.rpc); !reflect.DeepEqual(s, def) {
				t.Errorf("%s: %+v, want the defaults %+v", s.chain, s, def)
			}
			if u, err := url.Parse(s.rpc); err != nil || !strings.HasSuffix(u.Hostname(), ".example") {
				t.Errorf("%s: rpc %q is not a placeholder under .example", s.chain, s.rpc)
			}
		}
		if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("chains %v, want %v", got, want)
		}
	}

	t.Run("AsShipped", func(t *testing.T) {
		cfg, chains, err := loadConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		check(t, cfg, chains, []chainquery.Chain{chainquery.Polygon})
	})

	t.Run("Uncommented", func(t *testing.T) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		uncommented := regexp.MustCompile(`(?m)^(\s*)// (,\{)`).ReplaceAll(data, []byte("$1$2"))
		file := filepath.Join(t.TempDir(), "chainquery.json")
		writeFile(t, file, string(uncommented))
		cfg, chains, err := loadConfig(file)
		if err != nil {
			t.Fatalf("with every chain uncommented: %v", err)
		}
		check(t, cfg, chains, chainquery.EVMChains)
	})

	t.Run("Documented", func(t *testing.T) {
		for _, doc := range []string{"../../README.md", "../../docs/config.md"} {
			b, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "cp chainquery.example.json chainquery.json") {
				t.Errorf("%s does not say to copy chainquery.example.json", doc)
			}
		}
	})
}

// TestRetry checks the follower's failure policy: waits double from the
// first up to the cap, and start over after an attempt that stored blocks.
func TestRetry(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wrote := []bool{false, false, false, false, true, false}
	attempts := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		retry(ctx, logger, chainquery.Base, time.Millisecond, 4*time.Millisecond, func(context.Context) (bool, error) {
			if attempts == len(wrote) {
				cancel()
				return false, ctx.Err()
			}
			attempts++
			return wrote[attempts-1], errors.New("node down")
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("retry did not return after ctx ended")
	}
	var waits []string
	for _, m := range regexp.MustCompile(`retry_in=(\S+)`).FindAllStringSubmatch(logs.String(), -1) {
		waits = append(waits, m[1])
	}
	if got, want := strings.Join(waits, " "), "1ms 2ms 4ms 4ms 1ms 2ms"; got != want {
		t.Errorf("waits %s, want %s\n%s", got, want, logs)
	}
	contains(t, "the log", logs.String(), "level=ERROR", "chain=base", `error="node down"`)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRetryRecoversPanic: a follower attempt that panics (a decoder bug on a
// node answer nobody foresaw) is logged with its stack and the chain, and
// retried; the process, and with it the API, goes on.
func TestRetryRecoversPanic(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attempts := 0
	retry(ctx, logger, chainquery.Polygon, time.Millisecond, time.Millisecond, func(context.Context) (bool, error) {
		attempts++
		if attempts == 3 {
			cancel()
			return false, ctx.Err()
		}
		var answers []int
		_ = answers[attempts] // index out of range
		return false, nil
	})
	if attempts != 3 {
		t.Fatalf("%d attempts, want 3: a panic ended the retries", attempts)
	}
	contains(t, "the log", logs.String(), "level=ERROR", "chain=polygon", "index out of range", "stack=", "TestRetryRecoversPanic")
}
