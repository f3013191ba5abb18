package ingest_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
	"github.com/chainquery/chainquery/sqlite"
)

const (
	synA    = "4fYNw3dojWmQ4dXtSGE9epjRGy9pFSx62YypT7avPYvA"
	synB    = "Bxw6mCzh4vb3bwL7K29AHZxJHzQsgNHYVMq2Ru1GZHMC"
	synMint = "DCVgUBbCV8gMhaiHcsdtm68dfUW5nqCJuswRy3yC7aoF" // has a metadata fixture
	synOwn  = "BNxtGx5mGZ4ZQA4b4RLoU47Kv4LmhxFsnk6LEJBFmUMR"
	synT22  = "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo" // a Token-2022 mint without a Metaplex account
)

// token2022Mint is the account data of a Token-2022 mint with the
// TokenMetadata extension (type 19) after a MetadataPointer (type 18).
func token2022Mint(mint chainquery.PublicKey, name, symbol string) []byte {
	data := make([]byte, 165, 400)
	data = append(data, 1) // account type: Mint
	tlv := func(typ uint16, value []byte) {
		data = binary.LittleEndian.AppendUint16(data, typ)
		data = binary.LittleEndian.AppendUint16(data, uint16(len(value)))
		data = append(data, value...)
	}
	str := func(b []byte, s string) []byte {
		return append(binary.LittleEndian.AppendUint32(b, uint32(len(s))), s...)
	}
	tlv(18, make([]byte, 64))
	v := append(make([]byte, 32), mint[:]...)
	v = str(str(str(v, name+"\x00\x00"), symbol), "https://example.invalid/t.json")
	tlv(19, binary.LittleEndian.AppendUint32(v, 0))
	return data
}

// synTx is one transaction over the keys [synA, synB] in the json encoding.
func synTx(err string, pre, post string) string {
	return `{"transaction":{"message":{"accountKeys":["` + synA + `","` + synB + `"]}},"meta":{"err":` + err +
		`,"preTokenBalances":[` + pre + `],"postTokenBalances":[` + post + `]}}`
}

func synBal(idx int, amount, owner string) string {
	o := ""
	if owner != "" {
		o = `"owner":"` + owner + `",`
	}
	return fmt.Sprintf(`{"accountIndex":%d,"mint":"%s",%s"uiTokenAmount":{"amount":"%s","decimals":0}}`, idx, synMint, o, amount)
}

