package http_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
)

// sameAsMarshal fails unless got, appended after a prefix the encoder must
// leave alone, is byte for byte json.Marshal(ref).
func sameAsMarshal(t *testing.T, ref any, appendTo func([]byte) []byte) {
	t.Helper()
	want, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	prefix := []byte("prefix")
	got := appendTo(append([]byte(nil), prefix...))
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("the encoder changed the bytes before it: %q", got)
	}
	if got = got[len(prefix):]; !bytes.Equal(got, want) {
		t.Fatalf("hand encoder and json.Marshal differ\n got: %s\nwant: %s", got, want)
	}
}

// Values at the edges of what json.Marshal treats specially.
var (
	edgeStrings = []string{
		"", "execution reverted", `quote " backslash \ slash /`, "<script>&amp;</script>",
		"\x00\x01\b\f\n\r\t\x1f\x7f", "tab\tnewline\n", "\u2028\u2029", "é ü 漢字 🚀",
		"\xff\xfe invalid \xc3\x28 utf-8 \xed\xa0\x80 surrogate", "\xf4\x90\x80\x80", "trailing \xe2\x82",
	}
	edgeBigs = []*big.Int{
		nil, big.NewInt(0), big.NewInt(1), big.NewInt(-1), new(big.Int).SetUint64(math.MaxUint64),
		new(big.Int).Lsh(big.NewInt(1), 300), new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(3), 256)),
	}
	edgeTimes = []int64{0, 1740787200, -1, math.MaxInt32, 253402300799, 253402300800, -62135596800, -62135596801}
)

func edgeAddress(b byte) *chainquery.Address {
	var a chainquery.Address
	for i := range a {
		a[i] = b + byte(i)
	}
	return &a
}

func edgeHash(b byte) chainquery.Hash {
	var h chainquery.Hash
	for i := range h {
		h[i] = b ^ byte(i*7)
	}
	return h
}

