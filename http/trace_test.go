package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

const tracesPath = "/api/v1/customer/polygon/traces/filter"

// upper returns a's hex with uppercase digits, to show that requests ignore
// case.
func upper(a chainquery.Address) string { return "0x" + strings.ToUpper(a.Hex()[2:]) }

// blockBody is a Filter Traces body for a block range.
func blockBody(from, to uint64, extra string) string {
	return fmt.Sprintf(`{"from_block": %d, "to_block": %d%s}`, from, to, extra)
}

// fixtureRange spans the three polygon fixture blocks.
var fixtureRange = blockBody(storetest.PolygonBlock, storetest.PolygonLaterBlock, "")

// traceList decodes a Filter Traces answer.
type traceList struct {
	Offset int              `json:"offset"`
	Limit  int              `json:"limit"`
	Result []map[string]any `json:"result"`
	Count  int              `json:"count"`
}

func decodeTraces(tb testing.TB, body []byte) traceList {
	tb.Helper()
	var l traceList
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.UseNumber()
	if err := d.Decode(&l); err != nil {
		tb.Fatalf("decode: %v: %s", err, body)
	}
	if l.Result == nil {
		tb.Fatalf("result is null, want an array: %s", body)
	}
	return l
}

// field returns the named field of every trace, as text.
func (l traceList) field(name string) []string {
	out := make([]string, len(l.Result))
	for i, r := range l.Result {
		out[i] = fmt.Sprint(r[name])
	}
	return out
}

