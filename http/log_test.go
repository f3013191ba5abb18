package http_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

func logsPath(chain string, hash string) string {
	return fmt.Sprintf("/api/v1/customer/%s/transactions/%s/logs", chain, hash)
}

func TestTransactionLogs_OK(t *testing.T) {
	s := MustOpenServer(t)
	nested := storetest.TxNested.Hex()

	t.Run("ZeroToFourTopicsGolden", func(t *testing.T) {
		body := MustOK(t, s.Get(t, logsPath("polygon", nested)))
		AssertGolden(t, "logs_tx_nested", body)
		l := decodeList(t, body)
		if l.Count != 5 || len(l.Result) != 5 {
			t.Fatalf("count %d, %d results, want 5", l.Count, len(l.Result))
		}
		for i, r := range l.Result {
			topics := r["topics"].([]any)
			if len(topics) != i {
				t.Errorf("log %d: %d topics, want %d", i, len(topics), i)
			}
			for j := 1; j <= 4; j++ {
				got := r[fmt.Sprintf("topic%d", j)]
				if j <= i && got != topics[j-1] {
					t.Errorf("log %d: topic%d = %v, want %v", i, j, got, topics[j-1])
				}
				if j > i && got != nil {
					t.Errorf("log %d: topic%d = %v, want null", i, j, got)
				}
			}
		}
		if !strings.Contains(string(body), `"topics":[],"topic1":null,"topic2":null,"topic3":null,"topic4":null`) {
			t.Errorf("a log without topics must have topics [] and null topic1..4: %s", body)
		}
	})

	t.Run("Envelope", func(t *testing.T) {
		body := MustOK(t, s.Get(t, logsPath("polygon", nested)+"?limit=2&offset=2"))
		l := decodeList(t, body)
		if l.TransactionHash != nested || l.Offset != 2 || l.Limit != 2 || l.Count != 5 || len(l.Result) != 2 {
			t.Fatalf("envelope: %s", body)
		}
		if l.Result[0]["log_index"].(float64) != 2 || l.Result[1]["log_index"].(float64) != 3 {
			t.Errorf("page holds log_index %v, %v; want 2, 3", l.Result[0]["log_index"], l.Result[1]["log_index"])
		}
		if !strings.HasPrefix(string(body), `{"transaction_hash":`) {
			t.Errorf("transaction_hash must come first: %s", body)
		}
	})

	t.Run("OffsetPastEnd", func(t *testing.T) {
		l := decodeList(t, MustOK(t, s.Get(t, logsPath("polygon", nested)+"?offset=10")))
		if l.Count != 5 || len(l.Result) != 0 || l.Offset != 10 || l.Limit != 10 {
			t.Errorf("count %d results %d offset %d limit %d", l.Count, len(l.Result), l.Offset, l.Limit)
		}
		// The largest offset is no error either: an empty page, the offset echoed exactly.
		body := MustOK(t, s.Get(t, logsPath("polygon", nested)+"?offset=9223372036854775807"))
		AssertJSON(t, body, `{"transaction_hash":"`+nested+`","offset":9223372036854775807,"limit":10,"result":[],"count":5}`)
	})

	t.Run("UppercaseHashEchoedLowercase", func(t *testing.T) {
		upperHash := "0x" + strings.ToUpper(nested[2:])
		l := decodeList(t, MustOK(t, s.Get(t, logsPath("polygon", upperHash))))
		if l.TransactionHash != nested || l.Count != 5 {
			t.Errorf("transaction_hash %s count %d", l.TransactionHash, l.Count)
		}
		if l.Result[0]["transaction_hash"] != nested {
			t.Errorf("result transaction_hash %v", l.Result[0]["transaction_hash"])
		}
	})

	t.Run("WithBlockNumber", func(t *testing.T) {
		l := decodeList(t, MustOK(t, s.Get(t, logsPath("polygon", nested)+fmt.Sprintf("?block_number=%d", storetest.PolygonBlock))))
		if l.Count != 5 {
			t.Errorf("count %d, want 5", l.Count)
		}
	})

	t.Run("IndexedWithoutLogs", func(t *testing.T) {
		body := MustOK(t, s.Get(t, logsPath("polygon", storetest.TxTransfer.Hex())))
		AssertJSON(t, body, `{"transaction_hash":"`+storetest.TxTransfer.Hex()+`","offset":0,"limit":10,"result":[],"count":0}`)
	})

	t.Run("Ethereum", func(t *testing.T) {
		body := MustOK(t, s.Get(t, logsPath("ethereum", storetest.TxEthereum.Hex())))
		topic := storetest.H(storetest.TagTopic, 99).Hex()
		AssertJSON(t, body, `{"transaction_hash":"`+storetest.TxEthereum.Hex()+`","offset":0,"limit":10,"result":[{
			"block_number":18000000,"timestamp":1693072199,"datetime":"2023-08-26T17:49:59",
			"transaction_hash":"`+storetest.TxEthereum.Hex()+`","transaction_index":0,
			"transaction_from":"`+storetest.EOA1.Hex()+`","transaction_to":"`+storetest.Token.Hex()+`",
			"log_index":0,"address":"`+storetest.Token.Hex()+`","data":"0x",
			"topics":["`+topic+`"],"topic1":"`+topic+`","topic2":null,"topic3":null,"topic4":null}],"count":1}`)
	})
}