func TestAppendersMatchMarshal(t *testing.T) {
	t.Run("OK/Strings", func(t *testing.T) {
		for _, s := range edgeStrings {
			sameAsMarshal(t, s, func(b []byte) []byte { return cqhttp.AppendJSONString(b, s) })
		}
	})

	t.Run("OK/TokenBalance", func(t *testing.T) {
		owner := "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
		for i, s := range edgeStrings {
			b := &cqhttp.TokenBalanceJSON{
				AsOfDatetime: "2025-06-01T12:00:00Z", TokenAddress: s, TokenAccount: owner,
				Balance:       json.RawMessage([]string{"0", "12.956933", "18446744073709551615", "0.000000000001"}[i%4]),
				BalanceSource: uint64(i) << 60, DatetimeLastUpdated: s, BlockSlotLastUpdated: math.MaxUint64 - uint64(i),
			}
			if i%2 == 0 {
				b.AccountOwner, b.TokenName, b.TokenSymbol = &owner, &s, &edgeStrings[len(edgeStrings)-1-i]
			}
			sameAsMarshal(t, b, func(dst []byte) []byte { return cqhttp.AppendTokenBalanceJSON(dst, b) })
		}
	})

	t.Run("OK/SOLBalance", func(t *testing.T) {
		for i, s := range edgeStrings {
			b := &cqhttp.SOLBalanceJSON{
				AsOfDatetime: "2025-06-01T12:00:00Z", Account: s,
				Balance:       json.RawMessage([]string{"0", "1.23456789", "9223372036.854775807", "0.000000001"}[i%4]),
				BalanceSource: uint64(i) << 59, DatetimeLastUpdated: s, BlockSlotLastUpdated: math.MaxUint64 - uint64(i),
			}
			sameAsMarshal(t, b, func(dst []byte) []byte { return cqhttp.AppendSOLBalanceJSON(dst, b) })
		}
	})

	t.Run("OK/Block", func(t *testing.T) {
		var txs []*chainquery.Transaction
		for i, v := range edgeBigs {
			txs = append(txs, &chainquery.Transaction{
				BlockNumber: math.MaxUint64, Timestamp: edgeTimes[i%len(edgeTimes)], Hash: edgeHash(byte(i)), Index: i - 1,
				From: *edgeAddress(byte(i)), Value: v, GasLimit: math.MaxUint64, GasPrice: v,
				EffectiveGasPrice: edgeBigs[(i+1)%len(edgeBigs)], MaxFeePerGas: edgeBigs[(i+2)%len(edgeBigs)],
				GasUsed: uint64(i), CumulativeGasUsed: math.MaxUint64 - uint64(i), Nonce: uint64(i) << 40,
				Input: bytes.Repeat([]byte{0xab, byte(i)}, i*100), Type: i % 3, Status: i%2 == 0,
			})
			if i%2 == 1 {
				txs[i].To = edgeAddress(0xf0)
				txs[i].MaxPriorityFeePerGas = big.NewInt(int64(i) * 1e9)
			} else {
				txs[i].ContractAddress = edgeAddress(0x10)
			}
		}
		blocks := map[string]*chainquery.Block{
			"zero":  {},
			"empty": {LogsBloom: []byte{}, ExtraData: []byte{}, HasExtraData: true, Transactions: []*chainquery.Transaction{}},
			"polygon": {
				Number: 65000000, Hash: edgeHash(1), ParentHash: edgeHash(2), Timestamp: 1740787200, Version: 3,
				LogsBloom: bytes.Repeat([]byte{0x5a}, 256), TransactionsRoot: edgeHash(3), StateRoot: edgeHash(4),
				ReceiptsRoot: edgeHash(5), Miner: *edgeAddress(6), ExtraData: []byte("extra"), HasExtraData: true,
				Size: 1 << 20, GasLimit: 30_000_000, GasUsed: 29_999_999, TransactionCount: len(txs),
				BaseFeePerGas: big.NewInt(30_000_000_000), Transactions: txs,
			},
			"edges": {
				Number: math.MaxUint64, Timestamp: math.MinInt64 / 4, Version: math.MinInt64, Size: math.MaxUint64,
				TransactionCount: math.MaxInt64, BaseFeePerGas: edgeBigs[6], Transactions: txs[:1],
			},
		}
		for name, b := range blocks {
			for _, full := range []bool{false, true} {
				t.Run(name, func(t *testing.T) {
					sameAsMarshal(t, newRefBlock(b, full), func(dst []byte) []byte { return cqhttp.AppendBlockJSON(dst, b, full) })
				})
			}
		}
	})

	t.Run("OK/Traces", func(t *testing.T) {
		var traces []*chainquery.Trace
		for i, s := range edgeStrings {
			tr := &chainquery.Trace{
				BlockNumber: uint64(i) << 60, Timestamp: edgeTimes[i%len(edgeTimes)], TransactionHash: edgeHash(byte(i)),
				TransactionIndex: -i, TransactionFrom: *edgeAddress(byte(i)), TransactionStatus: i%2 == 0,
				Type: s, CallType: edgeStrings[len(edgeStrings)-1-i], From: *edgeAddress(byte(i + 1)),
				Gas: uint64(i) * 1000, GasUsed: 4000, Value: edgeBigs[i%len(edgeBigs)], Subtraces: i,
				Input: bytes.Repeat([]byte{byte(i)}, i), Output: bytes.Repeat([]byte{0xee}, 3*i), Error: s, Version: i,
			}
			switch i % 3 {
			case 0: // nil: the top-level call
			case 1:
				tr.TraceAddress = []int{}
			case 2:
				tr.TraceAddress = []int{0, i, -1, math.MaxInt64, math.MinInt64}
				tr.To, tr.TransactionTo = edgeAddress(0xaa), edgeAddress(0xbb)
			}
			traces = append(traces, tr)
		}
		for name, list := range map[string][]*chainquery.Trace{"nil": nil, "empty": {}, "edges": traces} {
			t.Run(name, func(t *testing.T) {
				sameAsMarshal(t, newRefTraceList(7, 50, math.MaxInt64, list), func(dst []byte) []byte {
					return cqhttp.AppendTraceListJSON(dst, 7, 50, math.MaxInt64, list)
				})
			})
		}
	})

	t.Run("OK/Logs", func(t *testing.T) {
		var logs []*chainquery.Log
		for n := 0; n <= 5; n++ {
			l := &chainquery.Log{
				BlockNumber: uint64(n), Timestamp: edgeTimes[n], TransactionHash: edgeHash(9), TransactionIndex: n,
				TransactionFrom: *edgeAddress(3), LogIndex: n * 1000, Address: *edgeAddress(byte(n)),
				Data: bytes.Repeat([]byte{0x01, 0x23}, n*16),
			}
			if n%2 == 1 {
				l.TransactionTo = edgeAddress(4)
			}
			if n > 0 { // n == 0 keeps Topics nil: still [] in the answer
				l.Topics = make([]chainquery.Hash, n) // 5 is more than the API has
				for j := range l.Topics {
					l.Topics[j] = edgeHash(byte(10*n + j))
				}
			}
			logs = append(logs, l)
		}
		for name, list := range map[string][]*chainquery.Log{"nil": nil, "empty": {}, "edges": logs} {
			t.Run(name, func(t *testing.T) {
				sameAsMarshal(t, newRefLogList(edgeHash(9), 0, 1, 0, list), func(dst []byte) []byte {
					return cqhttp.AppendLogListJSON(dst, edgeHash(9), 0, 1, 0, list)
				})
			})
		}
	})

	t.Run("OK/Receipts", func(t *testing.T) {
		var receipts []*chainquery.Receipt
		for i, v := range edgeBigs {
			r := &chainquery.Receipt{
				BlockNumber: math.MaxUint64 - uint64(i), Timestamp: edgeTimes[i], TransactionHash: edgeHash(byte(i)),
				TransactionIndex: i, CumulativeGasUsed: uint64(i) * 21000, GasUsed: 21000, Status: i%2 == 1, EffectiveGasPrice: v,
			}
			if i%2 == 0 {
				r.ContractAddress = edgeAddress(byte(i))
			}
			receipts = append(receipts, r)
		}
		for name, list := range map[string][]*chainquery.Receipt{"nil": nil, "empty": {}, "edges": receipts} {
			t.Run(name, func(t *testing.T) {
				sameAsMarshal(t, newRefReceiptList(65000000, -1, math.MinInt64, 3, list), func(dst []byte) []byte {
					return cqhttp.AppendReceiptListJSON(dst, 65000000, -1, math.MinInt64, 3, list)
				})
			})
		}
	})
}

