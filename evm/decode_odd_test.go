package evm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
)

const (
	oddBlockHash = "0x1111111111111111111111111111111111111111111111111111111111111111"
	oddParent    = "0x2222222222222222222222222222222222222222222222222222222222222222"
)

// oddHash returns a distinct transaction hash for test blocks.
func oddHash(i int) string { return fmt.Sprintf("0x%064x", 0xabc000+i) }

// oddBlock returns a block JSON with the given extra header fields and
// transactions (raw JSON objects).
func oddBlock(header string, txs ...string) json.RawMessage {
	if header != "" {
		header = "," + header
	}
	return json.RawMessage(fmt.Sprintf(`{"number":"0x10","hash":%q,"parentHash":%q,"timestamp":"0x5f5e100"%s,"transactions":[%s]}`,
		oddBlockHash, oddParent, header, strings.Join(txs, ",")))
}

// oddTx returns a transaction JSON with hash oddHash(i), index i and the
// given extra fields.
func oddTx(i int, fields string) string {
	if fields != "" {
		fields = "," + fields
	}
	return fmt.Sprintf(`{"hash":%q,"transactionIndex":"0x%x","from":"0x00000000000000000000000000000000000000aa"%s}`, oddHash(i), i, fields)
}

// oddReceipt returns a receipt JSON for transaction i of oddBlock.
func oddReceipt(i int, fields string) json.RawMessage {
	if fields != "" {
		fields = "," + fields
	}
	return json.RawMessage(fmt.Sprintf(`{"transactionHash":%q,"transactionIndex":"0x%x","blockHash":%q,"blockNumber":"0x10","gasUsed":"0x5208","cumulativeGasUsed":"0x%x","status":"0x1","logs":[]%s}`,
		oddHash(i), i, oddBlockHash, 21000*(i+1), fields))
}

