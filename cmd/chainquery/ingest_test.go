package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestIngestEVM ingests a real anvil chain up to its head, checks what the
// API then serves, and reruns the command: a rerun resumes after the stored
// head, fails nothing and duplicates nothing.
func TestIngestEVM(t *testing.T) {
	c := startChain(t)
	head := c.rounds(t, 3)
	db := "sqlite:" + filepath.Join(t.TempDir(), "ingest.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "all"))
	ingestArgs := []string{"ingest", "evm", "--db", db, "--chain", "polygon", "--rpc", c.node.URL,
		"--to", fmt.Sprint(head), "--confirmations", "0", "--batch", "2", "--concurrency", "3"}

	r := execute(t, nil, ingestArgs...)
	if r.code != 0 {
		t.Fatalf("ingest: exit code %d\n%s", r.code, r.stderr)
	}
	// The plan is logged at start: which call fills which table.
	contains(t, "the log", r.stderr, "ingestion plan", "trace_block fills traces", "eth_getBlockReceipts fills receipts and logs", "msg=done")

	// What the API serves: the head, and the traces of every round.
	traces := func() (int64, int64) {
		api := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0")
		defer api.stop(t)
		if got := latest(t, api.base(), "polygon", key); got != int64(head) {
			t.Errorf("Get Latest Block answers %d, want the node head %d", got, head)
		}
		status, body := call(t, "POST", api.base()+"/api/v1/customer/polygon/traces/filter?limit=50", key,
			map[string]any{"from_block": 0, "to_block": head})
		if status != 200 {
			t.Fatalf("Filter Traces: status %d: %v", status, body)
		}
		status, receipts := call(t, "GET", fmt.Sprintf("%s/api/v1/customer/polygon/blocks/receipts?block_number=%d&limit=50", api.base(), head), key, nil)
		if status != 200 {
			t.Fatalf("Get Block Receipts: status %d: %v", status, receipts)
		}
		return count(t, body), count(t, receipts)
	}
	nTraces, nReceipts := traces()
	if nTraces == 0 || nReceipts == 0 {
		t.Fatalf("the API serves %d traces and %d receipts of the head block after ingestion, want some", nTraces, nReceipts)
	}

	t.Run("Resume", func(t *testing.T) {
		r := execute(t, nil, ingestArgs...)
		if r.code != 0 {
			t.Fatalf("rerun: exit code %d\n%s", r.code, r.stderr)
		}
		contains(t, "the log of the rerun", r.stderr, "resuming after the stored head", fmt.Sprintf("stored_head=%d", head))
		if tr, rc := traces(); tr != nTraces || rc != nReceipts {
			t.Errorf("after the rerun the API serves %d traces and %d receipts, want %d and %d as before", tr, rc, nTraces, nReceipts)
		}
	})

	t.Run("UpToSafeHead", func(t *testing.T) {
		// Neither --to nor --follow: up to the node's head, then stop.
		newHead := c.rounds(t, 2)
		r := execute(t, nil, "ingest", "evm", "--db", db, "--chain", "polygon", "--rpc", c.node.URL, "--confirmations", "1")
		if r.code != 0 {
			t.Fatalf("ingest: exit code %d\n%s", r.code, r.stderr)
		}
		api := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0")
		defer api.stop(t)
		if got := latest(t, api.base(), "polygon", key); got != int64(newHead-1) {
			t.Errorf("Get Latest Block answers %d, want the safe head %d (head %d minus 1 confirmation)", got, newHead-1, newHead)
		}
	})

	t.Run("ErrWrongChain", func(t *testing.T) {
		execute(t, nil, "ingest", "evm", "--db", db, "--chain", "ethereum", "--rpc", c.node.URL).
			wantFailure(t, 1, "chainquery: ingest ethereum: the node at "+c.node.URL+" is chain id 137, not ethereum (1)")
	})

	t.Run("ErrFromPastStored", func(t *testing.T) {
		r := execute(t, nil, "ingest", "evm", "--db", db, "--chain", "polygon", "--rpc", c.node.URL, "--from", "1000", "--confirmations", "0")
		r.wantFailure(t, 1, "chainquery: ingest polygon: --from 1000 is past the stored head")
	})
}

// TestIngestEVM_Unreachable checks that a node that does not answer is
// reported soon, naming the chain and the method, and that the URL path,
// where hosted nodes keep the customer's key, is not printed.
func TestIngestEVM_Unreachable(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "u.db")
	r := execute(t, nil, "ingest", "evm", "--db", db, "--chain", "base", "--rpc", "http://127.0.0.1:1/v3/secretkey")
	r.wantFailure(t, 1, "chainquery: ingest base: eth_chainId from http://127.0.0.1:1/...")
	if strings.Contains(r.stderr, "secretkey") {
		t.Errorf("the key in the URL is printed:\n%s", r.stderr)
	}
}