func TestFilterTraces_OK(t *testing.T) {
	s := MustOpenServer(t)

	t.Run("FullBlockGolden", func(t *testing.T) {
		body := MustOK(t, s.Post(t, tracesPath+"?limit=50", blockBody(storetest.PolygonBlock, storetest.PolygonBlock, "")))
		AssertGolden(t, "traces_block_68000000", body)
		l := decodeTraces(t, body)
		if l.Count != storetest.PolygonBlockTraces || len(l.Result) != storetest.PolygonBlockTraces {
			t.Fatalf("count %d, %d results, want %d", l.Count, len(l.Result), storetest.PolygonBlockTraces)
		}
	})

	t.Run("Ordering", func(t *testing.T) {
		l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath+"?limit=50", fixtureRange)))
		var got []string
		for _, r := range l.Result {
			got = append(got, fmt.Sprintf("%v/%v/%v", r["block_number"], r["transaction_index"], r["trace_address"]))
		}
		want := []string{"68000000/0/", "68000000/0/0"}
		for i := 0; i < storetest.NestedSubcalls; i++ { // "0.2" before "0.10"
			want = append(want, fmt.Sprintf("68000000/0/0.%d", i))
		}
		want = append(want, "68000000/1/", "68000000/1/0", "68000000/2/", "68000000/2/0",
			"68000000/3/", "68000000/3/0", "68000000/4/", "68000002/0/")
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("order:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("Fields", func(t *testing.T) {
		l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath+"?limit=50", blockBody(storetest.PolygonBlock, storetest.PolygonBlock, ""))))
		byKey := map[string]map[string]any{}
		for _, r := range l.Result {
			byKey[fmt.Sprintf("%v/%v", r["transaction_index"], r["trace_address"])] = r
		}
		check := func(key, field string, want any) {
			t.Helper()
			if got := byKey[key][field]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("trace %s: %s = %v, want %v", key, field, got, want)
			}
		}
		check("0/", "datetime", "2025-03-01T00:00:00")
		check("0/", "timestamp", storetest.PolygonTime)
		check("0/", "trace_address", "")
		check("0/", "function_signature", "0xa9059cbb")
		check("0/", "output", "0x0001")
		check("0/", "error", nil)
		check("0/", "transaction_from", storetest.EOA1.Hex())
		check("0/0", "call_type", "delegatecall")
		check("0/0", "function_signature", "0x0102") // input shorter than 4 bytes
		check("0/0.0", "call_type", "staticcall")
		check("0/0.1", "error", "execution reverted")
		check("0/0.1", "transaction_status", true)
		check("0/0.1", "gas_refund", 20000) // failed call without gas_used
		check("0/0.1", "output", "0x")
		check("0/0.10", "value", "10")
		check("1/", "transaction_status", false)
		check("1/0", "error", "out of gas")
		check("1/0", "gas_refund", 50000)
		check("2/", "transaction_to", nil) // the transaction created a contract
		check("2/", "type", "create")
		check("2/", "call_type", "create")
		check("2/", "to_address", storetest.Created.Hex())
		check("2/0", "value", "1000000000000000000")
		check("3/0", "type", "suicide")
		check("3/0", "call_type", "call")
		check("3/0", "value", "123456789012345678901234567890")
		check("3/0", "input", "0x")
		check("3/0", "function_signature", "0x")
		check("3/0", "gas", 0)
		check("4/", "value", "25000000000000000000")
		check("4/", "version", 0)
	})

	t.Run("DefaultPage", func(t *testing.T) {
		l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath, fixtureRange)))
		if l.Offset != 0 || l.Limit != 10 || len(l.Result) != 10 || l.Count != storetest.PolygonBlockTraces+1 {
			t.Errorf("offset %d limit %d results %d count %d", l.Offset, l.Limit, len(l.Result), l.Count)
		}
	})

	t.Run("CountIsTotal", func(t *testing.T) {
		total := storetest.PolygonBlockTraces + 1
		for _, tc := range []struct {
			query  string
			offset int
			limit  int
			n      int
			first  string // trace_address of the first result
		}{
			{"?limit=5", 0, 5, 5, ""},
			{"?limit=5&offset=5", 5, 5, 5, "0.3"},
			{"?limit=5&offset=20", 20, 5, 1, ""},
			{"?limit=5&offset=21", 21, 5, 0, ""},
			{"?limit=50&offset=1000", 1000, 50, 0, ""},
		} {
			t.Run(tc.query, func(t *testing.T) {
				l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath+tc.query, fixtureRange)))
				if l.Offset != tc.offset || l.Limit != tc.limit || len(l.Result) != tc.n || l.Count != total {
					t.Fatalf("offset %d limit %d results %d count %d, want %d %d %d %d", l.Offset, l.Limit, len(l.Result), l.Count, tc.offset, tc.limit, tc.n, total)
				}
				if tc.n > 0 && l.Result[0]["trace_address"] != tc.first {
					t.Errorf("first trace_address %v, want %q", l.Result[0]["trace_address"], tc.first)
				}
			})
		}
	})

	t.Run("BlockRangeBounds", func(t *testing.T) {
		// 100 blocks, both ends inclusive: valid, and nothing is indexed there.
		l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath, blockBody(10, 109, ""))))
		if l.Count != 0 || len(l.Result) != 0 {
			t.Errorf("count %d results %d, want 0 0", l.Count, len(l.Result))
		}
		l = decodeTraces(t, MustOK(t, s.Post(t, tracesPath, blockBody(storetest.PolygonLaterBlock, storetest.PolygonLaterBlock+99, ""))))
		if l.Count != 1 {
			t.Errorf("count %d, want 1", l.Count)
		}
	})

	eoa1, eoa2 := storetest.EOA1.Hex(), storetest.EOA2.Hex()
	router, token := storetest.Router.Hex(), storetest.Token.Hex()
	for _, tc := range []struct {
		name   string
		extra  string
		count  int
		checks map[string]string // field -> value every result must have
	}{
		{"FromOne", `, "from_address": "` + upper(storetest.EOA1) + `"`, 3, map[string]string{"from_address": eoa1}},
		{"FromOneElementArray", `, "from_address": ["` + eoa1 + `"]`, 3, map[string]string{"from_address": eoa1}},
		{"FromDuplicates", `, "from_address": ["` + eoa1 + `", "` + upper(storetest.EOA1) + `"]`, 3, nil},
		{"FromEitherOf", `, "from_address": ["` + eoa1 + `", "` + upper(storetest.EOA2) + `"]`, 6, nil},
		{"ToOne", `, "to_address": "` + upper(storetest.Token) + `"`, storetest.NestedSubcalls - 2 + 1, map[string]string{"to_address": token}},
		{"ToEitherOf", `, "to_address": ["` + storetest.Oracle.Hex() + `", "` + storetest.Failing.Hex() + `"]`, 3, nil},
		{"FromAndTo", `, "from_address": "` + eoa1 + `", "to_address": "` + router + `"`, 1, map[string]string{"from_address": eoa1, "to_address": router, "trace_address": ""}},
		{"FromAndToOtherBlock", `, "from_address": "` + eoa2 + `", "to_address": "` + router + `"`, 1, map[string]string{"block_number": "68000002"}},
		{"FromAndToNoMatch", `, "from_address": "` + eoa1 + `", "to_address": "` + eoa2 + `"`, 0, nil},
		{"FromRouterToToken", `, "from_address": "` + router + `", "to_address": "` + token + `"`, storetest.NestedSubcalls - 2, nil},
		{"TenAddresses", `, "from_address": ["` + eoa1 + `"` + strings.Repeat(`, "`+storetest.Addr(0x99).Hex()+`"`, 9) + `]`, 3, nil},
	} {
		t.Run("Address/"+tc.name, func(t *testing.T) {
			body := blockBody(storetest.PolygonBlock, storetest.PolygonLaterBlock, tc.extra)
			l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath+"?limit=50", body)))
			if l.Count != tc.count || len(l.Result) != tc.count {
				t.Fatalf("count %d, %d results, want %d", l.Count, len(l.Result), tc.count)
			}
			for field, want := range tc.checks {
				for i, got := range l.field(field) {
					if got != want {
						t.Errorf("result %d: %s = %s, want %s", i, field, got, want)
					}
				}
			}
		})
	}

	for _, tc := range []struct {
		name     string
		from, to string
		count    int
	}{
		{"AllThreeBlocks", "2025-03-01T00:00:00Z", "2025-03-01T00:00:04Z", storetest.PolygonBlockTraces + 1},
		{"FirstTwoBlocks", "2025-03-01T00:00:00Z", "2025-03-01T00:00:02Z", storetest.PolygonBlockTraces},
		{"BothEndsInclusive", "2025-03-01T00:00:04Z", "2025-03-01T00:00:04Z", 1},
		{"Offsets", "2025-03-01T01:00:01+01:00", "2025-02-28T19:00:04-05:00", 1},
		{"FractionalSeconds", "2025-03-01T00:00:03.5Z", "2025-03-01T00:00:04.000Z", 1},
		{"BeforeAnything", "2025-01-01T00:00:00Z", "2025-02-28T23:59:59Z", 0},
		{"WideRange", "2025-01-01T00:00:00Z", "2030-01-01T00:00:00Z", storetest.PolygonBlockTraces + 1},
	} {
		t.Run("Datetime/"+tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"from_datetime": %q, "to_datetime": %q}`, tc.from, tc.to)
			l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath+"?limit=50", body)))
			if l.Count != tc.count || len(l.Result) != tc.count {
				t.Errorf("count %d, %d results, want %d", l.Count, len(l.Result), tc.count)
			}
		})
	}

	t.Run("NullMeansAbsent", func(t *testing.T) {
		body := blockBody(storetest.PolygonBlock, storetest.PolygonLaterBlock, `, "from_datetime": null, "to_address": null`)
		l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath+"?limit=1", body)))
		if l.Count != storetest.PolygonBlockTraces+1 {
			t.Errorf("count %d", l.Count)
		}
	})

	t.Run("BodyOfExactly64KiB", func(t *testing.T) {
		body := fixtureRange
		body += strings.Repeat(" ", cqhttp.MaxBodyBytes-len(body))
		MustOK(t, s.Post(t, tracesPath, body))
	})
}

// TestFilterTraces_HistoryStart checks that blocks stamped before the
// chain's trace history start are never served, by default and when
// configured.
func TestFilterTraces_HistoryStart(t *testing.T) {
	// A polygon block from the last second of 2024, before the default start.
	old := storetest.Blocks()[chainquery.Polygon][2]
	const oldNumber = 67_000_000
	old.Block.Number = oldNumber
	old.Block.Hash = storetest.H(0x01, 0x01)
	old.Block.Timestamp = time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	old.Transactions[0].BlockNumber = oldNumber
	old.Transactions[0].Hash = storetest.H(storetest.TagTx, 0x42)
	old.Traces[0].BlockNumber = oldNumber

	open := func(t *testing.T, edit ...func(*cqhttp.Config)) *Server {
		s := MustOpenServer(t, edit...)
		if err := s.DB.WriteBlocks(context.Background(), chainquery.Polygon, []*chainquery.BlockData{old}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	count := func(t *testing.T, s *Server, body string) int {
		t.Helper()
		return decodeTraces(t, MustOK(t, s.Post(t, tracesPath, body))).Count
	}
	oldRange := blockBody(oldNumber-50, oldNumber+49, "")
	wideTimes := `{"from_datetime": "2024-12-01T00:00:00Z", "to_datetime": "2025-12-01T00:00:00Z"}`

	t.Run("Default", func(t *testing.T) {
		s := open(t)
		if n := count(t, s, oldRange); n != 0 {
			t.Errorf("block range: count %d, want 0", n)
		}
		if n := count(t, s, wideTimes); n != storetest.PolygonBlockTraces+1 {
			t.Errorf("datetime range: count %d, want %d", n, storetest.PolygonBlockTraces+1)
		}
	})
	t.Run("Configured", func(t *testing.T) {
		start := map[chainquery.Chain]time.Time{chainquery.Polygon: time.Unix(storetest.PolygonEmptyTime, 0)}
		s := open(t, func(c *cqhttp.Config) { c.TraceStart = start })
		start[chainquery.Polygon] = time.Time{} // the server keeps its own copy
		if n := count(t, s, fixtureRange); n != 1 {
			t.Errorf("block range: count %d, want 1 (only the later block)", n)
		}
		if n := count(t, s, wideTimes); n != 1 {
			t.Errorf("datetime range: count %d, want 1", n)
		}
	})
	t.Run("NoBound", func(t *testing.T) {
		s := open(t, func(c *cqhttp.Config) { c.TraceStart = map[chainquery.Chain]time.Time{} })
		if n := count(t, s, oldRange); n != 1 {
			t.Errorf("block range: count %d, want 1", n)
		}
	})
}

func TestFilterTraces_Errors(t *testing.T) {
	s := MustOpenServer(t)
	elevenAddrs := `["` + strings.TrimSuffix(strings.Repeat(storetest.EOA1.Hex()+`", "`, 11), `", "`) + `"]`
	post := func(name, query, body string, status int, detail string) ErrorCase {
		return ErrorCase{Name: name, Method: http.MethodPost, Path: tracesPath + query, Body: body, Status: status, Detail: detail}
	}
	badBlock := "from_block must be an integer between 0 and 9223372036854775807"
	cases := []ErrorCase{
		{Name: "Chain/ethereum", Method: http.MethodPost, Path: "/api/v1/customer/ethereum/traces/filter", Body: fixtureRange, Status: 400, Detail: "chain must be one of: polygon"},
		{Name: "Chain/solana", Method: http.MethodPost, Path: "/api/v1/customer/solana/traces/filter", Body: fixtureRange, Status: 400, Detail: "chain must be one of: polygon"},
		{Name: "Chain/Polygon", Method: http.MethodPost, Path: "/api/v1/customer/Polygon/traces/filter", Body: fixtureRange, Status: 400, Detail: "chain must be one of: polygon"},
		{Name: "Chain/unknown", Method: http.MethodPost, Path: "/api/v1/customer/bitcoin/traces/filter", Body: fixtureRange, Status: 400, Detail: "chain must be one of: polygon"},
		post("Limit/0", "?limit=0", fixtureRange, 400, "limit must be an integer between 1 and 50"),
		post("Limit/51", "?limit=51", fixtureRange, 400, "limit must be an integer between 1 and 50"),
		post("Limit/negative", "?limit=-1", fixtureRange, 400, "limit must be an integer between 1 and 50"),
		post("Limit/float", "?limit=1.5", fixtureRange, 400, "limit must be an integer between 1 and 50"),
		post("Limit/word", "?limit=ten", fixtureRange, 400, "limit must be an integer between 1 and 50"),
		post("Offset/negative", "?offset=-1", fixtureRange, 400, "offset must be an integer between 0 and 9223372036854775807"),
		post("Offset/word", "?offset=x", fixtureRange, 400, "offset must be an integer between 0 and 9223372036854775807"),
		post("Offset/huge", "?offset=99999999999999999999999", fixtureRange, 400, "offset must be an integer between 0 and 9223372036854775807"),
		post("Limit/empty", "?limit=", fixtureRange, 400, "limit must be an integer between 1 and 50"),
		post("Body/missing", "", "", 400, "request body is required"),
		post("Body/whitespace", "", " \n\t ", 400, "request body is required"),
		post("Body/truncated", "", `{"from_block": 1,`, 400, "request body is not valid JSON"),
		post("Body/unquotedKey", "", `{from_block: 1, to_block: 2}`, 400, "request body is not valid JSON"),
		post("Body/trailingData", "", fixtureRange+` {}`, 400, "request body is not valid JSON"),
		post("Body/notJSON", "", `from_block=1&to_block=2`, 400, "request body is not valid JSON"),
		post("Body/array", "", `[{"from_block": 1, "to_block": 2}]`, 400, "request body must be a JSON object"),
		post("Body/null", "", `null`, 400, "request body must be a JSON object"),
		post("Body/string", "", `"from_block"`, 400, "request body must be a JSON object"),
		post("Body/unknownField", "", `{"fromBlock": 1, "toBlock": 2}`, 400, `unknown field "fromBlock"`),
		post("Body/unknownFieldBesideKnown", "", blockBody(1, 2, `, "limit": 5`), 400, `unknown field "limit"`),
		post("Body/fieldNameCase", "", `{"FROM_BLOCK": 1, "to_block": 2}`, 400, `unknown field "FROM_BLOCK"`),
		post("Body/over64KiB", "", fixtureRange+strings.Repeat(" ", cqhttp.MaxBodyBytes), 413, "request body must not exceed 65536 bytes"),
		post("Body/1MiB", "", fixtureRange+strings.Repeat(" ", 1<<20), 413, "request body must not exceed 65536 bytes"),
		post("Body/4MiB", "", `{"from_address": "`+strings.Repeat("a", 4<<20)+`"}`, 413, "request body must not exceed 65536 bytes"),
		post("FromBlock/string", "", `{"from_block": "1", "to_block": 2}`, 400, badBlock),
		post("FromBlock/float", "", `{"from_block": 1.5, "to_block": 2}`, 400, badBlock),
		post("FromBlock/integralFloat", "", `{"from_block": 1.0, "to_block": 2}`, 400, badBlock),
		post("FromBlock/exponent", "", `{"from_block": 1e2, "to_block": 200}`, 400, badBlock),
		post("FromBlock/negative", "", `{"from_block": -1, "to_block": 2}`, 400, badBlock),
		post("FromBlock/bool", "", `{"from_block": true, "to_block": 2}`, 400, badBlock),
		post("FromBlock/array", "", `{"from_block": [1], "to_block": 2}`, 400, badBlock),
		post("FromBlock/object", "", `{"from_block": {}, "to_block": 2}`, 400, badBlock),
		post("FromBlock/overflow", "", `{"from_block": 9223372036854775808, "to_block": 9223372036854775808}`, 400, badBlock),
		post("ToBlock/float", "", `{"from_block": 1, "to_block": 2.5}`, 400, "to_block must be an integer between 0 and 9223372036854775807"),
		post("ToBlock/negative", "", `{"from_block": 1, "to_block": -2}`, 400, "to_block must be an integer between 0 and 9223372036854775807"),
		post("ToBlock/string", "", `{"from_block": 1, "to_block": "two"}`, 400, "to_block must be an integer between 0 and 9223372036854775807"),
		post("FromDatetime/number", "", `{"from_datetime": 1740787200, "to_datetime": "2025-03-01T00:00:00Z"}`, 400, "from_datetime must be a string"),
		post("FromDatetime/noZone", "", `{"from_datetime": "2025-03-01T00:00:00", "to_datetime": "2025-03-01T00:00:04Z"}`, 400, "from_datetime must be an ISO 8601 date-time with a timezone"),
		post("FromDatetime/dateOnly", "", `{"from_datetime": "2025-03-01", "to_datetime": "2025-03-01T00:00:04Z"}`, 400, "from_datetime must be an ISO 8601 date-time with a timezone"),
		post("FromDatetime/badMonth", "", `{"from_datetime": "2025-13-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04Z"}`, 400, "from_datetime is not a valid date-time"),
		post("ToDatetime/noZone", "", `{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04"}`, 400, "to_datetime must be an ISO 8601 date-time with a timezone"),
		post("ToDatetime/lowercaseZ", "", `{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04z"}`, 400, "to_datetime must be an ISO 8601 date-time with a timezone"),
		post("ToDatetime/bool", "", `{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": false}`, 400, "to_datetime must be a string"),
		post("FromAddress/number", "", blockBody(1, 2, `, "from_address": 42`), 400, "from_address must be an address string or an array"),
		post("FromAddress/object", "", blockBody(1, 2, `, "from_address": {"a": 1}`), 400, "from_address must be an address string or an array"),
		post("FromAddress/arrayOfNumbers", "", blockBody(1, 2, `, "from_address": [1, 2]`), 400, "from_address must be an address string or an array"),
		post("FromAddress/emptyArray", "", blockBody(1, 2, `, "from_address": []`), 400, "from_address must not be an empty array"),
		post("FromAddress/eleven", "", blockBody(1, 2, `, "from_address": `+elevenAddrs), 400, "from_address must have at most 10 addresses"),
		post("FromAddress/short", "", blockBody(1, 2, `, "from_address": "0x1234"`), 400, "from_address must be a 0x-prefixed 20-byte hex address"),
		post("FromAddress/noPrefix", "", blockBody(1, 2, `, "from_address": "`+storetest.EOA1.Hex()[2:]+`00"`), 400, "from_address must be a 0x-prefixed"),
		post("FromAddress/upperX", "", blockBody(1, 2, `, "from_address": "0X`+storetest.EOA1.Hex()[2:]+`"`), 400, "from_address must be a 0x-prefixed"),
		post("FromAddress/notHex", "", blockBody(1, 2, `, "from_address": "0x`+strings.Repeat("g", 40)+`"`), 400, "from_address must be a 0x-prefixed"),
		post("FromAddress/emptyString", "", blockBody(1, 2, `, "from_address": ""`), 400, "from_address must be a 0x-prefixed"),
		post("FromAddress/secondBad", "", blockBody(1, 2, `, "from_address": ["`+storetest.EOA1.Hex()+`", "0x12"]`), 400, "from_address[1] must be a 0x-prefixed"),
		post("ToAddress/emptyArray", "", blockBody(1, 2, `, "to_address": []`), 400, "to_address must not be an empty array"),
		post("ToAddress/eleven", "", blockBody(1, 2, `, "to_address": `+elevenAddrs), 400, "to_address must have at most 10 addresses"),
		post("ToAddress/bad", "", blockBody(1, 2, `, "to_address": "0xzz"`), 400, "to_address must be a 0x-prefixed"),
		post("ToAddress/bool", "", blockBody(1, 2, `, "to_address": true`), 400, "to_address must be an address string or an array"),
		post("Range/neither", "", `{}`, 400, "give exactly one range"),
		post("Range/onlyAddresses", "", `{"from_address": "`+storetest.EOA1.Hex()+`"}`, 400, "give exactly one range"),
		post("Range/both", "", `{"from_block": 1, "to_block": 2, "from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04Z"}`, 400, "not both"),
		post("Range/blockAndOneDatetime", "", blockBody(1, 2, `, "to_datetime": "2025-03-01T00:00:04Z"`), 400, "not both"),
		post("Range/onlyFromBlock", "", `{"from_block": 1}`, 400, "to_block is required with from_block"),
		post("Range/onlyToBlock", "", `{"to_block": 1}`, 400, "from_block is required with to_block"),
		post("Range/onlyFromDatetime", "", `{"from_datetime": "2025-03-01T00:00:00Z"}`, 400, "to_datetime is required with from_datetime"),
		post("Range/onlyToDatetime", "", `{"to_datetime": "2025-03-01T00:00:00Z"}`, 400, "from_datetime is required with to_datetime"),
		post("Range/toBeforeFrom", "", blockBody(10, 9, ""), 400, "to_block must be at least from_block"),
		post("Range/101Blocks", "", blockBody(10, 110, ""), 400, "block range must not exceed 100 blocks"),
		post("Range/101BlocksAtFixture", "", blockBody(storetest.PolygonBlock, storetest.PolygonBlock+100, ""), 400, "block range must not exceed 100 blocks"),
		post("Range/toDatetimeBeforeFrom", "", `{"from_datetime": "2025-03-01T00:00:04Z", "to_datetime": "2025-03-01T00:00:03Z"}`, 400, "to_datetime must be at least from_datetime"),
		post("Range/toDatetimeBeforeFromByZone", "", `{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:30:00+01:00"}`, 400, "to_datetime must be at least from_datetime"),
	}
	RunErrorCases(t, s, cases)
}

// TestFilterTraces_BigValues checks that a value above 64 bits stays exact:
// it is a decimal string, never a JSON number.
func TestFilterTraces_BigValues(t *testing.T) {
	s := MustOpenServer(t)
	body := blockBody(storetest.PolygonBlock, storetest.PolygonBlock, `, "from_address": "`+storetest.Doomed.Hex()+`"`)
	l := decodeTraces(t, MustOK(t, s.Post(t, tracesPath, body)))
	if len(l.Result) != 1 {
		t.Fatalf("%d results, want 1", len(l.Result))
	}
	want, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	if got, ok := l.Result[0]["value"].(string); !ok || got != want.String() {
		t.Errorf("value = %#v, want the string %q", l.Result[0]["value"], want)
	}
}
