package solanareplay_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/solanareplay"
	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// TestEmbeddedCopies checks that the embedded data are the test data that
// testdata/solana/SOURCES.md accounts for.
func TestEmbeddedCopies(t *testing.T) {
	raw, err := solanareplay.MainnetBlock()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, solanatest.ReadBlock(t, "mainnet_getBlock_110360000.full.json.gz")) {
		t.Error("the embedded block differs from testdata/solana/getBlock/mainnet_getBlock_110360000.full.json.gz")
	}
	list, _ := io.ReadAll(solanareplay.TokenList())
	want, err := os.ReadFile(solanatest.Testdata(t, "tokenlist", "solana.tokenlist.subset.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(list, want) {
		t.Error("the embedded token list differs from testdata/solana/tokenlist/solana.tokenlist.subset.json")
	}
}

// TestExamples checks what the package says of the recorded block against
// the block, with the solana package's own decoding.
func TestExamples(t *testing.T) {
	raw, err := solanareplay.MainnetBlock()
	if err != nil {
		t.Fatal(err)
	}
	b, err := solana.DecodeBlock(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Time().Unix(); got != solanareplay.MainnetBlockTime {
		t.Errorf("blockTime %d, MainnetBlockTime %d", got, solanareplay.MainnetBlockTime)
	}
	if at := b.Time().Truncate(10 * time.Minute).Add(10 * time.Minute); !at.Equal(solanareplay.ExampleAt) {
		t.Errorf("ExampleAt %s, want %s: the first snapshot after the block", solanareplay.ExampleAt, at)
	}

	changes, err := solana.NewExtractor().Changes(b, solanareplay.MainnetSlot)
	if err != nil {
		t.Fatal(err)
	}
	owned := map[chainquery.PublicKey]map[chainquery.PublicKey]bool{} // owner -> accounts
	var account *chainquery.TokenBalanceChange
	for _, c := range changes {
		if c.Owner != nil {
			if owned[*c.Owner] == nil {
				owned[*c.Owner] = map[chainquery.PublicKey]bool{}
			}
			owned[*c.Owner][c.Account] = true
		}
		if c.Account.String() == solanareplay.ExampleTokenAccount {
			account = c
		}
	}
	owner, err := chainquery.ParsePublicKey("owner", solanareplay.ExampleOwner)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, accounts := range owned {
		most = max(most, len(accounts))
	}
	if n := len(owned[owner]); n != 2 || n < most {
		t.Errorf("ExampleOwner owns %d token accounts that change in the block, want 2, the most any owner has (%d)", n, most)
	}
	if account == nil || account.Owner == nil || account.Owner.String() != solanareplay.ExampleOwner ||
		account.Mint.String() != "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" || account.Amount != 538_847_272_574 {
		t.Errorf("ExampleTokenAccount: %+v, want a USDC account of ExampleOwner", account)
	}

	sol, err := solana.SOLChanges(b, solanareplay.MainnetSlot)
	if err != nil {
		t.Fatal(err)
	}
	var lamports uint64
	for _, c := range sol {
		if c.Account.String() == solanareplay.ExampleSOLAccount {
			lamports = c.Lamports
		}
	}
	if lamports != 1_521_283_485_447 {
		t.Errorf("ExampleSOLAccount ends the block with %d lamports, want 1521283485447", lamports)
	}
}

// TestMainnet reads the node Mainnet makes through the solana client, as
// the ingester does: the recorded block, then the tail an hour later.
func TestMainnet(t *testing.T) {
	n, err := solanareplay.Mainnet()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := solanareplay.Serve(n)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := solana.NewClient(srv.URL)
	if head, err := c.Slot(t.Context()); err != nil || head != solanareplay.TailSlot {
		t.Fatalf("getSlot: %d, %v; want TailSlot %d", head, err, solanareplay.TailSlot)
	}
	slots, err := c.Blocks(t.Context(), solanareplay.MainnetSlot, solanareplay.TailSlot)
	if err != nil || len(slots) != 2 || slots[0] != solanareplay.MainnetSlot || slots[1] != solanareplay.TailSlot {
		t.Fatalf("getBlocks: %v, %v", slots, err)
	}
	raws, err := c.RawBlocks(t.Context(), slots, true)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := solana.DecodeBlock(raws[1])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("chainquery dev: the empty block after mainnet slot 110360000"))
	if tail.Blockhash != solanareplay.TailBlockhash || chainquery.Base58Encode(sum[:]) != solanareplay.TailBlockhash {
		t.Errorf("the tail's blockhash %q, TailBlockhash %q, want the SHA-256 the comment says", tail.Blockhash, solanareplay.TailBlockhash)
	}
	if want := solanareplay.ExampleAt.Add(40 * time.Minute); tail.Time().Before(want) {
		t.Errorf("the tail's time %s is before %s: the example snapshot would not be covered", tail.Time(), want)
	}
}
