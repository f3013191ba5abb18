package http_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// documentedStatus holds every status a request can get from a healthy
// store: anything else (a 500 from a panic or a store error on bad input)
// is a bug.
var documentedStatus = map[int]bool{200: true, 400: true, 401: true, 403: true, 404: true, 405: true, 413: true}

// checkFuzzResponse asserts the invariants every answer must keep, the
// OpenAPI document's among them.
func checkFuzzResponse(t *testing.T, doc *apiDoc, req *http.Request, reqBody []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	doc.check(t, req, reqBody, Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()})
	if !documentedStatus[rec.Code] {
		t.Fatalf("undocumented status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if rec.Code == http.StatusOK {
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("200 body is not JSON: %s", rec.Body)
		}
		return
	}
	var e map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, rec.Body)
	}
	if d, ok := e["detail"].(string); !ok || d == "" || len(e) != 1 {
		t.Fatalf("error body is not {\"detail\": \"...\"}: %s", rec.Body)
	}
	if rec.Code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "" {
		t.Fatalf("405 without an Allow header")
	}
}

func FuzzFilterTracesBody(f *testing.F) {
	s := MustOpenServer(f)
	h, doc := s.Handler(), s.Doc(f)
	eoa1, eoa2 := storetest.EOA1.Hex(), upper(storetest.EOA2)
	for _, seed := range []struct{ query, body string }{
		{"", fixtureRange},
		{"limit=50&offset=3", fixtureRange},
		{"limit=5&offset=9223372036854775807", fixtureRange},
		{"limit=0", fixtureRange},
		{"limit=51&offset=-1", `{}`},
		{"limit=%zz&;offset", fixtureRange},
		{"", blockBody(10, 109, "")},
		{"", blockBody(10, 110, "")},
		{"", blockBody(9223372036854775707, 9223372036854775806, "")},
		{"", `{"from_block": 18446744073709551615, "to_block": 18446744073709551615}`},
		{"", `{"from_block": -1, "to_block": 1.5}`},
		{"", `{"from_block": 1e400, "to_block": "2"}`},
		{"", `{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04Z"}`},
		{"", `{"from_datetime": "0001-01-01T00:00:00Z", "to_datetime": "9999-12-31T23:59:59.999999999+23:59"}`},
		{"", `{"from_datetime": "2025-03-01T00:00:00", "to_datetime": 5}`},
		{"", blockBody(storetest.PolygonBlock, storetest.PolygonLaterBlock, `, "from_address": ["`+eoa1+`", "`+eoa2+`"], "to_address": "`+storetest.Router.Hex()+`"`)},
		{"", blockBody(1, 2, `, "from_address": [], "to_address": [null, 1, {}]`)},
		{"", `{"fromBlock": 1, "toBlock": 2}`},
		{"", `{"from_block": 1, "from_block": 2, "to_block": 3}`},
		{"", `{"from_block": 1, "to_block": 2}{}`},
		{"", `[]`},
		{"", `null`},
		{"", ``},
		{"", `{"from_block": 1,`},
		{"", "{\"from_block\": 1, \"to_block\": 2, \"x\u0000\": 1}"},
		{"", `{"` + strings.Repeat("a", 100) + `": "\ud800"}`},
		{"", fixtureRange + strings.Repeat(" ", cqhttp.MaxBodyBytes)},
	} {
		f.Add(seed.query, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, query string, body []byte) {
		req := httptest.NewRequest(http.MethodPost, tracesPath, bytes.NewReader(body))
		req.URL.RawQuery = query
		req.Header.Set("apikey", s.Key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkFuzzResponse(t, doc, req, body, rec)
		if rec.Code == http.StatusOK {
			var l struct {
				Limit  int               `json:"limit"`
				Result []json.RawMessage `json:"result"`
				Count  int               `json:"count"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || l.Result == nil || len(l.Result) > l.Limit || l.Count < len(l.Result) {
				t.Fatalf("bad list (%v): %s", err, rec.Body)
			}
		}
	})
}

// fuzzRoutes build a path from two fuzzed segments.
var fuzzRoutes = []func(a, b string) string{
	func(a, b string) string { return "/api/v1/customer/" + a + "/transactions/" + b + "/logs" },
	func(a, b string) string { return "/api/v1/customer/" + a + "/blocks/receipts" },
	func(a, b string) string { return "/api/v1/customer/" + a + "/block" },
	func(a, b string) string { return "/api/v1/customer/" + a + "/blocks/latest" },
	func(a, b string) string { return "/api/v1/customer/solana/token-balances/token-account/" + b },
	func(a, b string) string { return "/api/v1/customer/" + a + "/" + b },
	func(a, b string) string { return "/" + a },
}

func FuzzQueryParams(f *testing.F) {
	s := MustOpenServer(f)
	h, doc := s.Handler(), s.Doc(f)
	nested, acct := storetest.TxNested.Hex(), storetest.WalletAcct.String()
	for _, seed := range []struct {
		route       uint8
		chain, path string
		query       string
		key         uint8
	}{
		{0, "polygon", nested, "", 0},
		{0, "polygon", nested, "block_number=68000000&limit=2&offset=1", 0},
		{0, "polygon", "0X" + nested[2:], "block_number=-1", 0},
		{0, "ethereum", storetest.TxEthereum.Hex(), "offset=9223372036854775807&limit=50", 1},
		{0, "solana", nested, "limit=abc", 2},
		{1, "polygon", "", "block_number=68000001", 0},
		{1, "polygon", "", "block_number=9223372036854775807&offset=9223372036854775807", 0},
		{1, "gnosis", "", "block_number=", 3},
		{2, "polygon", "", "block_number=68000000&full_transactions=TRUE", 0},
		{2, "polygon", "", "block_number=68000000&full_transactions=maybe", 4},
		{2, "ethereum", "", "", 0},
		{3, "polygon", "", "", 0},
		{3, "base", "", "", 0},
		{3, "..", "", "", 0},
		{4, "", acct, "datetime_filter=2025-06-01T12:10:00Z&include_metadata=1", 0},
		{4, "", acct, "datetime_filter=2025-06-01T12:10:00%2B02:00", 0},
		{4, "", acct, "datetime_filter=2025-06-01T14:50:00Z", 0},
		{4, "", acct, "datetime_filter=9999-12-31T23:50:00-23:59", 0},
		{4, "", acct, "datetime_filter=0000-01-01T00:00:00Z", 0},
		{4, "", strings.Repeat("1", 32), "datetime_filter=2025-06-01T12:00:00Z", 0},
		{4, "", strings.Repeat("z", 44), "datetime_filter=2025-06-01T12:00:00Z", 0},
		{5, "polygon", "traces", "", 0},
		{6, "healthz", "", "", 5},
		{6, "openapi.json", "", "", 0},
		{6, "", "", "", 0},
	} {
		f.Add(seed.route, seed.chain, seed.path, seed.query, seed.key)
	}
	keys := []string{s.Key, s.LogsKey, "", s.RevokedKey}
	f.Fuzz(func(t *testing.T, route uint8, a, b, query string, key uint8) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path = fuzzRoutes[int(route)%len(fuzzRoutes)](a, b)
		req.URL.RawQuery = query
		if key&4 != 0 {
			req.Method = http.MethodPost
		}
		if k := keys[int(key)%len(keys)]; k != "" {
			req.Header.Set("apikey", k)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkFuzzResponse(t, doc, req, nil, rec)
	})
}
