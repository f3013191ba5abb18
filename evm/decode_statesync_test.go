package evm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
)

// The Bor state-sync fixtures are one transaction (eth_getTransactionByHash)
// and its receipt at index 0x57 of polygon block 0x40b1ac0; the rest of the
// block is not in the data. These tests put them after 87 made-up ordinary
// transactions of that block.
const (
	ssTx      = "polygon/eth_getTransactionByHash__0xe4733eb7_statesync__erigon.json"
	ssReceipt = "polygon/eth_getTransactionReceipt__0xe4733eb7_statesync__erigon.json"
	ssHash    = "0xe4733eb7834d1e62a2ff484065f1fd07bbb8905c41c1ed963fa139a25cd683dd"
	ssBlock   = "0xbaa03f17ce34d98fc687ea64b2be18d1e1d8028574823a73a9a4f1809808f085"
	ssFillers = 0x57
)

// ssBlockJSON returns block 0x40b1ac0 with the filler transactions, and the
// state-sync transaction last when listed is set (as current Bor lists it).
func ssBlockJSON(t *testing.T, listed bool) json.RawMessage {
	var txs []string
	for i := range ssFillers {
		txs = append(txs, oddTx(i, `"to":"0x00000000000000000000000000000000000000dd","gas":"0x5208","gasPrice":"0x1"`))
	}
	if listed {
		txs = append(txs, string(tdResult(t, ssTx)))
	}
	return json.RawMessage(fmt.Sprintf(`{"number":"0x40b1ac0","hash":%q,"parentHash":%q,"timestamp":"0x1","transactions":[%s]}`,
		ssBlock, oddParent, strings.Join(txs, ",")))
}

// ssReceipts returns the receipts of the fillers and, when withStateSync is
// set, the real state-sync receipt.
func ssReceipts(t *testing.T, withStateSync bool) []json.RawMessage {
	var out []json.RawMessage
	for i := range ssFillers {
		out = append(out, json.RawMessage(fmt.Sprintf(`{"transactionHash":%q,"transactionIndex":"0x%x","blockHash":%q,"blockNumber":"0x40b1ac0","gasUsed":"0x5208","cumulativeGasUsed":"0x%x","status":"0x1","logs":[]}`,
			oddHash(i), i, ssBlock, 21000*(i+1))))
	}
	if withStateSync {
		out = append(out, tdResult(t, ssReceipt))
	}
	return out
}

// ssTraces returns one top-level trace for each filler transaction.
func ssTraces(d *chainquery.BlockData) {
	for _, tx := range d.Transactions[:ssFillers] {
		d.Traces = append(d.Traces, &chainquery.Trace{BlockNumber: tx.BlockNumber, TransactionHash: tx.Hash, TransactionIndex: tx.Index, TraceAddress: []int{}})
	}
}

func ssDecode(t *testing.T, listed bool) *chainquery.BlockData {
	t.Helper()
	d, err := evm.DecodeBlock(chainquery.Polygon, ssBlockJSON(t, listed))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStateSync(t *testing.T) {
	t.Run("receipt without transaction in the block (older Bor)", func(t *testing.T) {
		d := ssDecode(t, false)
		if err := evm.ApplyReceipts(d, ssReceipts(t, true)); err != nil {
			t.Fatal(err)
		}
		ssTraces(d)
		if err := evm.CheckComplete(d, true); err != nil {
			t.Fatal(err)
		}
		if d.Block.TransactionCount != ssFillers+1 || len(d.Transactions) != ssFillers+1 {
			t.Fatalf("%d transactions, count %d", len(d.Transactions), d.Block.TransactionCount)
		}
		// The transaction made from the receipt is what Bor answers to
		// eth_getTransactionByHash for it, receipt fields included.
		made := d.Transactions[ssFillers]
		listed := ssDecode(t, true)
		if err := evm.ApplyReceipts(listed, ssReceipts(t, true)); err != nil {
			t.Fatal(err)
		}
		want := listed.Transactions[ssFillers]
		if made.Hash.Hex() != ssHash || made.Hash != want.Hash || made.Index != want.Index || made.From != want.From ||
			*made.To != *want.To || made.Value.Cmp(want.Value) != 0 || made.GasLimit != want.GasLimit ||
			made.GasPrice.Cmp(want.GasPrice) != 0 || made.Nonce != want.Nonce || len(made.Input) != len(want.Input) ||
			made.Type != want.Type || made.MaxFeePerGas != nil || want.MaxFeePerGas != nil ||
			made.EffectiveGasPrice.Cmp(want.EffectiveGasPrice) != 0 || made.GasUsed != want.GasUsed ||
			made.CumulativeGasUsed != want.CumulativeGasUsed || made.Status != want.Status || made.LogCount != 2 {
			t.Errorf("made  %+v\nwant %+v", made, want)
		}
		if len(d.Logs) != 2 || d.Logs[0].LogIndex != 0x1f6 || d.Logs[1].LogIndex != 0x1f7 || d.Logs[1].TransactionIndex != ssFillers ||
			d.Logs[1].Address != tdAddr(t, "0x0000000000000000000000000000000000001001") {
			t.Errorf("logs %+v %+v", d.Logs[0], d.Logs[1])
		}
	})
	t.Run("listed in the block, no trace", func(t *testing.T) {
		d := ssDecode(t, true)
		if err := evm.ApplyReceipts(d, ssReceipts(t, true)); err != nil {
			t.Fatal(err)
		}
		ssTraces(d)
		if err := evm.CheckComplete(d, true); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("listed in the block, receipt missing", func(t *testing.T) {
		// Some Bor versions leave the state-sync receipt out of
		// eth_getBlockReceipts; eth_getTransactionReceipt has it. Storing the
		// block without it would lose its logs, so it is an error.
		d := ssDecode(t, true)
		if err := evm.ApplyReceipts(d, ssReceipts(t, false)); err == nil || !strings.Contains(err.Error(), ssHash) {
			t.Fatalf("err = %v, want one naming %s", err, ssHash)
		}
		if err := evm.ApplyReceipts(d, append(ssReceipts(t, false), tdResult(t, ssReceipt))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an ordinary transaction still needs its trace", func(t *testing.T) {
		d := ssDecode(t, false)
		if err := evm.ApplyReceipts(d, ssReceipts(t, true)); err != nil {
			t.Fatal(err)
		}
		ssTraces(d)
		d.Traces = d.Traces[1:]
		if err := evm.CheckComplete(d, true); err == nil || !strings.Contains(err.Error(), oddHash(0)) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("not at the next index", func(t *testing.T) {
		d := ssDecode(t, false)
		d.Transactions = d.Transactions[:ssFillers-1]
		d.Block.TransactionCount = len(d.Transactions)
		if err := evm.ApplyReceipts(d, append(ssReceipts(t, true)[:ssFillers-1], tdResult(t, ssReceipt))); err == nil {
			t.Fatal("state-sync receipt after a gap was accepted")
		}
	})
}