// synBlock is a block at time t whose blockhash is synHash(t).
func synBlock(t int64, txs ...string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"blockhash":"%s","blockTime":%d,"transactions":[%s]}`, synHash(t), t, strings.Join(txs, ",")))
}

// synHash is a blockhash made of n: 32 bytes in base58.
func synHash(n int64) string {
	var h chainquery.PublicKey
	binary.BigEndian.PutUint64(h[24:], uint64(n))
	h[0] = 0xb1
	return h.String()
}

var _ ingest.SolanaSource = (*solana.Source)(nil)

// quickSource is a source of node that waits a millisecond between retries.
func quickSource(node *solanatest.Server) *solana.Source {
	c := solana.NewClient(node.URL)
	c.RPC.MinBackoff = time.Millisecond
	src := solana.NewSource(c, nil)
	src.NullWait = time.Millisecond
	return src
}

func openSQLite(tb testing.TB) *sqlite.DB {
	db, err := sqlite.Open(filepath.Join(tb.TempDir(), "db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func balanceAt(t *testing.T, db *sqlite.DB, acct string, at time.Time) *chainquery.TokenBalance {
	t.Helper()
	k, _ := chainquery.ParsePublicKey("a", acct)
	b, err := db.FindTokenBalance(context.Background(), chainquery.TokenBalanceFilter{Account: k, At: at, IncludeMetadata: true})
	if err != nil {
		t.Fatalf("%s at %s: %v", acct, at, err)
	}
	return b
}

// TestSolanaSynthetic covers what the recorded blocks lack: a failed
// transaction, two changes to one account in one slot, a closed account,
// skipped slots, a listed block the node first answers null for, a run
// stopped and resumed, and the registry filled from Metaplex metadata.
func TestSolanaSynthetic(t *testing.T) {
	ctx := context.Background()
	node := solanatest.NewServer(t)
	t0 := int64(1_700_000_000) // 2023-11-14 22:13:20 UTC
	node.AddBlock(100, synBlock(t0,
		synTx("null", "", synBal(0, "5", synOwn)),
		synTx(`{"InstructionError":[0,{"Custom":1}]}`, synBal(0, "5", ""), synBal(0, "999", "")),
		synTx("null", synBal(0, "5", synOwn), synBal(0, "7", synOwn)+","+synBal(1, "1", "")),
	))
	// Slots 101-104 are skipped.
	node.AddBlock(105, synBlock(t0+600, synTx("null", synBal(0, "7", "")+","+synBal(1, "1", ""), synBal(1, "2", ""))))
	node.AddBlock(106, synBlock(t0+7200))
	node.NullFor(105, 2)
	raw, err := os.ReadFile(solanatest.Testdata(t, "metaplex", "getMultipleAccounts_metadata_FyZ5UEVzriuD1hHjtakuwHWbQMNL5EUseuQyC2ohBD6x.json"))
	if err != nil {
		t.Fatal(err)
	}
	var resp []struct {
		Result struct{ Value []struct{ Data []string } }
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	data, _ := base64.StdEncoding.DecodeString(resp[0].Result.Value[0].Data[0])
	node.AddAccount("FyZ5UEVzriuD1hHjtakuwHWbQMNL5EUseuQyC2ohBD6x", data)

	t22, _ := chainquery.ParsePublicKey("mint", synT22)
	node.AddOwnedAccount(synT22, solana.Token2022Program.String(), token2022Mint(t22, "Twenty Twenty-Two", "TTT"))
	// Slot 107: account A changes again with no owner in the answer, seen
	// by a new process that has no memory of A; account B gets a balance of
	// the Token-2022 mint.
	node.AddBlock(107, synBlock(t0+7800, synTx("null", "", synBal(0, "3", "")+","+
		strings.Replace(synBal(1, "4", synOwn), synMint, synT22, 1))))

	db := openSQLite(t)
	src := quickSource(node)
	// Two runs of one ingester: the second resumes after the stored cursor
	// (its From is ignored), and the owner is carried by its memory.
	e := &ingest.SolanaLoop{Store: db, Source: src, Metadata: true, BatchSlots: 1}
	for _, r := range [][2]uint64{{100, 100}, {5, 106}} {
		e.From, e.To = &r[0], &r[1]
		if err := e.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A third run, as a new process: no --from-slot, no memory of owners.
	to := uint64(107)
	fresh := &ingest.SolanaLoop{Store: db, Source: src, Metadata: true, BatchSlots: 1, To: &to}
	if err := fresh.Run(ctx); err != nil {
		t.Fatal(err)
	}
	last := time.Unix(t0+7800, 0).UTC() // the cursor: the last block's time
	if a := balanceAt(t, db, synA, last); a.Amount != 3 || a.Slot != 107 || a.Owner == nil || a.Owner.String() != synOwn {
		t.Errorf("A in slot 107 (owner from the store): %+v", a)
	}
	if b := balanceAt(t, db, synB, last); b.Mint != t22 || b.TokenName == nil || *b.TokenName != "Twenty Twenty-Two" || *b.TokenSymbol != "TTT" {
		t.Errorf("B of the Token-2022 mint: %+v", b)
	}

	at := time.Unix(t0, 0).UTC().Truncate(10 * time.Minute).Add(10 * time.Minute) // between the blocks
	a := balanceAt(t, db, synA, at)
	if a.Amount != 7 || a.Slot != 100 || a.Owner == nil || a.Owner.String() != synOwn {
		t.Errorf("A after slot 100: %+v", a)
	}
	if a.TokenName == nil || *a.TokenName != "Dinodawgs 3D #2032" || *a.TokenSymbol != "DDK" {
		t.Errorf("metadata: %v %v", a.TokenName, a.TokenSymbol)
	}
	later := at.Add(time.Hour)
	if a := balanceAt(t, db, synA, later); a.Amount != 0 || a.Slot != 105 || a.Owner == nil || a.Owner.String() != synOwn {
		t.Errorf("A closed in slot 105 (owner carried): %+v", a)
	}
	if b := balanceAt(t, db, synB, later); b.Amount != 2 || b.Owner != nil {
		t.Errorf("B (owner never said): %+v", b)
	}
}

// TestSolanaNullForever fails rather than storing a listed slot as empty.
func TestSolanaNullForever(t *testing.T) {
	node := solanatest.NewServer(t)
	node.AddBlock(7, synBlock(1_700_000_000))
	node.NullFor(7, 1000)
	from, to := uint64(7), uint64(7)
	src := quickSource(node)
	src.NullRetries = 2
	e := &ingest.SolanaLoop{Store: openSQLite(t), Source: src, From: &from, To: &to}
	if err := e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no block") {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkIngestSolana ingests the two complete mainnet blocks, repeated at
// successive slots (100 blocks, one skipped slot in ten), through the local
// RPC server into SQLite.
func BenchmarkIngestSolana(b *testing.B) {
	node := solanatest.NewServer(b)
	var raws []json.RawMessage
	for _, fb := range solanatest.FullBlocks {
		raws = append(raws, solanatest.ReadBlock(b, fb.File))
	}
	const blocks = 100
	slot := uint64(200_000_000)
	for i := 0; i < blocks; i++ {
		if i%10 == 9 {
			slot++ // a skipped slot
		}
		node.AddBlock(slot, raws[i%len(raws)])
		slot++
	}
	b.ResetTimer()
	var rows uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := openSQLite(b)
		from := uint64(200_000_000)
		p := &ingest.Progress{Chain: "solana"}
		e := &ingest.SolanaLoop{Store: db, Source: solana.NewSource(solana.NewClient(node.URL), nil), From: &from, Progress: p}
		b.StartTimer()
		if err := e.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		s := p.Snapshot()
		if s.Blocks != blocks {
			b.Fatalf("%d blocks ingested", s.Blocks)
		}
		rows += s.Rows
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(blocks*b.N)/secs, "blocks/s")
	b.ReportMetric(float64(rows)/secs, "rows/s")
}
