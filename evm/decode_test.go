package evm_test

import (
	"encoding/json"
	"math/big"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
)

// TestDecodeBlockFixtures decodes every block file and checks the header
// and the transaction count and types against the file itself.
func TestDecodeBlockFixtures(t *testing.T) {
	for _, name := range tdGlob(t, "*/eth_getBlockBy*.json") {
		t.Run(filepath.Base(name), func(t *testing.T) {
			raw := tdResult(t, name)
			var file struct {
				Number        string            `json:"number"`
				Hash          string            `json:"hash"`
				LogsBloom     *string           `json:"logsBloom"`
				ExtraData     *string           `json:"extraData"`
				BaseFeePerGas *string           `json:"baseFeePerGas"`
				Transactions  []json.RawMessage `json:"transactions"`
			}
			if err := json.Unmarshal(raw, &file); err != nil {
				t.Fatal(err)
			}
			hashesOnly := len(file.Transactions) > 0 && file.Transactions[0][0] == '"'
			d, err := evm.DecodeBlock(tdChain(name), raw)
			if hashesOnly {
				// Answers to full=false (documentation examples) list hashes
				// only; a block cannot be completed from them, so DecodeBlock
				// refuses them rather than storing a block without transactions.
				if err == nil || !strings.Contains(err.Error(), "hashes only") {
					t.Fatalf("hash-only block: err = %v, want the hashes-only error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b := d.Block
			if got := chainquery.Hex(b.Hash[:]); got != strings.ToLower(file.Hash) {
				t.Errorf("hash %s, want %s", got, file.Hash)
			}
			if got := "0x" + strconv.FormatUint(b.Number, 16); got != strings.ToLower(file.Number) {
				t.Errorf("number %s, want %s", got, file.Number)
			}
			if (b.LogsBloom != nil) != (file.LogsBloom != nil) || b.HasExtraData != (file.ExtraData != nil) ||
				(b.BaseFeePerGas != nil) != (file.BaseFeePerGas != nil) {
				t.Errorf("optional header fields: bloom %v extra %v base fee %v, file %v %v %v",
					b.LogsBloom != nil, b.HasExtraData, b.BaseFeePerGas != nil,
					file.LogsBloom != nil, file.ExtraData != nil, file.BaseFeePerGas != nil)
			}
			if b.TransactionCount != len(file.Transactions) || len(d.Transactions) != len(file.Transactions) {
				t.Fatalf("%d transactions (count %d), file has %d", len(d.Transactions), b.TransactionCount, len(file.Transactions))
			}
			for i, rawTx := range file.Transactions {
				var ft struct {
					Hash string  `json:"hash"`
					Type *string `json:"type"`
				}
				if err := json.Unmarshal(rawTx, &ft); err != nil {
					t.Fatal(err)
				}
				want := uint64(0)
				if ft.Type != nil {
					want, _ = strconv.ParseUint(strings.TrimPrefix(*ft.Type, "0x"), 16, 64)
				}
				tx := d.Transactions[i]
				if tx.Type != int(want) || tx.Hash.Hex() != strings.ToLower(ft.Hash) || tx.Index != i || tx.BlockNumber != b.Number {
					t.Errorf("tx %d: type %d hash %s index %d block %d; file type %d hash %s", i, tx.Type, tx.Hash, tx.Index, tx.BlockNumber, want, ft.Hash)
				}
				if tx.Value == nil || tx.EffectiveGasPrice != nil {
					t.Errorf("tx %d: value %v effective gas price %v before receipts", i, tx.Value, tx.EffectiveGasPrice)
				}
			}
		})
	}
}

// TestDecodeReceiptFixtures applies every receipt file to a block made from
// the receipts themselves, so that receipts whose block is not in the data
// (documentation examples, single receipts) are decoded too.
func TestDecodeReceiptFixtures(t *testing.T) {
	var names []string
	for _, p := range []string{"*/eth_getBlockReceipts__*.json", "*/receipts__*.json", "*/eth_getTransactionReceipt__*.json"} {
		names = append(names, tdGlob(t, p)...)
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			receipts := tdReceipts(t, name)
			type fileLog struct {
				Topics []string `json:"topics"`
			}
			var file []struct {
				TransactionHash  string    `json:"transactionHash"`
				TransactionIndex string    `json:"transactionIndex"`
				BlockHash        string    `json:"blockHash"`
				BlockNumber      string    `json:"blockNumber"`
				Logs             []fileLog `json:"logs"`
			}
			all, _ := json.Marshal(receipts)
			if err := json.Unmarshal(all, &file); err != nil {
				t.Fatal(err)
			}
			num, _ := strconv.ParseUint(strings.TrimPrefix(file[0].BlockNumber, "0x"), 16, 64)
			d := &chainquery.BlockData{Block: &chainquery.Block{Chain: tdChain(name), Number: num, Hash: tdHash(t, file[0].BlockHash)}}
			for _, r := range file {
				idx, _ := strconv.ParseUint(strings.TrimPrefix(r.TransactionIndex, "0x"), 16, 64)
				d.Transactions = append(d.Transactions, &chainquery.Transaction{Hash: tdHash(t, r.TransactionHash), Index: int(idx), Value: new(big.Int)})
			}
			d.Block.TransactionCount = len(d.Transactions)
			if err := evm.ApplyReceipts(d, receipts); err != nil {
				t.Fatal(err)
			}
			wantLogs := 0
			for i, r := range file {
				tx := d.Transactions[i]
				if tx.EffectiveGasPrice == nil || tx.LogCount != len(r.Logs) {
					t.Errorf("tx %s: effective gas price %v, %d logs, file %d", tx.Hash, tx.EffectiveGasPrice, tx.LogCount, len(r.Logs))
				}
				wantLogs += len(r.Logs)
			}
			if len(d.Logs) != wantLogs {
				t.Fatalf("%d logs, file has %d", len(d.Logs), wantLogs)
			}
			k := 0
			for _, r := range file {
				for _, fl := range r.Logs {
					l := d.Logs[k]
					k++
					if len(l.Topics) != len(fl.Topics) {
						t.Errorf("log %d: %d topics, file %d", l.LogIndex, len(l.Topics), len(fl.Topics))
						continue
					}
					for j := range fl.Topics {
						if l.Topics[j].Hex() != strings.ToLower(fl.Topics[j]) {
							t.Errorf("log %d topic %d: %s, file %s", l.LogIndex, j, l.Topics[j], fl.Topics[j])
						}
					}
				}
			}
		})
	}
}

// tdSet is a cross-check set of SOURCES.md: one block as full block,
// receipts and (some of them) traces.
type tdSet struct {
	name       string
	block      string
	receipts   []string
	parity     string // trace_block result
	callTracer []string
}

var tdSets = []tdSet{
	{name: "ethereum 1000000", block: "ethereum/eth_getBlockByNumber_full__1000000__squid.json",
		receipts:   []string{"ethereum/eth_getBlockReceipts__1000000__squid.json"},
		parity:     "ethereum/trace_block__1000000__ethereum-etl.json",
		callTracer: []string{"ethereum/debug_traceBlockByNumber_callTracer__1000000__ethereum-etl.json"}},
	{name: "ethereum 1755635", block: "ethereum/eth_getBlockByNumber_full__1755635__ethereum-etl.json",
		receipts: []string{"ethereum/eth_getTransactionReceipt__0x2e3dcd05__ethereum-etl.json", "ethereum/eth_getTransactionReceipt__0x9a5437ec__ethereum-etl.json"},
		parity:   "ethereum/trace_block__1755635__dexguru-etl.json"},
	{name: "ethereum 483920", block: "ethereum/eth_getBlockByNumber_full__483920__ethereum-etl.json",
		receipts: []string{
			"ethereum/eth_getTransactionReceipt__0x04cbcb236043d8fb7839e07bbc7f5eed692fb2ca55d897f1101eac3e3ad4fab8__ethereum-etl.json",
			"ethereum/eth_getTransactionReceipt__0x05287a561f218418892ab053adfb3d919860988b19458c570c5c30f51c146f02__ethereum-etl.json",
			"ethereum/eth_getTransactionReceipt__0x463d53f0ad57677a3b430a007c1c31d15d62c37fab5eee598551697c297c235c__ethereum-etl.json",
			"ethereum/eth_getTransactionReceipt__0xcea6f89720cc1d2f46cc7a935463ae0b99dd5fad9c91bb7357de5421511cee49__ethereum-etl.json",
		}},
	{name: "ethereum 17053184", block: "ethereum/eth_getBlockByHash_full__17053184__chainstorage.json",
		receipts:   []string{"ethereum/receipts__17053184__chainstorage.json"},
		callTracer: []string{"ethereum/debug_traceBlockByHash_callTracer__17053184__chainstorage.json"}},
	{name: "ethereum 18000000", block: "ethereum/eth_getBlockByNumber_full__18000000__erigon.json",
		receipts: []string{"ethereum/eth_getBlockReceipts__18000000__erigon.json"}},
	{name: "ethereum 4369999", block: "ethereum/eth_getBlockByNumber_full__4369999__squid.json",
		receipts: []string{"ethereum/eth_getBlockReceipts__4369999__squid.json"}},
	{name: "polygon 2233682", block: "polygon/eth_getBlockByNumber_full__2233682__polygon-etl.json",
		receipts: []string{
			"polygon/eth_getTransactionReceipt__0x3c3b7096f9a474d378eb065045f403e0d4b3effc37e43d9b52a5b7f00f0455de__polygon-etl.json",
			"polygon/eth_getTransactionReceipt__0x84904397d57791700b0fe5dfc8a94fdec1143b257d80a089718d9c568b41b63f__polygon-etl.json",
			"polygon/eth_getTransactionReceipt__0x9b1f198199c164322a0cf74554b2cf9f4454627788ffa770612f25bdec811f71__polygon-etl.json",
			"polygon/eth_getTransactionReceipt__0xbdf0c6164c3ec02ba22b9966c9dc38525cded727a0f2e3dc936462cdd8d9129c__polygon-etl.json",
			"polygon/eth_getTransactionReceipt__0xdf6876c902061d138de4afaca39fff4d760f358ead9a18d19e9e675586cbc29e__polygon-etl.json",
		},
		callTracer: []string{"polygon/debug_traceBlockByNumber_callTracer__2233682__polygon-etl.json"}},
	{name: "polygon 38102393", block: "polygon/eth_getBlockByHash_full__38102393__chainstorage.json",
		receipts:   []string{"polygon/receipts__38102393__chainstorage.json"},
		callTracer: []string{"polygon/debug_traceBlockByHash_callTracer__38102393__chainstorage.json"}},
	{name: "polygon 23887160", block: "polygon/eth_getBlockByNumber_full__23887160__polygon-etl.json",
		receipts: []string{"polygon/eth_getTransactionReceipt__0xcc6321f62e241e512bdbf7f466adfd2bd78543ee4a8efb69c2d58a5451ddb25d__polygon-etl.json"}},
	{name: "arbitrum 22207818", block: "arbitrum/eth_getBlockByNumber_full__22207818__erpc.json",
		receipts:   []string{"arbitrum/eth_getBlockReceipts__22207818__erpc.json"},
		callTracer: []string{"arbitrum/debug_traceBlock_callTracer__22207818__chainstorage.json"}},
	{name: "arbitrum 498597276", block: "arbitrum/eth_getBlockByNumber_full__498597276__erpc.json",
		receipts: []string{"arbitrum/eth_getBlockReceipts__498597276__erpc.json"}},
	{name: "arbitrum 150000000", block: "arbitrum/eth_getBlockByNumber_full__150000000__squid.json",
		receipts: []string{"arbitrum/eth_getBlockReceipts__150000000__squid.json"}},
	{name: "arbitrum 18413839 classic", block: "arbitrum/eth_getBlockByNumber_full__18413839_classic__chainstorage.json",
		receipts: []string{"arbitrum/eth_getTransactionReceipt__0xbb26d13b_classic__chainstorage.json"}},
	{name: "optimism 154497277", block: "optimism/eth_getBlockByNumber_full__154497277__squid.json",
		receipts: []string{"optimism/eth_getBlockReceipts__154497277__squid.json"}},
	{name: "optimism 14930491 legacy", block: "optimism/eth_getBlockByNumber_full__14930491_legacy__optimism-rosetta.json",
		receipts:   []string{"optimism/eth_getTransactionReceipt__0x5a1ec671_legacy__optimism-rosetta.json"},
		callTracer: []string{"optimism/debug_traceTransaction_callTracer__0x5a1ec671_legacy__optimism-rosetta.json"}},
	{name: "optimism 22698 legacy", block: "optimism/eth_getBlockByNumber_full__22698_legacy__optimism-rosetta.json",
		receipts:   []string{"optimism/eth_getTransactionReceipt__0xe58efba2_legacy__optimism-rosetta.json"},
		callTracer: []string{"optimism/debug_traceTransaction_callTracer__0xe58efba2_legacy__optimism-rosetta.json"}},
}

// tdComplete builds the BlockData of a cross-check set the way the fetcher
// does: block, receipts, traces (callTracer when the set has it, else
// trace_block), FinishStatus, CheckComplete.
func tdComplete(t *testing.T, s tdSet) *chainquery.BlockData {
	t.Helper()
	d := tdBlock(t, s.block)
	if err := evm.ApplyReceipts(d, tdReceipts(t, s.receipts...)); err != nil {
		t.Fatal(err)
	}
	withTraces := true
	switch {
	case s.callTracer != nil:
		if err := evm.DecodeCallTraces(d, tdArray(t, s.callTracer...)); err != nil {
			t.Fatal(err)
		}
	case s.parity != "":
		if err := evm.DecodeParityTraces(d, tdResult(t, s.parity)); err != nil {
			t.Fatal(err)
		}
	default:
		withTraces = false
	}
	evm.FinishStatus(d)
	if err := evm.CheckComplete(d, withTraces); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCrossCheckSets(t *testing.T) {
	for _, s := range tdSets {
		t.Run(s.name, func(t *testing.T) {
			d := tdComplete(t, s)
			if len(d.Transactions) != d.Block.TransactionCount {
				t.Fatalf("%d transactions, count %d", len(d.Transactions), d.Block.TransactionCount)
			}
			// Receipts of one block add up: a receipt of another block or a
			// misplaced one would break the running total. Not on Arbitrum:
			// its gasUsed counts L1 gas (gasUsedForL1) that neither
			// cumulativeGasUsed nor the header's gasUsed do.
			if d.Block.Chain != chainquery.Arbitrum {
				var cum uint64
				for _, tx := range d.Transactions {
					if tx.CumulativeGasUsed < cum || tx.CumulativeGasUsed-cum != tx.GasUsed {
						t.Errorf("tx %d: cumulative gas %d after %d with gas used %d", tx.Index, tx.CumulativeGasUsed, cum, tx.GasUsed)
					}
					cum = tx.CumulativeGasUsed
				}
				if cum != d.Block.GasUsed {
					t.Errorf("last cumulative gas %d, block gas used %d", cum, d.Block.GasUsed)
				}
			}
			if len(d.Traces) == 0 {
				return
			}
			top := map[int]*chainquery.Trace{}
			for _, tr := range d.Traces {
				if len(tr.TraceAddress) == 0 {
					top[tr.TransactionIndex] = tr
				}
			}
			for _, tx := range d.Transactions {
				// A transaction fails exactly when its top-level call fails;
				// this is also the rule FinishStatus applies before Byzantium.
				tr := top[tx.Index]
				if tx.Status != (tr.Error == "") {
					t.Errorf("tx %d: status %v, top-level error %q", tx.Index, tx.Status, tr.Error)
				}
				// Legacy OP (l2geth) lists an L1-to-L2 message as sent by the
				// zero address while its tracer names the L1 sender.
				l1Message := d.Block.Chain == chainquery.Optimism && tx.From == (chainquery.Address{})
				if tr.From != tx.From && !l1Message {
					t.Errorf("tx %d: top-level from %s, transaction from %s", tx.Index, tr.From, tx.From)
				}
				if tr.Type == chainquery.TraceCreate && (tx.ContractAddress == nil || tr.To == nil || *tr.To != *tx.ContractAddress) {
					t.Errorf("tx %d: created %v, receipt says %v", tx.Index, tr.To, tx.ContractAddress)
				}
			}
		})
	}
}
