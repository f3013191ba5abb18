package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// closedPort returns the address of a 127.0.0.1 port that was just listened
// on and closed: connecting to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// gatewayPage is what a reverse proxy in front of a node answers: a page of
// markup.
var gatewayPage = "<!DOCTYPE html>\n<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n" +
	strings.Repeat("<center><h1>502 Bad Gateway</h1></center>\n", 30) + "</body>\n</html>\n"

// notJSONRPC returns the URL of an HTTP server on 127.0.0.1 that answers
// every request with gatewayPage as HTML, with status.
func notJSONRPC(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		io.WriteString(w, gatewayPage)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// dbFiles returns the database files in dir: chainquery.db and its -wal
// and -shm.
func dbFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "chainquery.db*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestIngest_NodeDown runs ingest evm and ingest solana, as on a first run
// (the default database, chainquery.db in the working directory), against
// a node that cannot be reached or that does not speak JSON-RPC: each fails
// with one line naming the method once and the node's URL without its path,
// and leaves no database behind. A database that was there before is still
// there, whole.
func TestIngest_NodeDown(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	closed := "http://" + closedPort(t)
	refused := func(method string) string {
		return method + " from " + closed + "/...: post node: dial tcp " + strings.TrimPrefix(closed, "http://") + ": connect: connection refused"
	}
	badGateway, htmlPage := notJSONRPC(t, http.StatusBadGateway), notJSONRPC(t, http.StatusOK)
	for _, tt := range []struct {
		name string
		args []string
		want string // the whole of standard error
	}{
		{"EVM", []string{"ingest", "evm", "--chain", "base", "--rpc", closed + "/v3/KEY"},
			"chainquery: ingest base: " + refused("eth_chainId")},
		{"EVMBadGateway", []string{"ingest", "evm", "--chain", "base", "--rpc", badGateway + "/v3/KEY"},
			"chainquery: ingest base: eth_chainId from " + badGateway + "/...: http 502 Bad Gateway: <!DOCTYPE html>…"},
		{"EVMHTMLPage", []string{"ingest", "evm", "--chain", "base", "--rpc", htmlPage + "/v3/KEY"},
			"chainquery: ingest base: eth_chainId from " + htmlPage + "/...: malformed answer: an HTML page instead of JSON: <!DOCTYPE html>…"},
		{"Solana", []string{"ingest", "solana", "--rpc", closed + "/KEY", "--from-slot", "1"},
			"chainquery: solana: " + refused("getSlot")},
		{"SolanaBadGateway", []string{"ingest", "solana", "--rpc", badGateway + "/KEY", "--from-slot", "1"},
			"chainquery: solana: getSlot from " + badGateway + "/...: http 502 Bad Gateway: <!DOCTYPE html>…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := execute(t, nil, tt.args...)
			if r.code != 1 || r.stderr != tt.want+"\n" {
				t.Errorf("exit code %d, stderr:\n%s\nwant code 1 and:\n%s", r.code, r.stderr, tt.want)
			}
			if files := dbFiles(t, dir); len(files) > 0 {
				t.Errorf("the failed run left %v behind", files)
			}
		})
	}

	t.Run("Existing", func(t *testing.T) {
		mustExecute(t, nil, "keys", "create", "--name", "me", "--endpoints", "all")
		before := dbFiles(t, dir)
		if len(before) == 0 {
			t.Fatal("keys create made no chainquery.db")
		}
		for _, args := range [][]string{
			{"ingest", "evm", "--chain", "base", "--rpc", closed},
			{"ingest", "solana", "--rpc", closed, "--from-slot", "1"},
		} {
			if r := execute(t, nil, args...); r.code != 1 {
				t.Errorf("%v: exit code %d, want 1\n%s", args, r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "chainquery.db")); err != nil {
				t.Fatalf("%v removed the database that was there: %v", args, err)
			}
		}
		contains(t, "keys list", mustExecute(t, nil, "keys", "list"), "me")
	})
}
