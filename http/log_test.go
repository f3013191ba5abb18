package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
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

const logsFilterPath = "/api/v1/customer/polygon/logs/filter"

// TestFilterLogs holds Filter Logs to Get Block Logs: with no condition its
// items are the range's blocks' logs, byte for byte, and each condition
// keeps those that meet it. The fixture block's five logs are Token's, log
// i with i topics, topic j of log i being H(TagTopic, 10i+j).
func TestFilterLogs(t *testing.T) {
	s := MustOpenServer(t)
	var all []json.RawMessage
	for _, n := range []uint64{storetest.PolygonBlock, storetest.PolygonEmptyBlock, storetest.PolygonLaterBlock} {
		all = append(all, rawItems(t, MustOK(t, s.Get(t, fmt.Sprintf("/api/v1/customer/polygon/blocks/logs?block_number=%d&limit=50", n))))...)
	}
	topic := func(i, j int) string { return storetest.H(storetest.TagTopic, byte(10*i+j)).Hex() }
	rng := fmt.Sprintf(`"from_block": %d, "to_block": %d`, storetest.PolygonBlock, storetest.PolygonLaterBlock)
	for _, c := range []struct {
		name, body string
		want       []int
	}{
		{"every log", `{` + rng + `}`, []int{0, 1, 2, 3, 4}},
		{"address, any case", `{` + rng + `, "address": "` + upper(storetest.Token) + `"}`, []int{0, 1, 2, 3, 4}},
		{"another address", `{` + rng + `, "address": ["` + storetest.Router.Hex() + `"]}`, nil},
		{"topic0 alternatives", `{` + rng + `, "topic0": ["` + topic(2, 0) + `", "` + topic(4, 0) + `"]}`, []int{2, 4}},
		{"topic2 alone", `{` + rng + `, "topic2": "` + topic(3, 2) + `"}`, []int{3}},
		{"positions ANDed", `{` + rng + `, "topic0": "` + topic(3, 0) + `", "topic1": "` + topic(4, 1) + `"}`, nil},
		{"null members", `{` + rng + `, "address": null, "topic0": null}`, []int{0, 1, 2, 3, 4}},
		{"datetime range", `{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04Z", "topic3": "` + topic(4, 3) + `"}`, []int{4}},
		// With an address or a topic0, any range: here from block 1 to
		// past the fixture, and a datetime range of years.
		{"address over a million blocks", `{"from_block": 1, "to_block": 99000000, "address": "` + storetest.Token.Hex() + `"}`, []int{0, 1, 2, 3, 4}},
		{"topic0 over years", `{"from_datetime": "2020-01-01T00:00:00Z", "to_datetime": "2026-01-01T00:00:00Z", "topic0": "` + topic(2, 0) + `"}`, []int{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := MustOK(t, s.Post(t, logsFilterPath+"?limit=50", c.body))
			l := decodeList(t, body)
			got := rawItems(t, body)
			if l.Count != len(c.want) || len(got) != len(c.want) {
				t.Fatalf("count %d, %d items; want %d: %s", l.Count, len(got), len(c.want), body)
			}
			for i, k := range c.want {
				AssertJSON(t, got[i], string(all[k]))
			}
		})
	}
	body := MustOK(t, s.Post(t, logsFilterPath+"?limit=2&offset=3", `{`+rng+`}`))
	if l := decodeList(t, body); l.Count != 5 || l.Offset != 3 || l.Limit != 2 || len(l.Result) != 2 || l.Result[0]["log_index"].(float64) != 3 {
		t.Fatalf("a page: %s", body)
	}

	RunErrorCases(t, s, []ErrorCase{
		{Name: "101 blocks", Method: http.MethodPost, Path: logsFilterPath, Body: `{"from_block": 1, "to_block": 101}`, Status: http.StatusBadRequest, Detail: "without an address or a topic0, a block range must not exceed 100 blocks"},
		{Name: "101 blocks, only a topic1", Method: http.MethodPost, Path: logsFilterPath, Body: `{"from_block": 1, "to_block": 101, "topic1": "` + topic(4, 1) + `"}`, Status: http.StatusBadRequest, Detail: "without an address or a topic0"},
		{Name: "an address, backwards", Method: http.MethodPost, Path: logsFilterPath, Body: `{"from_block": 101, "to_block": 1, "address": "` + storetest.Token.Hex() + `"}`, Status: http.StatusBadRequest, Detail: "to_block must be at least from_block"},
		{Name: "no range", Method: http.MethodPost, Path: logsFilterPath, Body: `{"address": "` + storetest.Token.Hex() + `"}`, Status: http.StatusBadRequest, Detail: "give exactly one range"},
		{Name: "a trace field", Method: http.MethodPost, Path: logsFilterPath, Body: `{` + rng + `, "to_address": null}`, Status: http.StatusBadRequest, Detail: `unknown field "to_address"`},
		{Name: "bad topic", Method: http.MethodPost, Path: logsFilterPath, Body: `{` + rng + `, "topic1": ["0x12"]}`, Status: http.StatusBadRequest, Detail: "topic1[0] must be a 0x-prefixed 32-byte hex hash"},
		{Name: "empty topic list", Method: http.MethodPost, Path: logsFilterPath, Body: `{` + rng + `, "topic0": []}`, Status: http.StatusBadRequest, Detail: "topic0 must not be an empty array"},
		{Name: "eleven addresses", Method: http.MethodPost, Path: logsFilterPath, Body: `{` + rng + `, "address": [` + elevenAddresses() + `]}`, Status: http.StatusBadRequest, Detail: "address must have at most 10 addresses"},
		{Name: "solana", Method: http.MethodPost, Path: "/api/v1/customer/solana/logs/filter", Body: `{` + rng + `}`, Status: http.StatusBadRequest, Detail: "chain must be one of"},
		{Name: "GET", Path: logsFilterPath, Status: http.StatusMethodNotAllowed, Detail: "POST"},
	})
}

func elevenAddresses() string {
	out := ""
	for i := range 11 {
		if i > 0 {
			out += ", "
		}
		out += `"` + storetest.Addr(byte(i+1)).Hex() + `"`
	}
	return out
}
