package evm

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/testenv"
)

// The fast paths (decode_fast.go) must give exactly what encoding/json
// gives: these tests decode the same answers with fastPaths on and off and
// compare the rows, or the errors' text.

// decodeAll decodes a block, its receipts (an eth_getBlockReceipts answer,
// or one receipt) and its traces (kind 2: trace_block, 3: callTracer), as
// the fetcher does, and describes the outcome: the rows, or the first
// error.
func decodeAll(chain chainquery.Chain, block, receipts, traces []byte, kind int, fast bool) string {
	defer func(was bool) { fastPaths = was }(fastPaths)
	fastPaths = fast
	var notes decodeNotes
	d, err := decodeBlockWithNotes(chain, block, &notes)
	if err != nil {
		return "block: " + err.Error()
	}
	out := func(stage string, err error) string {
		return fmt.Sprintf("%s: %v\nnotes: %q\n%s", stage, err, notes, dumpBlock(d))
	}
	if receipts != nil {
		if len(receipts) > 0 && receipts[0] == '[' {
			err = applyBlockReceipts(d, receipts, &notes)
		} else {
			err = applyReceiptsWithNotes(d, []json.RawMessage{receipts}, &notes)
		}
		if err != nil {
			return out("receipts", err)
		}
	}
	switch kind {
	case 2:
		err = decodeParityTracesWithNotes(d, traces, &notes)
	case 3:
		err = decodeCallTracesWithNotes(d, traces, &notes)
	}
	return out("traces", err)
}