func TestDecodeBlockOdd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		raw   json.RawMessage
		check func(t *testing.T, d *chainquery.BlockData)
	}{
		{"minimal header: no logsBloom, extraData, baseFeePerGas, miner", oddBlock(""), func(t *testing.T, d *chainquery.BlockData) {
			b := d.Block
			if b.LogsBloom != nil || b.HasExtraData || b.ExtraData != nil || b.BaseFeePerGas != nil || b.Miner != (chainquery.Address{}) || b.Number != 16 || b.Timestamp != 100000000 {
				t.Errorf("%+v", b)
			}
		}},
		{"null optional fields", oddBlock(`"logsBloom":null,"extraData":null,"baseFeePerGas":null,"miner":null,"size":null`), func(t *testing.T, d *chainquery.BlockData) {
			if b := d.Block; b.LogsBloom != nil || b.HasExtraData || b.BaseFeePerGas != nil || b.Size != 0 {
				t.Errorf("%+v", b)
			}
		}},
		{"empty extraData is present", oddBlock(`"extraData":"0x"`), func(t *testing.T, d *chainquery.BlockData) {
			if !d.Block.HasExtraData || d.Block.ExtraData == nil || len(d.Block.ExtraData) != 0 {
				t.Errorf("extra data %v %v", d.Block.HasExtraData, d.Block.ExtraData)
			}
		}},
		{"author when miner is absent (old Parity)", oddBlock(`"author":"0x00000000000000000000000000000000000000bb"`), func(t *testing.T, d *chainquery.BlockData) {
			if d.Block.Miner[19] != 0xbb {
				t.Errorf("miner %s", d.Block.Miner)
			}
		}},
		{"chain extras are ignored", oddBlock(`"blockExtraData":"0x","extDataGasUsed":"0x0","l1BlockNumber":"0x1","sendRoot":"0x00","sealFields":["0xa0"],"withdrawals":[{"index":"0x1"}],"blobGasUsed":"0x0","step":307831686`), nil},
		{"leading zeros and short quantities", oddBlock(`"gasLimit":"0x00ff","gasUsed":"0x0","size":"0x"`), func(t *testing.T, d *chainquery.BlockData) {
			if d.Block.GasLimit != 255 || d.Block.GasUsed != 0 || d.Block.Size != 0 {
				t.Errorf("%+v", d.Block)
			}
		}},
		{"transaction types: absent, legacy, unknown and chain-specific kept as numbers", oddBlock("",
			oddTx(0, ``), oddTx(1, `"type":"0x0"`), oddTx(2, `"type":"0x4"`), oddTx(3, `"type":"0x7e"`),
			oddTx(4, `"type":"0x64"`), oddTx(5, `"type":"0x7f"`), oddTx(6, `"type":"0x1234"`)),
			func(t *testing.T, d *chainquery.BlockData) {
				for i, want := range []int{0, 0, 4, 0x7e, 0x64, 0x7f, 0x1234} {
					if d.Transactions[i].Type != want {
						t.Errorf("tx %d type %#x, want %#x", i, d.Transactions[i].Type, want)
					}
				}
			}},
		{"creation: to null or absent", oddBlock("", oddTx(0, `"to":null`), oddTx(1, ``)), func(t *testing.T, d *chainquery.BlockData) {
			if d.Transactions[0].To != nil || d.Transactions[1].To != nil {
				t.Error("to not nil")
			}
		}},
		{"gas price: absent takes the fee cap, else nil", oddBlock("",
			oddTx(0, `"maxFeePerGas":"0x64","maxPriorityFeePerGas":"0x1"`), oddTx(1, ``), oddTx(2, `"gasPrice":"0x5"`)),
			func(t *testing.T, d *chainquery.BlockData) {
				tx := d.Transactions
				if tx[0].GasPrice.Int64() != 100 || tx[0].MaxPriorityFeePerGas.Int64() != 1 || tx[1].GasPrice != nil || tx[1].MaxFeePerGas != nil || tx[2].GasPrice.Int64() != 5 {
					t.Errorf("%v %v %v", tx[0].GasPrice, tx[1].GasPrice, tx[2].GasPrice)
				}
			}},
		{"unreadable fields are left empty, not fatal", oddBlock("",
			oddTx(0, `"value":"0xzz","gas":"lots","nonce":{"x":1},"input":"0xq1","to":"0x12"`)),
			func(t *testing.T, d *chainquery.BlockData) {
				tx := d.Transactions[0]
				if tx.Value.Sign() != 0 || tx.GasLimit != 0 || tx.Nonce != 0 || tx.Input != nil || tx.To != nil {
					t.Errorf("%+v", tx)
				}
			}},
		{"input under its old name data; odd digits padded", oddBlock("", oddTx(0, `"data":"0xabc"`)), func(t *testing.T, d *chainquery.BlockData) {
			if chainquery.Hex(d.Transactions[0].Input) != "0x0abc" {
				t.Errorf("input %x", d.Transactions[0].Input)
			}
		}},
		{"no transactionIndex: the position", oddBlock("", `{"hash":"`+oddHash(0)+`"}`, `{"hash":"`+oddHash(1)+`"}`), func(t *testing.T, d *chainquery.BlockData) {
			if d.Transactions[1].Index != 1 || d.Transactions[1].Value.Sign() != 0 {
				t.Errorf("%+v", d.Transactions[1])
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := evm.DecodeBlock(chainquery.Ethereum, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

func TestDecodeBlockErrors(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"null block", `null`, "null"},
		{"not an object", `[1]`, "block"},
		{"no number", `{"hash":"` + oddBlockHash + `","parentHash":"` + oddParent + `","timestamp":"0x1"}`, "number is missing"},
		{"no hash", `{"number":"0x1","parentHash":"` + oddParent + `","timestamp":"0x1"}`, "hash is missing"},
		{"short hash", `{"number":"0x1","hash":"0x1234","parentHash":"` + oddParent + `","timestamp":"0x1"}`, "64 hex digits"},
		{"no timestamp", `{"number":"0x1","hash":"` + oddBlockHash + `","parentHash":"` + oddParent + `"}`, "timestamp"},
		{"hash-only transactions", string(oddBlock("", `"`+oddHash(0)+`"`)), "hashes only"},
		{"transaction without hash", string(oddBlock("", `{"from":"0x00000000000000000000000000000000000000aa"}`)), "hash is missing"},
		{"transaction hash of 20 bytes", string(oddBlock("", `{"hash":"0x00000000000000000000000000000000000000aa"}`)), "64 hex digits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := evm.DecodeBlock(chainquery.Ethereum, json.RawMessage(tc.raw))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestApplyReceiptsOdd(t *testing.T) {
	block := oddBlock("", oddTx(0, `"gasPrice":"0x7"`), oddTx(1, ``))
	decode := func(t *testing.T) *chainquery.BlockData {
		d, err := evm.DecodeBlock(chainquery.Ethereum, block)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Run("OK status, price fallback, log numbering", func(t *testing.T) {
		d := decode(t)
		log := `{"address":"0x00000000000000000000000000000000000000cc","topics":[],"data":"0x"}`
		err := evm.ApplyReceipts(d, []json.RawMessage{
			json.RawMessage(`null`), // a receipt the node did not have, followed by the real one
			oddReceipt(1, `"status":null,"root":"`+oddParent+`","logs":[`+log+`,`+log+`]`),
			oddReceipt(0, `"status":"0x0","logs":[`+log+`]`),
		})
		if err != nil {
			t.Fatal(err)
		}
		tx0, tx1 := d.Transactions[0], d.Transactions[1]
		if tx0.Status || !tx1.Status || tx0.EffectiveGasPrice.Int64() != 7 || tx1.EffectiveGasPrice.Sign() != 0 || tx1.CumulativeGasUsed != 42000 {
			t.Errorf("tx0 %+v tx1 %+v", tx0, tx1)
		}
		if len(d.Logs) != 3 || d.Logs[0].TransactionIndex != 0 || d.Logs[2].LogIndex != 2 || d.Logs[2].TransactionIndex != 1 || tx1.LogCount != 2 || d.Logs[0].Data == nil {
			t.Errorf("logs %+v %+v %+v", d.Logs[0], d.Logs[1], d.Logs[2])
		}
		if err := evm.CheckComplete(d, false); err != nil {
			t.Error(err)
		}
	})
	for _, tc := range []struct {
		name     string
		receipts []json.RawMessage
		want     string
	}{
		{"missing receipt", []json.RawMessage{oddReceipt(0, ``)}, "have no receipt"},
		{"empty answer", nil, "2 of 2 transactions have no receipt"},
		{"receipt of another block", []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, `"blockHash":"`+oddParent+`"`)}, "is of block"},
		{"receipt at another index", []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, `"transactionIndex":"0x5"`)}, "has index 5"},
		{"two receipts for one transaction", []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, ``), oddReceipt(1, ``)}, "two receipts"},
		{"receipt without transaction", []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, ``), oddReceipt(2, ``)}, "has no transaction"},
		{"state-sync receipt outside polygon", []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, ``),
			oddReceipt(2, `"from":"0x0000000000000000000000000000000000000000","to":"0x0000000000000000000000000000000000000000"`)}, "has no transaction"},
		{"five topics", []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, `"logs":[{"address":"0x00000000000000000000000000000000000000cc","topics":["`+oddParent+`","`+oddParent+`","`+oddParent+`","`+oddParent+`","`+oddParent+`"],"data":"0x"}]`)}, "5 topics"},
		{"short topic", []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, `"logs":[{"address":"0x00000000000000000000000000000000000000cc","topics":["0x01"],"data":"0x"}]`)}, "topic 0"},
		{"log without address", []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, `"logs":[{"topics":[],"data":"0x"}]`)}, "address is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decode(t)
			err := evm.ApplyReceipts(d, tc.receipts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			// Nothing was applied: the caller may fetch again and retry.
			for _, tx := range d.Transactions {
				if tx.EffectiveGasPrice != nil || tx.GasUsed != 0 {
					t.Errorf("tx %d changed by a failed ApplyReceipts", tx.Index)
				}
			}
			if d.Logs != nil || len(d.Transactions) != 2 {
				t.Errorf("block changed by a failed ApplyReceipts")
			}
		})
	}
}

