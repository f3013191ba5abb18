package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/solanareplay"
	"github.com/chainquery/chainquery/internal/testenv"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// TestDev runs chainquery dev as a user would, then runs every curl command
// it printed, with the key it printed: each answers 200 with data, the
// Solana ones with the recorded mainnet block dev replays. Cancelling stops
// it cleanly and saves the chain for --keep, which a second run resumes.
func TestDev(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "dev.db")
	db := "sqlite:" + dbPath
	env := map[string]string{"CHAINQUERY_DB": "sqlite:" + filepath.Join(dir, "never.db")} // dev ignores it
	dev := start(t, env, "dev", "--db", db, "--listen", "127.0.0.1:0", "--interval", "100ms")

	out := waitOutput(t, dev, "# Token Balance by Account")
	cmds := curlCommands(t, out)
	if len(cmds) != len(chainquery.Endpoints) {
		t.Fatalf("dev printed %d curl commands, want one per endpoint:\n%s", len(cmds), out)
	}
	for _, c := range cmds {
		status, body := c.run(t)
		switch {
		case status != http.StatusOK:
			t.Errorf("%s: status %d: %s", c.url, status, body)
		case strings.Contains(c.url, "/solana/"):
			checkDevSolana(t, c.url, body)
		case strings.HasSuffix(c.url, "/export"):
			if !bytes.HasPrefix(body, []byte(`{"block_number":`)) || !bytes.HasSuffix(body, []byte("\n{\"cursor\":null}\n")) {
				t.Errorf("%s: %.300s; want rows, then {\"cursor\":null} last", c.url, body)
			}
		case strings.Contains(c.url, "/traces"), strings.Contains(c.url, "/logs"), strings.Contains(c.url, "/receipts"):
			var page struct{ Count int }
			if json.Unmarshal(body, &page) != nil || page.Count == 0 {
				t.Errorf("%s: %s; want results", c.url, body)
			}
		}
	}
	// The README's examples answer against dev, with its key, block and
	// transaction.
	var block, tx string
	for _, c := range cmds {
		if m := regexp.MustCompile(`/transactions/(0x[0-9a-f]+)/logs\?block_number=(\d+)`).FindStringSubmatch(c.url); m != nil {
			tx, block = m[1], m[2]
		}
	}
	runREADMEExamples(t, dev.base(), cmds[0].headers["apikey"], block, tx)
	// Metrics, as serve has them, and the page limits are named.
	resp, err := http.Get(dev.base() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(metrics, []byte("chainquery_http_requests_total")) ||
		!bytes.Contains(metrics, []byte(`chainquery_ingest_stored_head{chain="polygon"}`)) {
		t.Errorf("GET /metrics: %d\n%.300s", resp.StatusCode, metrics)
	}
	if !strings.Contains(out, dev.base()+"/metrics") || !strings.Contains(out, dev.base()+"/docs") ||
		!strings.Contains(out, "limit is 1 to 50") {
		t.Errorf("dev's welcome names no /metrics, /docs or page limits:\n%s", out)
	}
	// The chain goes on: new blocks are followed.
	key := cmds[0].headers["apikey"]
	first := latest(t, dev.base(), "polygon", key)
	deadline := time.Now().Add(10 * time.Second)
	for latest(t, dev.base(), "polygon", key) <= first && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := latest(t, dev.base(), "polygon", key); got <= first {
		t.Errorf("Get Latest Block stays at %d: dev does not follow its chain\n%s", got, dev.stderr)
	}
	dev.stop(t)
	if _, err := os.Stat(filepath.Join(dir, "never.db")); err == nil {
		t.Error("dev used CHAINQUERY_DB")
	}
	if _, err := os.Stat(filepath.Join(dir, "dev.anvil.json")); err != nil {
		t.Errorf("the chain was not saved for --keep: %v", err)
	}

	t.Run("Keep", func(t *testing.T) {
		stopped := latest(t, startServe(t, db).base(), "polygon", key)
		dev := start(t, nil, "dev", "--db", db, "--listen", "127.0.0.1:0", "--interval", "100ms", "--keep")
		waitOutput(t, dev, "# Token Balance by Account")
		contains(t, "the log", dev.stderr.String(), "resuming after the stored head")
		if strings.Contains(dev.stderr.String(), "reorg") {
			t.Errorf("the kept chain was rewound:\n%s", dev.stderr)
		}
		newKey := curlCommands(t, dev.stdout.String())[0].headers["apikey"]
		// The same contracts, and the key said to be new.
		contracts := regexp.MustCompile(`test contracts +Driver (0x[0-9a-fA-F]+), Lib (0x[0-9a-fA-F]+)`)
		before, after := contracts.FindStringSubmatch(out), contracts.FindStringSubmatch(dev.stdout.String())
		if before == nil || after == nil || before[1] != after[1] || before[2] != after[2] {
			t.Errorf("test contracts %v before --keep, %v after: want the same ones", before, after)
		}
		contains(t, "the welcome", dev.stdout.String(), "a new one: the last run's no longer works")
		// The replayed Solana block is kept too, not ingested again.
		contains(t, "the log", dev.stderr.String(), `msg="resuming after the stored cursor" chain=solana slot=110366000`)
		for _, c := range curlCommands(t, dev.stdout.String()) {
			if !strings.Contains(c.url, "/solana/") {
				continue
			}
			if status, body := c.run(t); status != http.StatusOK {
				t.Errorf("%s after --keep: status %d: %s", c.url, status, body)
			} else {
				checkDevSolana(t, c.url, body)
			}
		}
		if got := latest(t, dev.base(), "polygon", newKey); got < stopped {
			t.Errorf("Get Latest Block answers %d after --keep, want at least %d", got, stopped)
		}
		if status, _ := call(t, "GET", dev.base()+"/api/v1/customer/polygon/blocks/latest", key, nil); status != http.StatusUnauthorized {
			t.Errorf("the old dev key answers %d, want 401: it is replaced", status)
		}
		dev.stop(t)
	})

	t.Run("ErrForeignDatabase", func(t *testing.T) {
		mustExecute(t, nil, "keys", "create", "--db", db, "--name", "alice", "--endpoints", "all")
		execute(t, nil, "dev", "--db", db, "--listen", "127.0.0.1:0").
			wantFailure(t, 1, `will not delete `+db+`: it holds the API key "alice", which dev did not create`)
	})

	t.Run("ErrForeignSolana", func(t *testing.T) {
		node := solanatest.NewServer(t)
		node.AddBlock(100, json.RawMessage(`{"blockhash":"7FRPQq2kvN5NWudpiHstcpQnxEDFeDBJN54sU1TeTF9t","blockTime":1700000000,"transactions":[]}`))
		other := "sqlite:" + filepath.Join(t.TempDir(), "solana.db")
		mustExecute(t, nil, "ingest", "solana", "--db", other, "--rpc", node.URL, "--from-slot", "100", "--metadata=false")
		execute(t, nil, "dev", "--db", other, "--listen", "127.0.0.1:0").
			wantFailure(t, 1, `will not delete `+other+`: it holds Solana token balances up to slot 100, which dev does not replay`)
	})
}