// fuzzGen draws values from a fuzzer's bytes; past the end every draw is
// zero, so any input gives some value.
type fuzzGen struct{ data []byte }

func (g *fuzzGen) next(n int) []byte {
	n = min(n, len(g.data))
	b := g.data[:n]
	g.data = g.data[n:]
	return b
}

func (g *fuzzGen) byte() byte {
	if b := g.next(1); len(b) == 1 {
		return b[0]
	}
	return 0
}

func (g *fuzzGen) u64() uint64 {
	var buf [8]byte
	// A short draw now and then gives small numbers as well as huge ones.
	copy(buf[:], g.next(int(g.byte()%9)))
	return binary.LittleEndian.Uint64(buf[:])
}

func (g *fuzzGen) i64() int64 { return int64(g.u64()) }
func (g *fuzzGen) int() int   { return int(g.u64()) }
func (g *fuzzGen) bool() bool { return g.byte()&1 == 1 }

func (g *fuzzGen) bytes() []byte {
	n := int(g.byte())
	if n == 0xff {
		return nil
	}
	return append([]byte{}, g.next(n)...)
}

func (g *fuzzGen) string() string { return string(g.bytes()) }

func (g *fuzzGen) hash() (h chainquery.Hash) {
	copy(h[:], g.next(int(g.byte()%33)))
	return h
}

func (g *fuzzGen) address() (a chainquery.Address) {
	copy(a[:], g.next(int(g.byte()%21)))
	return a
}

func (g *fuzzGen) addressOrNil() *chainquery.Address {
	if !g.bool() {
		return nil
	}
	a := g.address()
	return &a
}

