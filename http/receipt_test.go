package http_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

func receiptsPath(chain string, query string) string {
	return "/api/v1/customer/" + chain + "/blocks/receipts" + query
}

func TestBlockReceipts_OK(t *testing.T) {
	s := MustOpenServer(t)
	block := fmt.Sprintf("?block_number=%d", storetest.PolygonBlock)

	t.Run("Golden", func(t *testing.T) {
		body := MustOK(t, s.Get(t, receiptsPath("polygon", block)))
		AssertGolden(t, "receipts_block_68000000", body)
		l := decodeList(t, body)
		if l.BlockNumber != storetest.PolygonBlock || l.Count != 5 || len(l.Result) != 5 {
			t.Fatalf("block_number %d count %d results %d", l.BlockNumber, l.Count, len(l.Result))
		}
		for i, r := range l.Result {
			if r["transaction_index"].(float64) != float64(i) {
				t.Errorf("result %d has transaction_index %v", i, r["transaction_index"])
			}
		}
		if r := l.Result[1]; r["status"] != false {
			t.Errorf("reverted transaction: status %v", r["status"])
		}
		if r := l.Result[2]; r["contract_address"] != storetest.Created.Hex() {
			t.Errorf("contract creation: contract_address %v", r["contract_address"])
		}
		if r := l.Result[0]; r["contract_address"] != nil {
			t.Errorf("call: contract_address %v, want null", r["contract_address"])
		}
		if !strings.Contains(string(body), `"effective_gas_price":31000000000}`) {
			t.Errorf("effective_gas_price must be a JSON integer: %s", body)
		}
		if !strings.HasPrefix(string(body), `{"block_number":68000000,"offset":0,"limit":10,"result":[`) {
			t.Errorf("envelope order: %s", body)
		}
	})

	t.Run("Page", func(t *testing.T) {
		l := decodeList(t, MustOK(t, s.Get(t, receiptsPath("polygon", block+"&limit=2&offset=4"))))
		if l.Offset != 4 || l.Limit != 2 || l.Count != 5 || len(l.Result) != 1 || l.Result[0]["transaction_index"].(float64) != 4 {
			t.Errorf("offset %d limit %d count %d results %v", l.Offset, l.Limit, l.Count, l.Result)
		}
		l = decodeList(t, MustOK(t, s.Get(t, receiptsPath("polygon", block+"&offset=5"))))
		if l.Count != 5 || len(l.Result) != 0 {
			t.Errorf("past the end: count %d results %d", l.Count, len(l.Result))
		}
		// The largest offset is no error: an empty page, the offset echoed exactly.
		body := MustOK(t, s.Get(t, receiptsPath("polygon", block+"&offset=9223372036854775807")))
		AssertJSON(t, body, `{"block_number":68000000,"offset":9223372036854775807,"limit":10,"result":[],"count":5}`)
	})

	t.Run("EmptyBlock", func(t *testing.T) {
		body := MustOK(t, s.Get(t, receiptsPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonEmptyBlock))))
		AssertJSON(t, body, `{"block_number":68000001,"offset":0,"limit":10,"result":[],"count":0}`)
	})

	t.Run("Ethereum", func(t *testing.T) {
		body := MustOK(t, s.Get(t, receiptsPath("ethereum", fmt.Sprintf("?block_number=%d", storetest.EthereumBlock))))
		AssertJSON(t, body, `{"block_number":18000000,"offset":0,"limit":10,"result":[{
			"block_number":18000000,"timestamp":1693072199,"datetime":"2023-08-26T17:49:59",
			"transaction_hash":"`+storetest.TxEthereum.Hex()+`","transaction_index":0,
			"cumulative_gas_used":21000,"gas_used":21000,"contract_address":null,"status":true,
			"effective_gas_price":31000000000}],"count":1}`)
	})
}

func TestBlockReceipts_Errors(t *testing.T) {
	s := MustOpenServer(t)
	evm := "chain must be one of: ethereum, polygon, base, arbitrum, optimism, binance, avalanche, gnosis"
	badBlock := "block_number must be an integer between 0 and 9223372036854775807"
	ok := fmt.Sprintf("?block_number=%d", storetest.PolygonBlock)
	RunErrorCases(t, s, []ErrorCase{
		{Name: "Chain/solana", Path: receiptsPath("solana", ok), Status: 400, Detail: evm},
		{Name: "Chain/unknown", Path: receiptsPath("tron", ok), Status: 400, Detail: evm},
		{Name: "BlockNumber/missing", Path: receiptsPath("polygon", ""), Status: 400, Detail: "block_number is required"},
		{Name: "BlockNumber/missingWithPage", Path: receiptsPath("polygon", "?limit=5"), Status: 400, Detail: "block_number is required"},
		{Name: "BlockNumber/empty", Path: receiptsPath("polygon", "?block_number="), Status: 400, Detail: badBlock},
		{Name: "BlockNumber/negative", Path: receiptsPath("polygon", "?block_number=-1"), Status: 400, Detail: badBlock},
		{Name: "BlockNumber/float", Path: receiptsPath("polygon", "?block_number=1.5"), Status: 400, Detail: badBlock},
		{Name: "BlockNumber/word", Path: receiptsPath("polygon", "?block_number=latest"), Status: 400, Detail: badBlock},
		{Name: "BlockNumber/spaces", Path: receiptsPath("polygon", "?block_number=%201"), Status: 400, Detail: badBlock},
		{Name: "Limit/word", Path: receiptsPath("polygon", ok+"&limit=all"), Status: 400, Detail: "limit must be an integer between 1 and 50"},
		{Name: "Limit/51", Path: receiptsPath("polygon", ok+"&limit=51"), Status: 400, Detail: "limit must be an integer between 1 and 50"},
		{Name: "Offset/negative", Path: receiptsPath("polygon", ok+"&offset=-1"), Status: 400, Detail: "offset must be an integer between 0 and 9223372036854775807"},
		{Name: "Offset/above2^63-1", Path: receiptsPath("polygon", ok+"&offset=9223372036854775808"), Status: 400, Detail: "offset must be an integer between 0 and 9223372036854775807"},
		// Given but empty is no integer, as for block_number (not the default).
		{Name: "Limit/empty", Path: receiptsPath("polygon", ok+"&limit="), Status: 400, Detail: "limit must be an integer between 1 and 50"},
		{Name: "Offset/empty", Path: receiptsPath("polygon", ok+"&offset"), Status: 400, Detail: "offset must be an integer between 0 and 9223372036854775807"},
		{Name: "NotFound/unindexed", Path: receiptsPath("polygon", "?block_number=1"), Status: 404, Detail: "block"},
		{Name: "NotFound/otherChain", Path: receiptsPath("ethereum", ok), Status: 404, Detail: "block"},
		{Name: "NotFound/chainWithNothing", Path: receiptsPath("gnosis", ok), Status: 404, Detail: "block"},
	})
}