func TestCheckCompleteOdd(t *testing.T) {
	complete := func(t *testing.T) *chainquery.BlockData {
		d, err := evm.DecodeBlock(chainquery.Ethereum, oddBlock("", oddTx(0, ``), oddTx(1, ``)))
		if err != nil {
			t.Fatal(err)
		}
		if err := evm.ApplyReceipts(d, []json.RawMessage{oddReceipt(0, ``), oddReceipt(1, `"logs":[{"address":"0x00000000000000000000000000000000000000cc","topics":[],"data":"0x","logIndex":"0x0"}]`)}); err != nil {
			t.Fatal(err)
		}
		for i, tx := range d.Transactions {
			d.Traces = append(d.Traces, &chainquery.Trace{TransactionHash: tx.Hash, TransactionIndex: i, TraceAddress: []int{}, Subtraces: i})
		}
		d.Traces = append(d.Traces, &chainquery.Trace{TransactionHash: d.Transactions[1].Hash, TransactionIndex: 1, TraceAddress: []int{0}})
		return d
	}
	if err := evm.CheckComplete(complete(t), true); err != nil {
		t.Fatalf("complete block: %v", err)
	}
	for _, tc := range []struct {
		name       string
		spoil      func(d *chainquery.BlockData)
		withTraces bool
		want       string
	}{
		{"no receipts applied", func(d *chainquery.BlockData) { d.Transactions[1].EffectiveGasPrice = nil }, false, "without receipt"},
		{"count differs", func(d *chainquery.BlockData) { d.Block.TransactionCount = 3 }, false, "header counts 3"},
		{"index gap", func(d *chainquery.BlockData) { d.Transactions[1].Index = 2 }, false, "at position 1"},
		{"log of another transaction", func(d *chainquery.BlockData) { d.Logs[0].TransactionHash = chainquery.Hash{1} }, false, "log 0"},
		{"two logs with one index", func(d *chainquery.BlockData) { d.Logs = append(d.Logs, d.Logs[0]) }, false, "two logs"},
		{"missing top-level trace", func(d *chainquery.BlockData) { d.Traces = d.Traces[1:] }, true, "no top-level trace"},
		{"trace of another transaction", func(d *chainquery.BlockData) { d.Traces[0].TransactionIndex = 1 }, false, "names transaction"},
		{"two top-level traces", func(d *chainquery.BlockData) {
			d.Traces = append(d.Traces, &chainquery.Trace{TransactionHash: d.Transactions[0].Hash, TraceAddress: []int{}})
		}, false, `two traces at ""`},
		{"child without parent", func(d *chainquery.BlockData) { d.Traces[2].TraceAddress = []int{0, 0} }, false, "has no parent"},
		{"subtraces without children", func(d *chainquery.BlockData) { d.Traces = d.Traces[:2] }, false, "1 subtraces but 0 children"},
		{"child beyond subtraces", func(d *chainquery.BlockData) { d.Traces[2].TraceAddress = []int{1} }, false, "beyond"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := complete(t)
			tc.spoil(d)
			err := evm.CheckComplete(d, tc.withTraces)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("traces optional", func(t *testing.T) {
		d := complete(t)
		d.Traces = nil
		if err := evm.CheckComplete(d, false); err != nil {
			t.Fatal(err)
		}
		if err := evm.CheckComplete(d, true); err == nil {
			t.Fatal("no error without traces")
		}
	})
}