func TestTransactionLogs_Errors(t *testing.T) {
	s := MustOpenServer(t)
	nested := storetest.TxNested.Hex()
	evm := "chain must be one of: ethereum, polygon, base, arbitrum, optimism, binance, avalanche, gnosis"
	badHash := "transaction_hash must be a 0x-prefixed 32-byte hex hash"
	badBlock := "block_number must be an integer between 0 and 9223372036854775807"
	RunErrorCases(t, s, []ErrorCase{
		{Name: "Chain/solana", Path: logsPath("solana", nested), Status: 400, Detail: evm},
		{Name: "Chain/unknown", Path: logsPath("bitcoin", nested), Status: 400, Detail: evm},
		{Name: "Chain/uppercase", Path: logsPath("POLYGON", nested), Status: 400, Detail: evm},
		{Name: "Hash/short", Path: logsPath("polygon", "0x1234"), Status: 400, Detail: badHash},
		{Name: "Hash/long", Path: logsPath("polygon", nested+"00"), Status: 400, Detail: badHash},
		{Name: "Hash/noPrefix", Path: logsPath("polygon", nested[2:]+"00"), Status: 400, Detail: badHash},
		{Name: "Hash/upperX", Path: logsPath("polygon", "0X"+nested[2:]), Status: 400, Detail: badHash},
		{Name: "Hash/notHex", Path: logsPath("polygon", "0x"+strings.Repeat("z", 64)), Status: 400, Detail: badHash},
		{Name: "Hash/address", Path: logsPath("polygon", storetest.EOA1.Hex()), Status: 400, Detail: badHash},
		{Name: "BlockNumber/negative", Path: logsPath("polygon", nested) + "?block_number=-1", Status: 400, Detail: badBlock},
		{Name: "BlockNumber/word", Path: logsPath("polygon", nested) + "?block_number=latest", Status: 400, Detail: badBlock},
		{Name: "BlockNumber/float", Path: logsPath("polygon", nested) + "?block_number=68000000.0", Status: 400, Detail: badBlock},
		{Name: "BlockNumber/hex", Path: logsPath("polygon", nested) + "?block_number=0x40d9900", Status: 400, Detail: badBlock},
		{Name: "BlockNumber/empty", Path: logsPath("polygon", nested) + "?block_number=", Status: 400, Detail: badBlock},
		{Name: "BlockNumber/overflow", Path: logsPath("polygon", nested) + "?block_number=9223372036854775808", Status: 400, Detail: badBlock},
		{Name: "Limit/0", Path: logsPath("polygon", nested) + "?limit=0", Status: 400, Detail: "limit must be an integer between 1 and 50"},
		{Name: "Limit/51", Path: logsPath("polygon", nested) + "?limit=51", Status: 400, Detail: "limit must be an integer between 1 and 50"},
		{Name: "Offset/negative", Path: logsPath("polygon", nested) + "?offset=-5", Status: 400, Detail: "offset must be an integer between 0 and 9223372036854775807"},
		{Name: "Offset/above2^63-1", Path: logsPath("polygon", nested) + "?offset=9223372036854775808", Status: 400, Detail: "offset must be an integer between 0 and 9223372036854775807"},
		{Name: "NotFound/unknownTx", Path: logsPath("polygon", storetest.H(storetest.TagTx, 200).Hex()), Status: 404, Detail: "transaction"},
		{Name: "NotFound/wrongBlock", Path: logsPath("polygon", nested) + fmt.Sprintf("?block_number=%d", storetest.PolygonEmptyBlock), Status: 404, Detail: "transaction"},
		{Name: "NotFound/otherChain", Path: logsPath("polygon", storetest.TxEthereum.Hex()), Status: 404, Detail: "transaction"},
		{Name: "NotFound/chainWithNothing", Path: logsPath("base", nested), Status: 404, Detail: "transaction"},
	})
}

// list decodes the envelope of Get Transaction Logs and Get Block Receipts.
type list struct {
	TransactionHash string           `json:"transaction_hash"`
	BlockNumber     uint64           `json:"block_number"`
	Offset          int              `json:"offset"`
	Limit           int              `json:"limit"`
	Result          []map[string]any `json:"result"`
	Count           int              `json:"count"`
}

func decodeList(tb testing.TB, body []byte) list {
	tb.Helper()
	var l list
	if err := json.Unmarshal(body, &l); err != nil {
		tb.Fatalf("decode: %v: %s", err, body)
	}
	if l.Result == nil {
		tb.Fatalf("result is null, want an array: %s", body)
	}
	return l
}