// checkDevSolana checks the answer of one of dev's Solana curls against
// what the replayed block holds (solanareplay's examples).
func checkDevSolana(t *testing.T, url string, body []byte) {
	t.Helper()
	type balance struct {
		AccountOwner string      `json:"account_owner"`
		TokenAccount string      `json:"token_account"`
		TokenSymbol  string      `json:"token_symbol"`
		Balance      json.Number `json:"balance"`
		Slot         json.Number `json:"block_slot_last_updated"`
		Result       []balance   `json:"result"`
		Count        int         `json:"count"`
		SOLAccount   string      `json:"account"`
	}
	var got balance
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&got); err != nil {
		t.Errorf("%s: %v: %s", url, err, body)
		return
	}
	slot := json.Number(fmt.Sprint(solanareplay.MainnetSlot))
	var ok bool
	switch {
	case strings.Contains(url, "/sol-balances/account/"):
		ok = got.SOLAccount == solanareplay.ExampleSOLAccount && got.Balance == "1521.283485447" && got.Slot == slot
	case strings.Contains(url, "/token-balances/owner/"):
		ok = got.Count == 2 && len(got.Result) == 2
		for _, r := range got.Result {
			ok = ok && r.AccountOwner == solanareplay.ExampleOwner && r.TokenSymbol != "" && r.Slot == slot
		}
	case strings.Contains(url, "/token-balances/token-account/"):
		ok = got.TokenAccount == solanareplay.ExampleTokenAccount && got.AccountOwner == solanareplay.ExampleOwner &&
			got.TokenSymbol == "USDC" && got.Balance == "538847.272574" && got.Slot == slot
	default:
		t.Errorf("%s: a Solana endpoint the test does not know", url)
		return
	}
	if !ok {
		t.Errorf("%s: %s; want the replayed block's balances", url, body)
	}
}