// TestIngestEVM_Usage checks the command-line mistakes of ingest evm.
func TestIngestEVM_Usage(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "u.db")
	base := []string{"ingest", "evm", "--db", db, "--rpc", "http://127.0.0.1:8545"}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"ErrNoSubcommand", []string{"ingest"}, "ingest needs a subcommand: evm"},
		{"ErrUnknownSubcommand", []string{"ingest", "bitcoin"}, `unknown ingest subcommand "bitcoin"`},
		{"ErrChainMissing", base, "--chain is required"},
		{"ErrRPCMissing", []string{"ingest", "evm", "--chain", "polygon"}, "--rpc is required"},
		{"ErrUnknownChain", append(base, "--chain", "dogecoin"), `--chain "dogecoin" is not an EVM chain: use one of ethereum, polygon, base, arbitrum, optimism, binance, avalanche, gnosis`},
		{"ErrSolanaChain", append(base, "--chain", "solana"), `--chain "solana" is not an EVM chain`},
		{"ErrToAndFollow", append(base, "--chain", "polygon", "--to", "10", "--follow"), "--to and --follow exclude each other"},
		{"ErrFromAfterTo", append(base, "--chain", "polygon", "--from", "11", "--to", "10"), "--from 11 is after --to 10"},
		{"ErrBadFrom", append(base, "--chain", "polygon", "--from", "-1"), "want a block number"},
		{"ErrBadTraces", append(base, "--chain", "polygon", "--traces", "parity"), `--traces must be auto, trace_block, debug_trace or off, not "parity"`},
		{"ErrBadRPC", []string{"ingest", "evm", "--chain", "polygon", "--rpc", "ws://127.0.0.1:8546"}, "--rpc must be an http:// or https:// URL"},
		{"ErrConcurrency", append(base, "--chain", "polygon", "--concurrency", "0"), "--concurrency must be between 1 and 64"},
		{"ErrBatch", append(base, "--chain", "polygon", "--batch", "5000"), "--batch must be between 1 and 1000"},
		{"ErrLogFormat", append(base, "--chain", "polygon", "--log-format", "xml"), "--log-format must be text or json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			execute(t, nil, tt.args...).wantFailure(t, 2, tt.want)
		})
	}

	t.Run("Defaults", func(t *testing.T) {
		for chain, want := range map[string]string{"polygon": "128 auto", "ethereum": "12 off", "arbitrum": "20 off"} {
			m := NewMain()
			m.Getenv = noEnv
			if err := m.ParseFlags(t.Context(), []string{"ingest", "evm", "--chain", chain, "--rpc", "https://node.example/key"}); err != nil {
				t.Fatal(err)
			}
			s := m.cmd.(*ingestEVMCmd).chain
			if got := fmt.Sprint(s.confirmations, " ", s.traces); got != want || s.from != nil || s.concurrency != 4 || s.batch != 10 {
				t.Errorf("%s: confirmations and traces %q, from %v, concurrency %d, batch %d; want %q, nil, 4, 10", chain, got, s.from, s.concurrency, s.batch, want)
			}
		}
	})

	t.Run("Help", func(t *testing.T) {
		for _, args := range [][]string{{"ingest", "-h"}, {"ingest", "evm", "-h"}, {"dev", "-h"}} {
			r := execute(t, nil, args...)
			if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
				t.Errorf("%v: code %d, stdout %q", args, r.code, r.stdout)
			}
		}
		help := execute(t, nil, "ingest", "evm", "-h").stdout
		if !regexp.MustCompile(`\n\s+polygon\s+128\s+auto\n`).MatchString(help) {
			t.Errorf("ingest evm -h does not show polygon's defaults:\n%s", help)
		}
	})
}
