package evm_test

import (
	"encoding/json"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
)

// FuzzDecodeNodeAnswers feeds arbitrary node answers to every decoder of
// what a node sends for a block (the block, its receipts, Parity traces,
// callTracer traces), after the block of two transactions they complete.
// No answer may panic: a decoder bug would otherwise stop an ingester on
// one block forever. Errors are fine; the fetcher asks again.
func FuzzDecodeNodeAnswers(f *testing.F) {
	log := `{"address":"0x00000000000000000000000000000000000000cc","topics":["` + oddParent + `"],"data":"0x01","logIndex":"0x0"}`
	for _, seed := range []struct {
		kind byte
		raw  string
	}{
		{0, string(oddBlock(`"miner":"0x00000000000000000000000000000000000000bb","baseFeePerGas":"0x7"`, oddTx(0, `"to":"0x00000000000000000000000000000000000000cc","value":"0x1","input":"0x","type":"0x2"`), oddTx(1, "")))},
		{1, string(oddReceipt(0, `"logs":[`+log+`]`))},
		{1, `[` + string(oddReceipt(0, "")) + `,` + string(oddReceipt(1, `"contractAddress":"0x00000000000000000000000000000000000000dd"`)) + `]`},
		{2, `[{"action":{"callType":"call","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000cc","gas":"0x5208","input":"0x","value":"0x1"},"blockHash":"` + oddBlockHash + `","blockNumber":16,"result":{"gasUsed":"0x0","output":"0x"},"subtraces":1,"traceAddress":[],"transactionHash":"` + oddHash(0) + `","transactionPosition":0,"type":"call"},` +
			`{"action":{"callType":"delegatecall","from":"0x00000000000000000000000000000000000000cc","to":"0x00000000000000000000000000000000000000dd","gas":"0x0","input":"0x","value":"0x0"},"blockHash":"` + oddBlockHash + `","blockNumber":16,"error":"Reverted","subtraces":0,"traceAddress":[0],"transactionHash":"` + oddHash(0) + `","transactionPosition":0,"type":"call"}]`},
		{3, `[{"txHash":"` + oddHash(0) + `","result":{"type":"CALL","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000cc","value":"0x1","gas":"0x5208","gasUsed":"0x5208","input":"0x","calls":[{"type":"CREATE2","from":"0x00000000000000000000000000000000000000cc","to":"0x00000000000000000000000000000000000000ee","value":"0x0","gas":"0x1","gasUsed":"0x1","input":"0x60","output":"0x","error":"out of gas"}]}},{"txHash":"` + oddHash(1) + `","result":{"type":"SELFDESTRUCT","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000cc"}}]`},
		{2, `[{"type":"suicide","action":{},"traceAddress":[99,-1],"transactionPosition":7}]`},
		{3, `[{"result":{"calls":[{"calls":[{}]}]}},null,{"error":"x"}]`},
		{1, `null`},
		{0, `{"number":"0x10","transactions":["` + oddHash(0) + `"]}`},
	} {
		f.Add(seed.kind, seed.raw)
	}
	base, err := evm.DecodeBlock(chainquery.Polygon, oddBlock("", oddTx(0, `"to":"0x00000000000000000000000000000000000000cc"`), oddTx(1, "")))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, kind byte, raw string) {
		d := copyBlock(base)
		switch kind % 4 {
		case 0:
			if b, err := evm.DecodeBlock(chainquery.Polygon, json.RawMessage(raw)); err == nil {
				evm.CheckComplete(b, false)
			}
		case 1:
			receipts := []json.RawMessage{json.RawMessage(raw)}
			var many []json.RawMessage
			if json.Unmarshal([]byte(raw), &many) == nil && len(many) > 0 {
				receipts = many
			}
			if evm.ApplyReceipts(d, receipts) == nil {
				evm.CheckComplete(d, false)
			}
		case 2:
			if evm.DecodeParityTraces(d, json.RawMessage(raw)) == nil {
				evm.FinishStatus(d)
				evm.CheckComplete(d, true)
			}
		case 3:
			if evm.DecodeCallTraces(d, json.RawMessage(raw)) == nil {
				evm.FinishStatus(d)
				evm.CheckComplete(d, true)
			}
		}
	})
}

// copyBlock copies what the decoders change of a decoded block.
func copyBlock(d *chainquery.BlockData) *chainquery.BlockData {
	b := *d.Block
	out := &chainquery.BlockData{Block: &b}
	for _, tx := range d.Transactions {
		c := *tx
		out.Transactions = append(out.Transactions, &c)
	}
	return out
}
