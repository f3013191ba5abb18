package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

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
