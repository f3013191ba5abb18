package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// TestIngestSolana imports the token list, ingests the two complete mainnet
// blocks from a local RPC server with the command, and asks serve for an
// account of the last block whose mint the list knows.
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

	// Pick the first account of the last block, in block order, whose mint
	// the imported list knows, with the package's own extraction and list
	// reader: the data decide, the same way every run. The end-to-end test
	// checks every account independently; this one checks the wiring.
	changes, err := solana.NewExtractor().Changes(last, lastSlot)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(list)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := solana.ReadTokenList(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	symbols := make(map[chainquery.PublicKey]string, len(tokens))
	for _, tok := range tokens {
		symbols[tok.Mint] = tok.Symbol
	}
	var acct, symbol string
	for _, c := range changes {
		if s, ok := symbols[c.Mint]; ok && s != "" {
			acct, symbol = c.Account.String(), s
			break
		}
	}
	if acct == "" {
		// Not a missing prerequisite: the data are there and hold no
		// account the test can ask about, so the test would check nothing.
		t.Fatalf("none of the %d balance changes of slot %d is of a mint with a symbol in %s", len(changes), lastSlot, list)
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
	if body["token_symbol"] != symbol {
		t.Errorf("account %s: token_symbol %v, want %s", acct, body["token_symbol"], symbol)
	}
	if fmt.Sprint(body["block_slot_last_updated"]) != fmt.Sprint(lastSlot) {
		t.Errorf("block_slot_last_updated %v", body["block_slot_last_updated"])
	}

	// SOL balances are ingested by default: the last full block's leader
	// ends it with its transactions' balance plus its fees and then its
	// share of the rent, 1,521,283,485,447 lamports (summed by hand from
	// the file: the last vote left 1,521,272,355,396).
	status, body = call(t, "GET", api.base()+"/api/v1/customer/solana/sol-balances/account/74theNPM1xGD5Pk54vV8hyBKF8Fqs1BgzTceGmcYVxiW"+
		"?datetime_filter="+at, key, nil)
	if status != 200 || fmt.Sprint(body["balance"]) != "1521.283485447" || fmt.Sprint(body["block_slot_last_updated"]) != fmt.Sprint(lastSlot) {
		t.Errorf("SOL balance of the leader: status %d: %v", status, body)
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
	r := execute(t, nil, "ingest", "solana", "--db", "sqlite:"+t.TempDir()+"/db", "--rpc", solanatest.NewServer(t).URL)
	if r.code != 1 || !strings.Contains(r.stderr, "no start slot") {
		t.Errorf("empty database without --from-slot: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestIngestSolanaOtherChain fills a database from one node, then resumes it
// against a node whose block at the cursor's slot has another blockhash: the
// command must exit 1 with one message naming the slot, both hashes and what
// to do, and write nothing.
func TestIngestSolanaOtherChain(t *testing.T) {
	const (
		ours   = "7FRPQq2kvN5NWudpiHstcpQnxEDFeDBJN54sU1TeTF9t"
		theirs = "2jTnThYqe92Sg83jeQMYfGdiWdePfzVeFSFJ6pmxpVZy"
	)
	block := func(hash string, t int64) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"blockhash":%q,"blockTime":%d,"transactions":[]}`, hash, t))
	}
	node := solanatest.NewServer(t)
	node.AddBlock(100, block(ours, 1_700_000_000))
	db := "sqlite:" + filepath.Join(t.TempDir(), "solana.db")
	mustExecute(t, nil, "ingest", "solana", "--db", db, "--rpc", node.URL, "--from-slot", "100", "--metadata=false")

	fork := solanatest.NewServer(t)
	fork.AddBlock(100, block(theirs, 1_700_000_000))
	fork.AddBlock(101, block(theirs, 1_700_000_001))
	r := execute(t, nil, "ingest", "solana", "--db", db, "--rpc", fork.URL, "--metadata=false")
	want := "chainquery: solana: the stored cursor is slot 100 with blockhash " + ours +
		", but the node's block at slot 100 has blockhash " + theirs +
		": this database holds another chain or fork: use a fresh database for this node"
	if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "Run '") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", r.code, r.stderr, want)
	}
	// The node the database was filled from still resumes, from slot 101.
	node.AddBlock(101, block(ours, 1_700_000_001))
	r = execute(t, nil, "ingest", "solana", "--db", db, "--rpc", node.URL, "--metadata=false")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	contains(t, "the resumed log", r.stderr, "msg=done", "blocks=1", "last_slot=101")
}