// TestDev_Usage checks dev's command-line mistakes, and that a port in use
// fails before anvil starts.
func TestDev_Usage(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"ErrPostgres", []string{"dev", "--db", "postgres://u@h/d"}, "--db must be sqlite:PATH"},
		{"ErrInterval", []string{"dev", "--interval", "0s"}, "--interval must be at least 10ms"},
		{"ErrListen", []string{"dev", "--listen", "8080"}, "--listen must be host:port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			execute(t, nil, tt.args...).wantFailure(t, 2, tt.want)
		})
	}
	t.Run("ErrPortInUse", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		// The last run's database and chain stay: dev deletes them only
		// once it knows it can serve.
		dir := t.TempDir()
		last := []string{filepath.Join(dir, "d.db"), filepath.Join(dir, "d.anvil.json")}
		for _, f := range last {
			if err := os.WriteFile(f, []byte("last run"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		execute(t, nil, "dev", "--db", "sqlite:"+last[0], "--listen", ln.Addr().String()).
			wantFailure(t, 1, "chainquery: listen on "+ln.Addr().String())
		for _, f := range last {
			if b, err := os.ReadFile(f); err != nil || string(b) != "last run" {
				t.Errorf("%s: %q, %v: dev touched the last run although the port was taken", f, b, err)
			}
		}
	})
}

// TestEnsureAnvil checks how dev finds the checkout whose scripts/setup
// installs anvil, and what it says outside one.
func TestEnsureAnvil(t *testing.T) {
	root, ok := repoRoot()
	want, _ := filepath.Abs("../..")
	if !ok || root != want {
		t.Errorf("repoRoot() = %q, %v; want %q", root, ok, want)
	}
	t.Run("ErrOutsideCheckout", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("CHAINQUERY_ANVIL", "")
		t.Setenv("PATH", t.TempDir())
		err := ensureAnvil(t.Context(), NewMain(), slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "npm install @foundry-rs/anvil-linux-amd64") {
			t.Errorf("error %v, want how to install anvil", err)
		}
	})
}

// startServe serves db briefly, for a look at what a stopped command left.
func startServe(t *testing.T, db string) *running {
	t.Helper()
	r := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0")
	t.Cleanup(func() { r.cancel() })
	return r
}

// waitOutput waits until the command's standard output holds want.
func waitOutput(t *testing.T, r *running, want string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if out := r.stdout.String(); strings.Contains(out, want) {
			return out
		}
		select {
		case <-r.done:
			t.Fatalf("the command ended: %v\n%s", r.err, r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no %q in the output after 20s:\n%s\n%s", want, r.stdout, r.stderr)
	return ""
}

// curl is one printed curl command.
type curl struct {
	method, url, body string
	headers           map[string]string
}

var curlArg = regexp.MustCompile(`(?:(-H|-d) )?'([^']*)'`)

// curlCommands reads the curl commands of dev's output; each must run on
// its own: a full URL and the key written out, no shell variables.
func curlCommands(t *testing.T, out string) []curl {
	t.Helper()
	var cmds []curl
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "curl ") {
			continue
		}
		if strings.Contains(line, "$") {
			t.Errorf("a printed command needs a shell variable: %s", line)
		}
		c := curl{method: "GET", headers: map[string]string{}}
		if strings.HasPrefix(line, "curl -s -X POST ") {
			c.method = "POST"
		}
		for _, m := range curlArg.FindAllStringSubmatch(line, -1) {
			switch m[1] {
			case "":
				c.url = m[2]
			case "-H":
				name, value, _ := strings.Cut(m[2], ": ")
				c.headers[strings.ToLower(name)] = value
			case "-d":
				c.body = m[2]
			}
		}
		if !strings.HasPrefix(c.url, "http://") || !strings.HasPrefix(c.headers["apikey"], "cq_") {
			t.Fatalf("not a complete command: %s", line)
		}
		cmds = append(cmds, c)
	}
	return cmds
}

