package http_test

import (
	"bytes"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
)

// genKind says what the server must answer a generated request with the
// all-endpoints key.
type genKind int

const (
	// genServed is a request the document accepts: 200, or 404 where
	// nothing indexed answers it.
	genServed genKind = iota
	// genSchema breaks a rule of the document's schemas (type, enum,
	// pattern, bounds, required, oneOf, additionalProperties...): 400, and
	// the document itself must reject it.
	genSchema
	// genRule breaks a rule the document states in words only (a block
	// range over 100 blocks, a snapshot within the last hour...): 400.
	genRule
)

func (k genKind) String() string { return [...]string{"served", "schema", "rule"}[k] }

// genRequest is one request generated from the document.
type genRequest struct {
	name    string
	op      map[string]any
	method  string
	pattern string
	target  string // path and query
	body    *string
	kind    genKind
}

// Values of the fixture (internal/storetest) that requests name, so that
// valid requests find data; the first value of each is the one every
// request uses unless it varies that parameter.
var (
	fixtureParams = map[string][]string{
		"chain":            {"polygon"},
		"transaction_hash": {storetest.TxNested.Hex(), "0x" + strings.ToUpper(storetest.TxNested.Hex()[2:]), storetest.TxEthereum.Hex()},
		"block_number":     {fmt.Sprint(storetest.PolygonBlock), fmt.Sprint(storetest.PolygonEmptyBlock)},
		// The lengths' edges: 32 zero bytes are 32 characters, 32 bytes of
		// 0xff 44. Cutting or padding a valid address instead would not
		// decode to 32 bytes, a rule the document gives in words.
		"token_account": {storetest.WalletAcct.String(), storetest.OrphanAcct.String(), storetest.UnknownAcct.String(),
			chainquery.PublicKey{}.String(), chainquery.PublicKey(bytes.Repeat([]byte{0xff}, 32)).String()},
		// Wallet's SOL balance changed at 11:55Z and 12:05:30Z; the zero key's never.
		"account": {storetest.Wallet.String(), storetest.WalletAcct.String(), chainquery.PublicKey{}.String()},
		// Wallet has accounts; NewOwner one, from 12:05:30Z; the zero key none.
		"owner": {storetest.Wallet.String(), storetest.NewOwner.String(), chainquery.PublicKey{}.String()},
		// Now is 15:00Z; the fixture's balances are indexed up to 13:00Z.
		"datetime_filter": {"2025-06-01T12:30:00Z", "2025-06-01T14:00:00+01:00", "2025-06-01T13:50:00Z"},
	}
	// paramsBreakingPatterns are values that a pattern must reject (the
	// service refuses them) but that mutating a valid value would not
	// reach: off the grid, no date-time, or no calendar's.
	paramsBreakingPatterns = map[string][]string{
		"datetime_filter": {"2025-06-01T12:05:00Z", "2025-06-01T12:30:05Z", "2025-06-01 12:30:00Z", "2025-06-01",
			"0000-00-00T00:00:00Z", "2025-06-31T12:00:00Z", "2025-02-29T12:00:00Z", "2025-06-01T24:00:00Z", "2025-06-01T12:00:00+24:00"},
	}
	// paramsBreakingRules break rules the document gives in words.
	paramsBreakingRules = map[string][]string{
		"datetime_filter": {"2025-06-01T14:10:00Z", "2025-06-01T15:10:00+01:00", "2025-06-02T00:00:00Z"},
		// Whole numbers in range, but not written as decimal digits.
		"offset":       {"1.0", "1e1", "-0"},
		"limit":        {"1.0", "1e1"},
		"block_number": {fmt.Sprint(storetest.PolygonBlock) + ".0", "6.8e7"},
	}
	// paramsAtBounds are the largest values the service takes and values
	// just past them, named here rather than read from the schemas, so that
	// a document that loses or moves a bound is caught: the first value of
	// each list is valid, the others break the document's maximum.
	paramsAtBounds = map[string][]string{
		"offset":       {"9223372036854775807", "9223372036854775808", "18446744073709551616", "99999999999999999999999"},
		"block_number": {"9223372036854775807", "9223372036854775808", "18446744073709551616", "99999999999999999999999"},
	}
)

