package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// TestIngestSolana imports the token list, ingests the two complete mainnet
// blocks from a local RPC server with the command, and asks serve for an
// account of a mint the list knows.
func TestIngestSolana(t *testing.T) {
	node := solanatest.NewServer(t)
	var last *solana.Block
	var lastSlot uint64
	for _, b := range solanatest.FullBlocks {
		raw := solanatest.ReadBlock(t, b.File)
		node.AddBlock(b.Slot, raw)
		blk, err := solana.DecodeBlock(raw)
		if err != nil {
			t.Fatal(err)
		}
		last, lastSlot = blk, b.Slot
	}
	tailTime := last.Time().Add(time.Hour)
	node.AddBlock(lastSlot+5000, json.RawMessage(fmt.Sprintf(`{"blockTime":%d,"transactions":[]}`, tailTime.Unix())))

	db := "sqlite:" + filepath.Join(t.TempDir(), "solana.db")
	list := solanatest.Testdata(t, "tokenlist", "solana.tokenlist.subset.json")
	out := mustExecute(t, nil, "registry", "import", "--db", db, list)
	contains(t, "registry import", out, "imported 246 tokens")

	from := fmt.Sprint(solanatest.FullBlocks[0].Slot)
	r := execute(t, nil, "ingest", "solana", "--db", db, "--rpc", node.URL, "--from-slot", from, "--metadata=false")
	if r.code != 0 {
		t.Fatalf("ingest solana: exit %d\n%s", r.code, r.stderr)
	}
	contains(t, "the log", r.stderr, "msg=done", "blocks=3", fmt.Sprintf("last_slot=%d", lastSlot+5000))

	// Pick an account of the last block whose mint the list knows, with the
	// package's own extraction: the end-to-end test checks every account
	// independently; this one checks the wiring.
	changes, err := solana.NewExtractor().Changes(last, lastSlot)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v": true, "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB": true}
	acct := ""
	for _, c := range changes {
		if names[c.Mint.String()] {
			acct = c.Account.String()
		}
	}
	if acct == "" {
		t.Skip("no USDC or USDT account changed in the last block")
	}
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "k", "--endpoints", "all"))
	api := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0")
	defer api.stop(t)
	at := last.Time().Truncate(10 * time.Minute).Add(10 * time.Minute).Format(time.RFC3339)
	status, body := call(t, "GET", api.base()+"/api/v1/customer/solana/token-balances/token-account/"+acct+
		"?include_metadata=true&datetime_filter="+at, key, nil)
	if status != 200 {
		t.Fatalf("token balance: status %d: %v", status, body)
	}
	if sym, _ := body["token_symbol"].(string); sym != "USDC" && sym != "USDT" {
		t.Errorf("token_symbol %v", body["token_symbol"])
	}
	if fmt.Sprint(body["block_slot_last_updated"]) != fmt.Sprint(lastSlot) {
		t.Errorf("block_slot_last_updated %v", body["block_slot_last_updated"])
	}
}

func TestIngestSolanaUsage(t *testing.T) {
	for _, args := range [][]string{
		{"ingest", "solana", "--rpc", "http://127.0.0.1:1", "--concurrency", "0"},
		{"ingest", "solana", "--rpc", "http://127.0.0.1:1", "--from-slot", "5", "--to-slot", "9", "--follow"},
		{"ingest", "solana", "--rpc", "ftp://x", "--from-slot", "5"},
		{"registry", "import", "--db", "sqlite::memory:"},
		{"registry"},
	} {
		r := execute(t, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "chainquery: ") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	// An empty database needs a start: the stored cursor, --from-slot or --follow.
	r := execute(t, nil, "ingest", "solana", "--db", "sqlite:"+t.TempDir()+"/db", "--rpc", "http://127.0.0.1:1")
	if r.code != 1 || !strings.Contains(r.stderr, "no start slot") {
		t.Errorf("empty database without --from-slot: exit %d, stderr %q", r.code, r.stderr)
	}
}