func (c curl) run(t *testing.T) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(c.method, c.url, bytes.NewReader([]byte(c.body)))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestDevFilesIgnored: what dev leaves in a checkout (its database and
// anvil's state of the default --db) is in .gitignore.
func TestDevFilesIgnored(t *testing.T) {
	_, err := exec.LookPath("git")
	testenv.Require(t, err == nil, "git is not installed: TestDevFilesIgnored asks it what .gitignore ignores")
	base := strings.TrimSuffix(strings.TrimPrefix(defaultDevDSN, "sqlite:"), ".db")
	for _, f := range []string{base + ".db", base + ".anvil.json", base + ".contracts.json"} {
		cmd := exec.Command("git", "check-ignore", "-q", f)
		cmd.Dir = "../.."
		if err := cmd.Run(); err != nil {
			t.Errorf("%s is not ignored by git (check-ignore: %v)", f, err)
		}
	}
}

// runREADMEExamples runs the curl commands of the README's "The API by
// example" with its variables set to base, key, block and tx: each must
// answer 200 with JSON, the Solana ones with the block dev replays.
func runREADMEExamples(t *testing.T, base, key, block, tx string) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## The API by example")
	_, code, _ := strings.Cut(section, "```sh\n")
	code, _, _ = strings.Cut(code, "```")
	now := time.Now().UTC()
	vars := strings.NewReplacer("$BASE", base, "$CHAINQUERY_KEY", key, "$N", block, "$TX", tx,
		"$(date -u -d '-1 hour' +%FT%TZ)", now.Add(-time.Hour).Format(time.RFC3339), "$(date -u +%FT%TZ)", now.Format(time.RFC3339))
	word := regexp.MustCompile(`"((?:[^"\\]|\\.)*)"|(\S+)`)
	n := 0
	for _, line := range strings.Split(code, "\n") {
		if !strings.HasPrefix(line, "curl ") {
			continue
		}
		line = vars.Replace(line)
		if strings.Contains(line, "$") {
			t.Errorf("README: a variable the test does not know: %s", line)
			continue
		}
		c := curl{method: "GET", headers: map[string]string{}}
		var flag string
		for _, m := range word.FindAllStringSubmatch(line, -1)[1:] {
			w := m[2]
			if m[2] == "" {
				w = strings.ReplaceAll(m[1], `\"`, `"`)
			}
			switch {
			case flag == "-X":
				c.method = w
			case flag == "-H":
				name, value, _ := strings.Cut(w, ": ")
				c.headers[strings.ToLower(name)] = value
			case flag == "-d":
				c.body = w
			case w == "-s":
			case strings.HasPrefix(w, "-"):
				flag = w
				continue
			default:
				c.url = w
			}
			flag = ""
		}
		status, body := c.run(t)
		want := http.StatusOK
		export := strings.HasSuffix(c.url, "/export") && bytes.HasSuffix(body, []byte("{\"cursor\":null}\n")) // NDJSON
		if status != want || !strings.HasSuffix(c.url, "/metrics") && !export && !json.Valid(body) {
			t.Errorf("README: %s\n-> %d (want %d): %.300s", line, status, want, body)
		}
		n++
	}
	if n < len(chainquery.Endpoints)+4 {
		t.Errorf("README: %d curl examples run, want one per endpoint and more", n)
	}
}