// TestOpenAPI_GeneratedRequests sends, for every operation of the served
// document, requests generated from its schemas: valid ones, with values
// drawn from enums, examples, defaults, bounds and the fixture, and invalid
// ones, each breaking one rule of a parameter or body schema. Each goes out
// without a key, with a key not enabled for the endpoint and with a key
// enabled for all. Every answer must have a status the document lists for
// the operation and a body that validates (Server.Do), and the status must
// fit the request: 401, 403, then 200 or 404 for valid requests and 400 for
// invalid ones. The document must reject every request generated to break
// its schemas, and accept every valid one.
func TestOpenAPI_GeneratedRequests(t *testing.T) {
	// A server that traces polygon only, as the hosted interface: the
	// traced operations' chain enums list polygon alone, and the other
	// chains are requests the document refuses (TestTracedChains).
	s := MustOpenServer(t)
	d := s.Doc(t)
	reqs := generateRequests(t, d)
	if len(reqs) < 100 || len(reqs) > 2000 {
		t.Fatalf("%d requests generated; expected some hundreds", len(reqs))
	}
	counts := map[genKind]int{}
	for _, g := range reqs {
		counts[g.kind]++
		t.Run(g.method+" "+g.pattern+"/"+g.kind.String()+"/"+g.name, func(t *testing.T) {
			var reqBody []byte
			if g.body != nil {
				reqBody = []byte(*g.body)
			}
			req, err := http.NewRequest(g.method, s.HTTP.URL+g.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g.body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			valid, why := d.validRequest(req, reqBody)
			switch {
			case g.kind == genServed && !valid:
				t.Errorf("the document rejects a valid request %s %s %s:%s", g.method, g.target, strOr(g.body), why)
			case g.kind == genSchema && valid:
				t.Errorf("the document accepts %s %s %s, generated to break it", g.method, g.target, strOr(g.body))
			case g.kind == genRule && !valid:
				// A 400 for a rule in words must be for a request the
				// schemas accept; otherwise the request breaks a schema.
				t.Errorf("the document rejects %s %s %s, generated to break a rule it gives in words only:%s", g.method, g.target, strOr(g.body), why)
			}

			keyed := len(asList(g.op["security"])) > 0 || g.op["security"] == nil
			for _, k := range []struct{ name, key string }{{"NoKey", NoKey}, {"LogsKey", s.LogsKey}, {"Key", s.Key}} {
				resp := s.Do(t, g.method, g.target, k.key, body(strOr(g.body)))
				want := []int{http.StatusBadRequest}
				switch {
				case keyed && k.key == NoKey:
					want = []int{http.StatusUnauthorized}
				case keyed && k.key == s.LogsKey && g.op["operationId"] != "getTransactionLogs" && g.op["operationId"] != "getStatus": // any key may ask the status
					want = []int{http.StatusForbidden}
				case g.kind == genServed:
					want = []int{http.StatusOK, http.StatusNotFound}
				}
				if !slices.Contains(want, resp.Status) {
					t.Errorf("%s %s %s with %s: status %d, want %v: %.300s", g.method, g.target, strOr(g.body), k.name, resp.Status, want, resp.Body)
				}
			}
		})
	}
	t.Logf("%d requests generated: %v", len(reqs), counts)
}

func strOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// docParam is one parameter of an operation.
type docParam struct {
	name, in string
	required bool
	schema   map[string]any
}

// generateRequests returns the requests of every operation, in a fixed order.
func generateRequests(t *testing.T, d *apiDoc) []genRequest {
	var keys []string
	ops := docOperations(d.raw)
	for k := range ops {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []genRequest
	for _, k := range keys {
		method, pattern, _ := strings.Cut(k, " ")
		op := ops[k]
		var params []docParam
		for _, p := range asList(op["parameters"]) {
			p := p.(map[string]any)
			if r, ok := p["$ref"].(string); ok {
				p = resolve(d.raw, r)
			}
			params = append(params, docParam{p["name"].(string), p["in"].(string), p["required"] == true, schemaOf(d.raw, p["schema"])})
		}
		valid := map[string][]string{}
		base := map[string]*string{}
		for _, p := range params {
			valid[p.name] = validStrings(p.name, p.schema)
			if len(valid[p.name]) == 0 {
				t.Fatalf("%s: no valid value for parameter %s", k, p.name)
			}
			if p.required {
				base[p.name] = &valid[p.name][0]
			}
		}
		var bodySchema map[string]any
		if rb, ok := op["requestBody"].(map[string]any); ok {
			bodySchema = schemaOf(d.raw, rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"])
		}
		var bodies []genBody
		if bodySchema != nil {
			bodies = generateBodies(d.raw, bodySchema)
		}

		add := func(name string, kind genKind, over map[string]*string, bodyText *string) {
			vals := map[string]*string{}
			for n, v := range base {
				vals[n] = v
			}
			for n, v := range over {
				vals[n] = v
			}
			target := pattern
			q := url.Values{}
			for _, p := range params {
				v := vals[p.name]
				switch {
				case p.in == "path" && v == nil:
					t.Fatalf("%s: path parameter %s has no value", k, p.name)
				case p.in == "path":
					target = strings.Replace(target, "{"+p.name+"}", url.PathEscape(*v), 1)
				case v != nil:
					q.Set(p.name, *v)
				}
			}
			if len(q) > 0 {
				target += "?" + q.Encode()
			}
			if bodyText == nil && len(bodies) > 0 {
				bodyText = &bodies[0].text
			}
			out = append(out, genRequest{name: name, op: op, method: method, pattern: pattern, target: target, body: bodyText, kind: kind})
		}

		add("base", genServed, nil, nil)
		for _, p := range params {
			vs := valid[p.name]
			if p.required {
				vs = vs[1:]
			}
			for _, v := range vs {
				add(p.name+"="+v, genServed, map[string]*string{p.name: &v}, nil)
			}
			if b := paramsAtBounds[p.name]; len(b) > 0 && !slices.Contains(vs, b[0]) {
				add(p.name+"="+b[0], genServed, map[string]*string{p.name: &b[0]}, nil)
			}
			for _, v := range invalidStrings(p.name, p.schema, valid[p.name][0]) {
				if v == "" && p.in == "path" {
					continue // an empty segment makes another path, one the document does not have
				}
				add(p.name+"="+v, genSchema, map[string]*string{p.name: &v}, nil)
			}
			for _, v := range paramsBreakingRules[p.name] {
				add(p.name+"="+v, genRule, map[string]*string{p.name: &v}, nil)
			}
			if p.required && p.in == "query" {
				add("no "+p.name, genSchema, map[string]*string{p.name: nil}, nil)
			}
		}
		for _, b := range bodies {
			add("body "+b.text, b.kind, nil, &b.text)
		}
	}
	return out
}

// schemaOf resolves a schema given as a reference.
func schemaOf(doc map[string]any, v any) map[string]any {
	s, _ := v.(map[string]any)
	if r, ok := s["$ref"].(string); ok {
		return resolve(doc, r)
	}
	return s
}

// validStrings returns valid values of a parameter: the fixture's first,
// then the schema's enum, examples, default and bounds, and strings of the
// shortest and longest allowed length.
func validStrings(name string, schema map[string]any) []string {
	var out []string
	add := func(v string) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, v := range fixtureParams[name] {
		add(v)
	}
	for _, v := range asList(schema["enum"]) {
		add(fmt.Sprint(v))
	}
	for _, v := range asList(schema["examples"]) {
		add(fmt.Sprint(v))
	}
	if v, ok := schema["default"]; ok {
		add(fmt.Sprint(v))
	}
	switch typ, _ := schemaType(schema); typ {
	case "integer":
		for _, b := range []string{"minimum", "maximum"} {
			if n, ok := bound(schema, b); ok { // exact: validRequest reads numbers as JSON Schema means them
				add(n.String())
			}
		}
	case "boolean":
		add("true")
		add("false")
	}
	return out
}

// schemaType returns the type of a schema other than "null", and whether
// null is allowed too.
func schemaType(schema map[string]any) (typ string, nullable bool) {
	switch t := schema["type"].(type) {
	case string:
		return t, t == "null"
	case []any:
		for _, x := range t {
			if x == "null" {
				nullable = true
			} else {
				typ = fmt.Sprint(x)
			}
		}
	}
	return typ, nullable
}

// invalidStrings returns values of a parameter that its schema rejects,
// made from the schema: wrong types, values past its bounds, values outside
// its enum, and mutations of the valid value v that break its pattern or
// length.
func invalidStrings(name string, schema map[string]any, v string) []string {
	var out []string
	add := func(x string) {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	switch typ, _ := schemaType(schema); typ {
	case "integer":
		add("abc")
		add("1.5")
		add("")
		if n, ok := bound(schema, "minimum"); ok {
			add(new(big.Int).Sub(n, big.NewInt(1)).String())
		}
		if n, ok := bound(schema, "maximum"); ok {
			add(new(big.Int).Add(n, big.NewInt(1)).String())
		}
		if b := paramsAtBounds[name]; len(b) > 0 {
			for _, x := range b[1:] {
				add(x)
			}
		}
	case "boolean":
		add("maybe")
		add("2")
		add("")
	case "string":
		if enum := asList(schema["enum"]); len(enum) > 0 {
			cands := []string{"solana", "nowhere", strings.ToUpper(fmt.Sprint(enum[0])), ""}
			if name == "chain" { // every other chain: a traced operation's enum lists only those traced
				for _, c := range chainquery.EVMChains {
					cands = append(cands, string(c))
				}
			}
			for _, x := range cands {
				if !slices.Contains(enum, any(x)) {
					add(x)
				}
			}
			break
		}
		var cands []string
		for _, c := range []string{"0", "O", "g", "!"} { // outside base58, hex, digits, or all
			if v != "" {
				cands = append(cands, v[:len(v)-1]+c, v+c)
			}
		}
		if v != "" {
			cands = append(cands, v[:len(v)-1], v[1:])
		}
		for _, b := range []string{"minLength", "maxLength"} {
			if n, ok := bound(schema, b); ok && v != "" {
				l := int(n.Int64())
				if b == "minLength" {
					l--
				} else {
					l++
				}
				if l >= 0 && l <= len(v) {
					cands = append(cands, v[:l])
				} else if l > len(v) {
					cands = append(cands, v+strings.Repeat(v[len(v)-1:], l-len(v)))
				}
			}
		}
		for _, c := range cands {
			if !stringValid(schema, c) {
				add(c)
			}
		}
		// Named as breaking: generated whatever the schema says, so that
		// a pattern loosened past them fails the test.
		for _, c := range paramsBreakingPatterns[name] {
			add(c)
		}
	}
	return out
}

// stringValid reports whether s meets a string schema's pattern and lengths
// (the document's patterns are RE2).
func stringValid(schema map[string]any, s string) bool {
	if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(s) {
		return false
	}
	n := len([]rune(s))
	if b, ok := bound(schema, "minLength"); ok && int64(n) < b.Int64() {
		return false
	}
	if b, ok := bound(schema, "maxLength"); ok && int64(n) > b.Int64() {
		return false
	}
	if enum := asList(schema["enum"]); len(enum) > 0 && !slices.Contains(enum, any(s)) {
		return false
	}
	return true
}

// bound returns a numeric keyword of a schema as an integer.
func bound(schema map[string]any, keyword string) (*big.Int, bool) {
	v, ok := schema[keyword]
	if !ok {
		return nil, false
	}
	n, ok := new(big.Int).SetString(fmt.Sprint(v), 10)
	return n, ok
}