// timestamp is any int64 now and then, else a time of the last centuries:
// FormatDatetime must agree with the encoder on both.
func (g *fuzzGen) timestamp() int64 {
	if g.byte()%8 == 0 {
		return g.i64()
	}
	return int64(g.u64()%(1<<34)) - 1<<32
}

func (g *fuzzGen) bigOrNil() *big.Int {
	switch g.byte() % 4 {
	case 0:
		return nil
	case 1:
		return new(big.Int).SetUint64(g.u64())
	default:
		v := new(big.Int).SetBytes(g.bytes())
		if g.bool() {
			v.Neg(v)
		}
		return v
	}
}

// count draws a list length, small so that lists of many elements are
// reached.
func (g *fuzzGen) count() int { return int(g.byte() % 6) }

func FuzzBlockJSON(f *testing.F) {
	f.Add([]byte{}, true)
	f.Add(bytes.Repeat([]byte{0xff}, 64), false)
	f.Add(bytes.Repeat([]byte{0x03, 0x81, 0x7f}, 200), true)
	f.Add([]byte("\x08\x01\x02\x03\x04\x05\x06\x07\x08 polygon-shaped block with <&> and \xff\xfe"), true)
	f.Fuzz(func(t *testing.T, data []byte, full bool) {
		g := &fuzzGen{data}
		b := &chainquery.Block{
			Number: g.u64(), Hash: g.hash(), ParentHash: g.hash(), Timestamp: g.timestamp(), Version: g.int(),
			LogsBloom: g.bytes(), TransactionsRoot: g.hash(), StateRoot: g.hash(), ReceiptsRoot: g.hash(),
			Miner: g.address(), ExtraData: g.bytes(), HasExtraData: g.bool(), Size: g.u64(), GasLimit: g.u64(),
			GasUsed: g.u64(), TransactionCount: g.int(), BaseFeePerGas: g.bigOrNil(),
		}
		if n := g.count(); n > 0 || g.bool() {
			b.Transactions = make([]*chainquery.Transaction, n)
			for i := range b.Transactions {
				b.Transactions[i] = &chainquery.Transaction{
					BlockNumber: g.u64(), Timestamp: g.timestamp(), Hash: g.hash(), Index: g.int(), From: g.address(),
					To: g.addressOrNil(), Value: g.bigOrNil(), GasLimit: g.u64(), GasPrice: g.bigOrNil(),
					EffectiveGasPrice: g.bigOrNil(), MaxFeePerGas: g.bigOrNil(), MaxPriorityFeePerGas: g.bigOrNil(),
					GasUsed: g.u64(), CumulativeGasUsed: g.u64(), Nonce: g.u64(), Input: g.bytes(), Type: g.int(),
					ContractAddress: g.addressOrNil(), Status: g.bool(),
				}
			}
		}
		sameAsMarshal(t, newRefBlock(b, full), func(dst []byte) []byte { return cqhttp.AppendBlockJSON(dst, b, full) })
	})
}

func FuzzTraceJSON(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add(bytes.Repeat([]byte{0xff}, 64), "execution reverted")
	f.Add(bytes.Repeat([]byte{0x05, 0x81, 0x7f, 0x00}, 200), "out of gas <&>")
	f.Add([]byte("\x02\x03call\x0cdelegatecall"), "\xff\xfe\u2028\x00\"\\")
	f.Fuzz(func(t *testing.T, data []byte, errText string) {
		g := &fuzzGen{data}
		var traces []*chainquery.Trace
		if n := g.count(); n > 0 || g.bool() {
			traces = make([]*chainquery.Trace, n)
		}
		for i := range traces {
			tr := &chainquery.Trace{
				BlockNumber: g.u64(), Timestamp: g.timestamp(), TransactionHash: g.hash(), TransactionIndex: g.int(),
				TransactionFrom: g.address(), TransactionTo: g.addressOrNil(), TransactionStatus: g.bool(),
				Type: g.string(), CallType: g.string(), From: g.address(), To: g.addressOrNil(), Gas: g.u64(),
				GasUsed: g.u64(), Value: g.bigOrNil(), Subtraces: g.int(), Input: g.bytes(), Output: g.bytes(),
				Version: g.int(),
			}
			if g.bool() {
				tr.Error = errText
			}
			if n := g.count(); n > 0 || g.bool() {
				tr.TraceAddress = make([]int, n)
				for j := range tr.TraceAddress {
					tr.TraceAddress[j] = g.int()
				}
			}
			traces[i] = tr
		}
		offset, limit, count := g.int(), g.int(), g.int()
		sameAsMarshal(t, newRefTraceList(offset, limit, count, traces), func(dst []byte) []byte {
			return cqhttp.AppendTraceListJSON(dst, offset, limit, count, traces)
		})
	})
}

func FuzzLogJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(bytes.Repeat([]byte{0x04, 0x20, 0x7f, 0x01}, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &fuzzGen{data}
		var logs []*chainquery.Log
		if n := g.count(); n > 0 || g.bool() {
			logs = make([]*chainquery.Log, n)
		}
		for i := range logs {
			l := &chainquery.Log{
				BlockNumber: g.u64(), Timestamp: g.timestamp(), TransactionHash: g.hash(), TransactionIndex: g.int(),
				TransactionFrom: g.address(), TransactionTo: g.addressOrNil(), LogIndex: g.int(), Address: g.address(),
				Data: g.bytes(),
			}
			if n := g.count(); n > 0 || g.bool() {
				l.Topics = make([]chainquery.Hash, n)
				for j := range l.Topics {
					l.Topics[j] = g.hash()
				}
			}
			logs[i] = l
		}
		hash, offset, limit, count := g.hash(), g.int(), g.int(), g.int()
		sameAsMarshal(t, newRefLogList(hash, offset, limit, count, logs), func(dst []byte) []byte {
			return cqhttp.AppendLogListJSON(dst, hash, offset, limit, count, logs)
		})
	})
}

func FuzzReceiptJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(bytes.Repeat([]byte{0x05, 0x02, 0x7f, 0x01}, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &fuzzGen{data}
		var receipts []*chainquery.Receipt
		if n := g.count(); n > 0 || g.bool() {
			receipts = make([]*chainquery.Receipt, n)
		}
		for i := range receipts {
			receipts[i] = &chainquery.Receipt{
				BlockNumber: g.u64(), Timestamp: g.timestamp(), TransactionHash: g.hash(), TransactionIndex: g.int(),
				CumulativeGasUsed: g.u64(), GasUsed: g.u64(), ContractAddress: g.addressOrNil(), Status: g.bool(),
				EffectiveGasPrice: g.bigOrNil(),
			}
		}
		number, offset, limit, count := g.u64(), g.int(), g.int(), g.int()
		sameAsMarshal(t, newRefReceiptList(number, offset, limit, count, receipts), func(dst []byte) []byte {
			return cqhttp.AppendReceiptListJSON(dst, number, offset, limit, count, receipts)
		})
	})
}

func FuzzJSONString(f *testing.F) {
	for _, s := range edgeStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameAsMarshal(t, s, func(b []byte) []byte { return cqhttp.AppendJSONString(b, s) })
	})
}

