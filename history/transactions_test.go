package history_test

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/polychain"
)

func sameBig(a, b *big.Int) bool { return (a == nil) == (b == nil) && (a == nil || a.Cmp(b) == 0) }

func sameAddr(a, b *chainquery.Address) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func txRoundTrip(t *testing.T, block uint64, txs []*chainquery.Transaction) []byte {
	t.Helper()
	return segmentRoundTrip(t, block, txs, history.AppendTransactions, history.DecodeTransactions,
		func(g, w *chainquery.Transaction) string {
			if g.BlockNumber != block || g.Hash != w.Hash || g.Index != w.Index || g.From != w.From || !sameAddr(g.To, w.To) ||
				!sameBig(g.Value, w.Value) || g.GasLimit != w.GasLimit || !sameBig(g.GasPrice, w.GasPrice) ||
				!sameBig(g.EffectiveGasPrice, w.EffectiveGasPrice) || !sameBig(g.MaxFeePerGas, w.MaxFeePerGas) ||
				!sameBig(g.MaxPriorityFeePerGas, w.MaxPriorityFeePerGas) || g.GasUsed != w.GasUsed ||
				g.CumulativeGasUsed != w.CumulativeGasUsed || g.Nonce != w.Nonce || g.Type != w.Type ||
				!sameAddr(g.ContractAddress, w.ContractAddress) || g.Status != w.Status || g.LogCount != w.LogCount ||
				!bytes.Equal(g.Input, w.Input) {
				return "a field"
			}
			return ""
		})
}

// TestBlocks_PolygonShaped encodes whole Polygon-shaped blocks (their
// transactions, traces, logs and the posting lists of their traces' senders
// and recipients) and reports what a block takes: the measure of the
// history store's disk per block before any store keeps it (the target, and
// what the row store takes, are in docs/benchmarks.md, "Disk per block").
// Posting lists of one block each are their worst case (an address's key is
// paid per block; that section's table shows what the keys take at each
// span); lists sharded by a range of blocks pay it once a range, which is
// what a store will keep. The bound below is a
// regression guard on this worst case, not the target.
func TestBlocks_PolygonShaped(t *testing.T) {
	for _, d := range polygonBlocks(t, polychain.Config{Seed: 1, Blocks: 3}, polychain.KindParity) {
		n := d.Block.Number
		txs := txRoundTrip(t, n, d.Transactions)
		traces, _ := history.AppendTraces(nil, d.Traces)
		logs, _ := history.AppendLogs(nil, d.Logs)
		// One posting list per address and direction, as a block alone
		// would have them (a range's lists are longer and cheaper an entry).
		lists := map[[21]byte][]history.Posting{}
		pos := map[int]uint32{}
		for _, tr := range d.Traces {
			p := history.Posting{Block: n, Tx: uint32(tr.TransactionIndex), Pos: pos[tr.TransactionIndex]}
			pos[tr.TransactionIndex]++
			var from, to [21]byte
			copy(from[:], tr.From[:])
			lists[from] = append(lists[from], p)
			if tr.To != nil {
				to[20] = 1
				copy(to[:], tr.To[:])
				lists[to] = append(lists[to], p)
			}
		}
		postings := 0
		for _, ps := range lists {
			b, err := history.AppendPostings(nil, ps)
			if err != nil {
				t.Fatal(err)
			}
			postings += len(b) + 21 // the key: address and direction
		}
		total := len(txs) + len(traces) + len(logs) + postings
		t.Logf("block %d: transactions %.1f KB, traces %.1f KB, logs %.1f KB, posting lists %.1f KB (%d lists): %.1f KB",
			n, kb(len(txs)), kb(len(traces)), kb(len(logs)), kb(postings), len(lists), kb(total))
		if total > 160_000 {
			t.Errorf("block %d takes %.1f KB encoded, over 160 KB", n, kb(total))
		}
	}
}

func kb(n int) float64 { return float64(n) / 1000 }

// TestTransactions_Edges and rejections.
func TestTransactions_Edges(t *testing.T) {
	txRoundTrip(t, 1, nil)
	a, b := chainquery.Address{1}, chainquery.Address{2}
	huge, _ := new(big.Int).SetString("1000000000000000000000000000000", 10)
	txRoundTrip(t, 1, []*chainquery.Transaction{
		{Hash: chainquery.Hash{1}, Index: 0, From: a, Value: big.NewInt(0), GasPrice: big.NewInt(5), CumulativeGasUsed: 100, Type: 0x7e, Status: true},
		{Hash: chainquery.Hash{2}, Index: 4, From: b, To: &a, Value: huge, MaxFeePerGas: big.NewInt(9), MaxPriorityFeePerGas: big.NewInt(0), CumulativeGasUsed: 50, ContractAddress: &b, LogCount: 3, Input: []byte{1, 2, 3}},
	})
	for name, txs := range map[string][]*chainquery.Transaction{
		"order": {{Index: 1}, {Index: 1}},
		"value": {{Value: big.NewInt(-1)}},
		"price": {{GasPrice: big.NewInt(-1)}},
		"type":  {{Type: 256}},
	} {
		if _, err := history.AppendTransactions(nil, txs); !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
	logs, _ := history.AppendLogs(nil, nil)
	good, _ := history.AppendTransactions(nil, []*chainquery.Transaction{{From: a}})
	for name, b := range map[string][]byte{"a log segment": logs, "truncated": good[:len(good)-3]} {
		if _, err := history.DecodeTransactions(b, 1); !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzDecodeTransactions: any bytes decode to transactions or to
// ErrCorrupt, never a panic; what decodes encodes again the same.
func FuzzDecodeTransactions(f *testing.F) {
	d := polygonBlocks(f, polychain.Config{Seed: 3, Blocks: 1, TxPerBlock: 5}, polychain.KindParity)[0]
	seg, _ := history.AppendTransactions(nil, d.Transactions)
	f.Add(seg)
	f.Fuzz(func(t *testing.T, b []byte) {
		txs, err := history.DecodeTransactions(b, 1)
		if err != nil {
			if !errors.Is(err, history.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		txRoundTrip(t, 1, txs)
	})
}