// dumpBlock renders every row of d, pointers followed.
func dumpBlock(d *chainquery.BlockData) string {
	var b strings.Builder
	dump := func(v any) {
		j, err := json.Marshal(v)
		if err != nil {
			j = []byte(err.Error())
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	dump(d.Block)
	for _, t := range d.Transactions {
		dump(t)
		fmt.Fprintf(&b, "input nil: %v\n", t.Input == nil)
	}
	for _, l := range d.Logs {
		dump(l)
		fmt.Fprintf(&b, "data nil: %v\n", l.Data == nil)
	}
	for _, t := range d.Traces {
		dump(t)
	}
	return b.String()
}

// TestFastPathsPolychain checks that the fast paths take every answer of
// the Polygon-shaped chain (else the ingester would quietly run at the old
// speed) and give the rows encoding/json gives.
func TestFastPathsPolychain(t *testing.T) {
	c, err := polychain.New(polychain.Config{Seed: 3, Blocks: 4, TxPerBlock: 30, Accounts: 500})
	if err != nil {
		t.Fatal(err)
	}
	for n := c.First(); n <= c.Last(); n++ {
		b := c.Block(n)
		block := polychain.Render(b, polychain.KindBlockFull)
		receipts := polychain.Render(b, polychain.KindReceipts)
		parity := polychain.Render(b, polychain.KindParity)
		calls := polychain.Render(b, polychain.KindCallTracer)
		var jb jsonBlock
		if !fastBlock(block, &jb, nil) {
			t.Errorf("block %d: the fast path gave up", n)
		}
		if _, ok := fastReceipts(receipts, nil); !ok {
			t.Errorf("block %d receipts: the fast path gave up", n)
		}
		if _, ok := fastParityEach(parity, nil, func(int, *parityTrace) {}); !ok {
			t.Errorf("block %d trace_block: the fast path gave up", n)
		}
		if _, _, ok := fastCallTraces(calls, nil); !ok {
			t.Errorf("block %d callTracer: the fast path gave up", n)
		}
		for kind, traces := range map[int][]byte{2: parity, 3: calls} {
			fast := decodeAll(chainquery.Polygon, block, receipts, traces, kind, true)
			slow := decodeAll(chainquery.Polygon, block, receipts, traces, kind, false)
			if fast != slow {
				t.Fatalf("block %d kind %d: fast and encoding/json differ:\n%s", n, kind, firstDiff(fast, slow))
			}
			if !strings.HasPrefix(fast, "traces: <nil>") {
				t.Fatalf("block %d kind %d: %.300s", n, kind, fast)
			}
		}
	}
}

// TestFastPathsFixtures compares both paths on every real node answer of
// testdata/evm, each given to every decoder (most are errors: the errors
// must be the same too).
func TestFastPathsFixtures(t *testing.T) {
	paths := testenv.GlobTestdata(t, filepath.Join("evm", "*", "*.json"))
	type fixture struct {
		chain chainquery.Chain
		data  []byte
	}
	var blocks, answers []fixture
	for _, p := range paths {
		data := testenv.ReadTestdata(t, p)
		fx := fixture{chainquery.Chain(filepath.Base(filepath.Dir(p))), fixtureResult(data)}
		answers = append(answers, fx)
		if strings.Contains(filepath.Base(p), "_full__") || strings.Contains(filepath.Base(p), "eth_getBlockByHash") {
			blocks = append(blocks, fx)
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no block fixtures")
	}
	compared := 0
	same := func(chain chainquery.Chain, block, receipts, traces []byte, kind int) {
		t.Helper()
		fast := decodeAll(chain, block, receipts, traces, kind, true)
		if slow := decodeAll(chain, block, receipts, traces, kind, false); fast != slow {
			t.Fatalf("fast and encoding/json differ:\n%s", firstDiff(fast, slow))
		}
		compared++
	}
	for _, block := range blocks {
		same(block.chain, block.data, nil, nil, 0)
		// Every answer of the block's chain as its receipts and as its
		// traces of both kinds: the block's own complete it, the others
		// are errors, whose text must be the same too.
		for _, a := range answers {
			if a.chain != block.chain {
				continue
			}
			same(block.chain, block.data, a.data, nil, 0)
			same(block.chain, block.data, nil, a.data, 2)
			same(block.chain, block.data, nil, a.data, 3)
		}
	}
	t.Logf("%d combinations compared", compared)
}

// fixtureResult is the result of a fixture file in any of its shapes.
func fixtureResult(data []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(data, &env) != nil {
		return data
	}
	if r, ok := env["result"]; ok {
		return r
	}
	return data
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\nfast: %.400s\nslow: %.400s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("fast %d lines, slow %d lines", len(al), len(bl))
}

// FuzzFastDecoders decodes arbitrary answers with the fast paths on and off:
// rows and errors must be the same. Run it after changing decode_fast.go or
// jsonscan.go: go test ./evm -run '^$' -fuzz FuzzFastDecoders.
func FuzzFastDecoders(f *testing.F) {
	c, err := polychain.New(polychain.Config{Seed: 5, Blocks: 1, TxPerBlock: 3, Accounts: 50})
	if err != nil {
		f.Fatal(err)
	}
	b := c.Block(c.First())
	block := polychain.Render(b, polychain.KindBlockFull)
	f.Add(byte(0), string(block))
	f.Add(byte(1), string(polychain.Render(b, polychain.KindReceipts)))
	f.Add(byte(2), string(polychain.Render(b, polychain.KindParity)))
	f.Add(byte(3), string(polychain.Render(b, polychain.KindCallTracer)))
	for _, seed := range []struct {
		kind byte
		raw  string
	}{
		{0, `{"number":"0x10","hash":"0x` + strings.Repeat("a", 64) + `","parentHash":"0x` + strings.Repeat("b", 64) + `","timestamp":"0x1","transactions":["0x01"]}`},
		{0, `{"Number":"0x10","HASH":"0x` + strings.Repeat("a", 64) + `","parentHash":"0x` + strings.Repeat("b", 64) + `","timestamp":"0x1","hash":"0x00","transactions":[]}`},
		{1, `[null,{"transactionHash":"0x01","logs":[{"topics":[null,"x"],"address":5}]}]`},
		{1, `{"transactionHash":"\u0030x01","logs":null,"status":"0x1"}`},
		{2, `[{"type":"call","action":{"callType":"call"},"result":[{"type":"x"}],"traceAddress":[0,1e2],"subtraces":1.0}]`},
		{2, `[{"txHash":"0x01","result":[{"action":{},"type":"suicide","transactionPosition":0}]},{"txHash":"0x02","error":"boom"}]`},
		{3, `[{"type":"CALL","calls":[{"type":"STATICCALL","calls":null}],"error":null,"result":{"type":"CREATE"}},{"txHash":"0x01","result":{"type":"CREATE","error":"x"},"error":7}]`},
		{3, `[{"type":null,"txHash":"0x01","result":{"calls":[{"type":"\u0043ALL","error":"\ud800"}]}}]`},
		{2, `[{"type":"call","action":{"callType":"call","input":"0X12","from":"0x01"},"result":{"output":"0x123"},"transactionPosition":0},` +
			`{"type":"create","action":{"init":" 0x12","value":"0x1"},"result":{"code":"0x1g","address":null},"transactionPosition":0},` +
			`{"type":"call","action":{"input":"0x\u0031\u0032"},"result":{"output":12},"transactionPosition":0},` +
			`{"type":"call","action":{"input":"0x"},"result":{"output":""},"transactionPosition":0}]`},
		// Addresses and quantities in and out of the plain form that the
		// scanner decodes as it reads (addrField, quantField).
		{2, `[{"type":"call","action":{"callType":"call","from":"0x` + strings.Repeat("a", 40) + `","to":"0X` + strings.Repeat("B", 40) + `","gas":"0x00000000000000001","value":"0x"},"result":{"gasUsed":"0x0","address":"0x` + strings.Repeat("1", 39) + `"},"transactionPosition":0},` +
			`{"type":"suicide","action":{"address":"0x` + strings.Repeat("c", 41) + `","refundAddress":" 0x` + strings.Repeat("d", 40) + `","balance":"0xffffffffffffffffff"},"result":null,"transactionPosition":0},` +
			`{"type":"call","action":{"from":"0x` + strings.Repeat("e", 39) + `\u0030","to":"0x` + strings.Repeat("f", 39) + `g","gas":"0xffffffffffffffff","value":12},"result":{"gasUsed":"0x1\"","output":"0x"},"transactionPosition":0},` +
			`{"type":"create","action":{"from":null,"gas":"0x` + strings.Repeat("0", 16) + `1","value":"0x0"},"result":{"gasUsed":"0x10 ","address":"0x"},"transactionPosition":0}]`},
		{1, `[{"transactionHash":"0x01","from":"0x` + strings.Repeat("a", 40) + `","to":null,"gasUsed":"0x5208","cumulativeGasUsed":"0x` + strings.Repeat("f", 17) + `","logs":[` +
			`{"address":"0x` + strings.Repeat("b", 40) + `","topics":["0x` + strings.Repeat("c", 64) + `","0x` + strings.Repeat("d", 63) + `","0X` + strings.Repeat("e", 64) + `"],"data":"0x"},` +
			`{"address":"0x` + strings.Repeat("b", 39) + `\"","topics":["0x` + strings.Repeat("c", 63) + `g",null],"data":"0x"}]}]`},
		{0, `{"number":"0x10","hash":"0x` + strings.Repeat("a", 64) + `","parentHash":"0x` + strings.Repeat("b", 64) + `","timestamp":"0x1","transactions":[{"hash":"0x01","from":"0x` + strings.Repeat("1", 40) + `","to":"0x","value":"0x0","gas":"0x"},{"hash":"0x02","from":"0x` + strings.Repeat("1", 41) + `","to":"","value":"0x` + strings.Repeat("9", 20) + `","gas":7}]}`},
		{3, `[{"type":"CALL","from":"0x` + strings.Repeat("a", 40) + `","to":"0x` + strings.Repeat("b", 40) + `","value":"0x0","gas":"0x5208","gasUsed":"0x0","calls":[{"type":"SELFDESTRUCT","to":"0x` + strings.Repeat("c", 40) + `","value":"0x1"},{"type":"SELFDESTRUCT","from":null,"gas":"0x1 "}]}]`},
		{1, `[{"transactionHash":"0x01","logs":[{"address":"0x01","topics":[],"data":"0xabc"},{"address":"0x01","topics":[],"data":null},{"address":"0x01","topics":[],"data":"0x\"00"}]}]`},
		{0, `{"number":"0x10","hash":"0x` + strings.Repeat("a", 64) + `","parentHash":"0x` + strings.Repeat("b", 64) + `","timestamp":"0x1","transactions":[{"hash":"0x01","input":"0x0","data":"0x12"},{"hash":"0x02","input":null,"data":"0x12"}]}`},
	} {
		f.Add(seed.kind, seed.raw)
	}
	f.Fuzz(func(t *testing.T, kind byte, raw string) {
		var fast, slow string
		switch kind % 4 {
		case 0:
			fast = decodeAll(chainquery.Polygon, []byte(raw), nil, nil, 0, true)
			slow = decodeAll(chainquery.Polygon, []byte(raw), nil, nil, 0, false)
		case 1:
			fast = decodeAll(chainquery.Polygon, block, []byte(raw), nil, 0, true)
			slow = decodeAll(chainquery.Polygon, block, []byte(raw), nil, 0, false)
		default:
			fast = decodeAll(chainquery.Polygon, block, nil, []byte(raw), int(kind%4), true)
			slow = decodeAll(chainquery.Polygon, block, nil, []byte(raw), int(kind%4), false)
		}
		if fast != slow {
			t.Fatalf("fast and encoding/json differ:\n%s", firstDiff(fast, slow))
		}
	})
}

// FuzzPlainRun holds plainRun's word-at-a-time scan to a byte-by-byte one.
func FuzzPlainRun(f *testing.F) {
	for _, s := range []string{"", "0123456789abcdef0123", "0123456789abcdef\"", "abc\\def", "abcdefgh\x1fxyz", "\x7f\x80\xff\x20\x21\x5b\x5d", "aaaaaaaaaaaaaaa\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := 0
		for want < len(s) && plainByte[s[want]] {
			want++
		}
		if got := plainRun([]byte(s)); got != want {
			t.Fatalf("plainRun(%q) = %d, want %d", s, got, want)
		}
	})
}

// TestHexFieldDecodedAsRead: the scanner decodes a plain "0x" data field as
// it reads it, and leaves every other form as text for the decoders' rules
// (FuzzFastDecoders holds the results of both ways equal).
func TestHexFieldDecodedAsRead(t *testing.T) {
	for raw, want := range map[string]string{
		`"0x"`:             "",
		`"0x00ff"`:         "00ff",
		`"0xABcd"`:         "abcd",
		`"0X12"`:           "text",
		`"0x123"`:          "text",
		`" 0x12"`:          "text",
		`"0x1g"`:           "text",
		`"0x\u0031\u0032"`: "text",
		`12`:               "text",
		`null`:             "text",
	} {
		s := newScanner([]byte(`{"input":`+raw+`}`), nil)
		var f hexField
		var seen uint32
		s.open('{')
		first := true
		s.more('}', &first)
		s.key()
		s.hex(&f, &seen, 0)
		s.more('}', &first)
		s.end()
		got := "text"
		if f.ok {
			got = hex.EncodeToString(f.decoded)
		}
		if s.bad || got != want || string(f.raw) != raw {
			t.Errorf("%s: decoded %s, text %s (scanner gave up: %v); want %s", raw, got, f.raw, s.bad, want)
		}
	}
}

// TestKeyWords: key, eight bytes at a time, reads every key as keySlow, a
// byte at a time, does: the same key, cursor and verdict, whatever byte
// ends it and wherever, near the answer's end or not.
func TestKeyWords(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	alphabet := []byte("aZAz_09 \"\\:\x1f\x7f\x80\xffMq")
	for range 20000 {
		k := make([]byte, r.Intn(34))
		for i := range k {
			if r.Intn(8) == 0 {
				k[i] = alphabet[r.Intn(len(alphabet))]
			} else {
				k[i] = byte('A' + r.Intn(58))
			}
		}
		data := append(append([]byte{'"'}, k...), `":1`[r.Intn(2):]...)
		data = data[:r.Intn(len(data)+1)]
		if r.Intn(2) == 0 {
			data = append(data, "      , \"more\": 2}"...)
		}
		fast, slow := &scanner{data: data}, &scanner{data: data}
		got, want := fast.key(), slow.keySlow()
		if string(got) != string(want) || fast.i != slow.i || fast.bad != slow.bad {
			t.Fatalf("%q: key %q at %d (bad %v), byte at a time %q at %d (bad %v)", data, got, fast.i, fast.bad, want, slow.i, slow.bad)
		}
	}
}

// TestParityGivesUpLate: when the scanner gives up on a trace_block answer
// after it converted elements (here at a null element, the last), what
// it converted and noted is dropped, and encoding/json's reading of the
// whole answer decides: its error, and each note once.
func TestParityGivesUpLate(t *testing.T) {
	c, err := polychain.New(polychain.Config{Seed: 5, Blocks: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := c.Block(c.First())
	block := polychain.Render(b, polychain.KindBlockFull)
	receipts := polychain.Render(b, polychain.KindReceipts)
	parity := string(polychain.Render(b, polychain.KindParity))
	i := strings.Index(parity, `"gas":"0x`)
	if i < 0 || !strings.HasSuffix(parity, "]") {
		t.Fatalf("unexpected answer: %.200s", parity)
	}
	parity = parity[:i] + `"gas":"0xzz` + parity[i+len(`"gas":"0x`):len(parity)-1] + ",null]"
	fast := decodeAll(chainquery.Polygon, block, receipts, []byte(parity), 2, true)
	slow := decodeAll(chainquery.Polygon, block, receipts, []byte(parity), 2, false)
	if fast != slow {
		t.Fatalf("fast and encoding/json differ:\n%s", firstDiff(fast, slow))
	}
	if n := strings.Count(fast, "field gas left empty"); n != 1 || !strings.Contains(fast, "not a trace") {
		t.Fatalf("want one note and the null element's error, got %d notes: %.500s", n, fast)
	}
}