// BenchmarkEncode compares the hand encoders with what they replaced
// (the reflective structs and json.Marshal) on answers of Polygon's shape:
// a block of 100 transactions with full transactions (~128 KB), and pages of
// 50 traces (~45 KB), 50 receipts and 20 logs.
func BenchmarkEncode(b *testing.B) {
	big9 := func(i int) *big.Int { return big.NewInt(int64(i)*1_000_000_007 + 30_000_000_000) }
	blk := &chainquery.Block{
		Number: 65000123, Hash: edgeHash(1), ParentHash: edgeHash(2), Timestamp: 1740787446, LogsBloom: bytes.Repeat([]byte{0x5a}, 256),
		TransactionsRoot: edgeHash(3), StateRoot: edgeHash(4), ReceiptsRoot: edgeHash(5), Miner: *edgeAddress(6),
		ExtraData: bytes.Repeat([]byte{0xd7}, 97), HasExtraData: true, Size: 131072, GasLimit: 30_000_000, GasUsed: 29_000_000,
		TransactionCount: 100, BaseFeePerGas: big9(0),
	}
	var traces []*chainquery.Trace
	var receipts []*chainquery.Receipt
	var logs []*chainquery.Log
	for i := range 100 {
		tx := &chainquery.Transaction{
			BlockNumber: blk.Number, Timestamp: blk.Timestamp, Hash: edgeHash(byte(i)), Index: i, From: *edgeAddress(byte(i)),
			To: edgeAddress(byte(i + 1)), Value: big9(i), GasLimit: 500_000, GasPrice: big9(i), EffectiveGasPrice: big9(i),
			MaxFeePerGas: big9(i + 1), MaxPriorityFeePerGas: big9(i + 2), GasUsed: 123_456, CumulativeGasUsed: uint64(i) * 123_456,
			Nonce: uint64(i) * 77, Input: bytes.Repeat([]byte{0xa9, byte(i)}, 130), Type: 2, Status: true,
		}
		blk.Transactions = append(blk.Transactions, tx)
		if i < 50 {
			traces = append(traces, &chainquery.Trace{
				BlockNumber: blk.Number, Timestamp: blk.Timestamp, TransactionHash: tx.Hash, TransactionIndex: i,
				TraceAddress: []int{0, i % 3}, TransactionFrom: tx.From, TransactionTo: tx.To, TransactionStatus: i%20 != 0,
				Type: chainquery.TraceCall, CallType: chainquery.CallTypeCall, From: tx.From, To: tx.To, Gas: 400_000, GasUsed: 30_000,
				Value: big9(i), Subtraces: 2, Input: bytes.Repeat([]byte{0x12, byte(i)}, 110), Output: bytes.Repeat([]byte{0x34}, 96),
			})
			if i%20 == 0 {
				traces[i].Error = "execution reverted"
			}
			receipts = append(receipts, &chainquery.Receipt{
				BlockNumber: blk.Number, Timestamp: blk.Timestamp, TransactionHash: tx.Hash, TransactionIndex: i,
				CumulativeGasUsed: tx.CumulativeGasUsed, GasUsed: tx.GasUsed, Status: true, EffectiveGasPrice: tx.EffectiveGasPrice,
			})
		}
		if i < 20 {
			logs = append(logs, &chainquery.Log{
				BlockNumber: blk.Number, Timestamp: blk.Timestamp, TransactionHash: tx.Hash, TransactionIndex: i,
				TransactionFrom: tx.From, TransactionTo: tx.To, LogIndex: i, Address: *edgeAddress(9), Data: bytes.Repeat([]byte{0x01}, 64),
				Topics: []chainquery.Hash{edgeHash(1), edgeHash(2), edgeHash(3)},
			})
		}
	}
	for _, c := range []struct {
		name    string
		marshal func() any
		append  func([]byte) []byte
	}{
		{"GetBlockFull", func() any { return newRefBlock(blk, true) }, func(d []byte) []byte { return cqhttp.AppendBlockJSON(d, blk, true) }},
		{"FilterTraces50", func() any { return newRefTraceList(0, 50, 80746, traces) }, func(d []byte) []byte { return cqhttp.AppendTraceListJSON(d, 0, 50, 80746, traces) }},
		{"BlockReceipts50", func() any { return newRefReceiptList(blk.Number, 0, 50, 100, receipts) }, func(d []byte) []byte {
			return cqhttp.AppendReceiptListJSON(d, blk.Number, 0, 50, 100, receipts)
		}},
		{"TransactionLogs20", func() any { return newRefLogList(edgeHash(7), 0, 20, 20, logs) }, func(d []byte) []byte {
			return cqhttp.AppendLogListJSON(d, edgeHash(7), 0, 20, 20, logs)
		}},
	} {
		b.Run(c.name+"/Marshal", func(b *testing.B) {
			for b.Loop() {
				out, err := json.Marshal(c.marshal())
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(out)))
			}
		})
		b.Run(c.name+"/Append", func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				buf = c.append(buf[:0])
				b.SetBytes(int64(len(buf)))
			}
		})
	}
}
