package http_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

func blockPath(chain string, query string) string {
	return "/api/v1/customer/" + chain + "/block" + query
}

func TestBlock_OK(t *testing.T) {
	s := MustOpenServer(t)
	q := fmt.Sprintf("?block_number=%d", storetest.PolygonBlock)

	t.Run("HeaderOnlyGolden", func(t *testing.T) {
		body := MustOK(t, s.Get(t, blockPath("polygon", q)))
		AssertGolden(t, "block_68000000", body)
		if !strings.HasSuffix(string(body), `"transactions":null}`+"\n") {
			t.Errorf("transactions must be null without full_transactions: %s", body)
		}
		if b := string(MustOK(t, s.Get(t, blockPath("polygon", q+"&full_transactions=false")))); b != string(body) {
			t.Errorf("full_transactions=false differs from the default:\n%s\n%s", b, body)
		}
	})

	t.Run("FullTransactionsGolden", func(t *testing.T) {
		body := MustOK(t, s.Get(t, blockPath("polygon", q+"&full_transactions=true")))
		AssertGolden(t, "block_68000000_full", body)
		var b struct {
			Transactions []map[string]any `json:"transactions"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatal(err)
		}
		if len(b.Transactions) != 5 {
			t.Fatalf("%d transactions, want 5", len(b.Transactions))
		}
		for i, tx := range b.Transactions {
			if tx["transaction_index"].(float64) != float64(i) {
				t.Errorf("transaction %d has transaction_index %v", i, tx["transaction_index"])
			}
		}
		create := b.Transactions[2]
		if create["to_address"] != nil || create["contract_address"] != storetest.Created.Hex() ||
			create["max_fee_per_gas"] != nil || create["max_priority_fee_per_gas"] != nil || create["transaction_type"].(float64) != 0 {
			t.Errorf("contract creation: %v", create)
		}
		if tr := b.Transactions[4]; tr["value"] != "25000000000000000000" {
			t.Errorf("value %v, want the decimal string", tr["value"])
		}
	})

	t.Run("BooleanSpellings", func(t *testing.T) {
		want := string(MustOK(t, s.Get(t, blockPath("polygon", q+"&full_transactions=true"))))
		for _, v := range []string{"TRUE", "True", "1", "tRuE"} {
			if got := string(MustOK(t, s.Get(t, blockPath("polygon", q+"&full_transactions="+v)))); got != want {
				t.Errorf("full_transactions=%s differs from true", v)
			}
		}
		none := string(MustOK(t, s.Get(t, blockPath("polygon", q))))
		for _, v := range []string{"FALSE", "False", "0"} {
			if got := string(MustOK(t, s.Get(t, blockPath("polygon", q+"&full_transactions="+v)))); got != none {
				t.Errorf("full_transactions=%s differs from false", v)
			}
		}
	})

	t.Run("EmptyBlock", func(t *testing.T) {
		e := fmt.Sprintf("?block_number=%d", storetest.PolygonEmptyBlock)
		common := `"block_number":68000001,"timestamp":1740787202,"datetime":"2025-03-01T00:00:02",
			"block_hash":"` + storetest.H(storetest.TagBlock, 1).Hex() + `",
			"block_parent_hash":"` + storetest.H(storetest.TagBlock, 0).Hex() + `","version":0,
			"transactions_root":"` + storetest.H(storetest.TagRoot, 1).Hex() + `",
			"state_root":"` + storetest.H(storetest.TagRoot, 2).Hex() + `",
			"receipts_root":"` + storetest.H(storetest.TagRoot, 3).Hex() + `",
			"miner":"` + storetest.Addr(0xee).Hex() + `","size":1234,"gas_limit":30000000,"gas_used":0,
			"transaction_count":0,"base_fee_per_gas":null`
		// No logs_bloom and no extra_data: the fixture's empty block has neither.
		AssertJSON(t, MustOK(t, s.Get(t, blockPath("polygon", e))), `{`+common+`,"transactions":null}`)
		AssertJSON(t, MustOK(t, s.Get(t, blockPath("polygon", e+"&full_transactions=1"))), `{`+common+`,"transactions":[]}`)
	})
}

func TestBlock_Errors(t *testing.T) {
	s := MustOpenServer(t)
	ok := fmt.Sprintf("?block_number=%d", storetest.PolygonBlock)
	badBlock := "block_number must be an integer between 0 and 9223372036854775807"
	badBool := "full_transactions must be a boolean: true, false, 1 or 0"
	RunErrorCases(t, s, []ErrorCase{
		{Name: "Chain/ethereum", Path: blockPath("ethereum", ok), Status: 400, Detail: "chain must be one of: polygon"},
		{Name: "Chain/base", Path: blockPath("base", ok), Status: 400, Detail: "chain must be one of: polygon"},
		{Name: "Chain/solana", Path: blockPath("solana", ok), Status: 400, Detail: "chain must be one of: polygon"},
		{Name: "BlockNumber/missing", Path: blockPath("polygon", ""), Status: 400, Detail: "block_number is required"},
		{Name: "BlockNumber/missingWithFull", Path: blockPath("polygon", "?full_transactions=true"), Status: 400, Detail: "block_number is required"},
		{Name: "BlockNumber/empty", Path: blockPath("polygon", "?block_number="), Status: 400, Detail: badBlock},
		{Name: "BlockNumber/negative", Path: blockPath("polygon", "?block_number=-68000000"), Status: 400, Detail: badBlock},
		{Name: "BlockNumber/float", Path: blockPath("polygon", "?block_number=68000000.5"), Status: 400, Detail: badBlock},
		{Name: "BlockNumber/word", Path: blockPath("polygon", "?block_number=latest"), Status: 400, Detail: badBlock},
		{Name: "FullTransactions/yes", Path: blockPath("polygon", ok+"&full_transactions=yes"), Status: 400, Detail: badBool},
		{Name: "FullTransactions/empty", Path: blockPath("polygon", ok+"&full_transactions="), Status: 400, Detail: badBool},
		{Name: "FullTransactions/2", Path: blockPath("polygon", ok+"&full_transactions=2"), Status: 400, Detail: badBool},
		{Name: "FullTransactions/truthy", Path: blockPath("polygon", ok+"&full_transactions=truee"), Status: 400, Detail: badBool},
		{Name: "NotFound/unindexed", Path: blockPath("polygon", "?block_number=5"), Status: 404, Detail: "block"},
		{Name: "NotFound/ethereumNumber", Path: blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.EthereumBlock)), Status: 404, Detail: "block"},
	})
}

func latestPath(chain string) string { return "/api/v1/customer/" + chain + "/blocks/latest" }

func TestLatestBlock(t *testing.T) {
	s := MustOpenServer(t)
	t.Run("Polygon", func(t *testing.T) {
		AssertJSON(t, MustOK(t, s.Get(t, latestPath("polygon"))), `{"block_number":68000002}`)
	})
	t.Run("Ethereum", func(t *testing.T) {
		AssertJSON(t, MustOK(t, s.Get(t, latestPath("ethereum"))), `{"block_number":18000000}`)
	})
	t.Run("QueryIgnored", func(t *testing.T) {
		AssertJSON(t, MustOK(t, s.Get(t, latestPath("polygon")+"?limit=abc")), `{"block_number":68000002}`)
	})
	evm := "chain must be one of: ethereum, polygon, base, arbitrum, optimism, binance, avalanche, gnosis"
	cases := []ErrorCase{
		{Name: "Chain/solana", Path: latestPath("solana"), Status: 400, Detail: evm},
		{Name: "Chain/unknown", Path: latestPath("dogecoin"), Status: 400, Detail: evm},
	}
	for _, c := range []string{"base", "arbitrum", "optimism", "binance", "avalanche", "gnosis"} {
		cases = append(cases, ErrorCase{Name: "NotFound/" + c, Path: latestPath(c), Status: 404, Detail: c})
	}
	RunErrorCases(t, s, cases)
}
