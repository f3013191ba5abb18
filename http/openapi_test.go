package http_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// openAPI fetches and decodes the document the server serves, without a key.
func openAPI(t *testing.T, s *Server) map[string]any {
	t.Helper()
	body := MustOK(t, s.Do(t, http.MethodGet, "/openapi.json", NoKey, nil))
	var doc map[string]any
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("the OpenAPI document is not JSON: %v", err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	return doc
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// docOperations returns "METHOD pattern" of every operation of the document.
func docOperations(doc map[string]any) map[string]map[string]any {
	ops := map[string]map[string]any{}
	for path, item := range doc["paths"].(map[string]any) {
		for _, m := range httpMethods {
			if op, ok := item.(map[string]any)[m]; ok {
				ops[strings.ToUpper(m)+" "+path] = op.(map[string]any)
			}
		}
	}
	return ops
}

func TestOpenAPI_MatchesRoutes(t *testing.T) {
	s := MustOpenServer(t)
	doc := openAPI(t, s)
	ops := docOperations(doc)

	var routes, documented []string
	for _, r := range cqhttp.RouteTable() {
		routes = append(routes, r[0]+" "+r[1])
	}
	for k := range ops {
		documented = append(documented, k)
	}
	sort.Strings(routes)
	sort.Strings(documented)
	if strings.Join(routes, "\n") != strings.Join(documented, "\n") {
		t.Fatalf("document and route table differ:\nroutes:\n%s\ndocument:\n%s", strings.Join(routes, "\n"), strings.Join(documented, "\n"))
	}

	// Every documented operation is really served: without a key it answers
	// 401 (or 200 where no key is needed), never 404 or 405; other methods
	// on its path get a 405 whose Allow header lists the documented ones.
	samples := map[string]string{
		"chain":            "",
		"transaction_hash": storetest.TxNested.Hex(),
		"token_account":    storetest.WalletAcct.String(),
	}
	allowed := map[string][]string{}
	for k := range ops {
		method, path, _ := strings.Cut(k, " ")
		allowed[path] = append(allowed[path], method)
	}
	for k, op := range ops {
		t.Run(k, func(t *testing.T) {
			method, pattern, _ := strings.Cut(k, " ")
			params := map[string]map[string]any{}
			for _, p := range asList(op["parameters"]) {
				p := p.(map[string]any)
				if p["in"] == "path" {
					params[p["name"].(string)] = p
				}
			}
			path := regexp.MustCompile(`\{([a-z_]+)\}`).ReplaceAllStringFunc(pattern, func(m string) string {
				name := m[1 : len(m)-1]
				p, ok := params[name]
				if !ok {
					t.Errorf("path parameter %s is not documented", name)
					return "x"
				}
				delete(params, name)
				if p["required"] != true {
					t.Errorf("path parameter %s must be required", name)
				}
				if name == "chain" {
					return fmt.Sprint(p["schema"].(map[string]any)["enum"].([]any)[0])
				}
				return samples[name]
			})
			for name := range params {
				t.Errorf("parameter %s is documented in the path but the path has no {%s}", name, name)
			}
			public := op["security"] != nil && len(asList(op["security"])) == 0
			want := http.StatusUnauthorized
			if public {
				want = http.StatusOK
			}
			if resp := s.Do(t, method, path, NoKey, nil); resp.Status != want {
				t.Errorf("%s %s without a key: status %d, want %d", method, path, resp.Status, want)
			}
			resp := s.Do(t, http.MethodDelete, path, NoKey, nil)
			sort.Strings(allowed[pattern])
			if resp.Status != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != strings.Join(allowed[pattern], ", ") {
				t.Errorf("DELETE %s: status %d, Allow %q, want 405 and %v", path, resp.Status, resp.Header.Get("Allow"), allowed[pattern])
			}

			responses := op["responses"].(map[string]any)
			want200 := []string{"200", "405", "500"}
			if !public {
				want200 = append(want200, "400", "401", "403", "429", "503")
			}
			for _, code := range want200 {
				if _, ok := responses[code]; !ok {
					t.Errorf("response %s is not documented", code)
				}
			}
			if method == http.MethodPost {
				if _, ok := responses["413"]; !ok {
					t.Errorf("response 413 is not documented")
				}
				if op["requestBody"] == nil {
					t.Errorf("request body is not documented")
				}
			}
			if strings.Contains(pattern, "/blocks/") || strings.Contains(pattern, "/block") ||
				strings.Contains(pattern, "/logs") || strings.Contains(pattern, "token-account") {
				if _, ok := responses["404"]; !ok {
					t.Errorf("response 404 is not documented")
				}
			}
		})
	}
}

func TestOpenAPI_Document(t *testing.T) {
	s := MustOpenServer(t)
	doc := openAPI(t, s)
	schemes := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)
	b, _ := json.Marshal(schemes["apikey"])
	if string(b) != `{"in":"header","name":"apikey","type":"apiKey"}` {
		t.Errorf("security scheme apikey = %s", b)
	}
	if b, _ := json.Marshal(doc["security"]); string(b) != `[{"apikey":[]}]` {
		t.Errorf("security = %s", b)
	}
	// Every reference resolves.
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				if resolve(doc, r) == nil {
					t.Errorf("unresolved $ref %s", r)
				}
			}
			for _, w := range v {
				walk(w)
			}
		case []any:
			for _, w := range v {
				walk(w)
			}
		}
	}
	walk(doc)

	// The documented limits are the enforced ones.
	ops := docOperations(doc)
	var limit map[string]any
	for _, p := range asList(ops["GET /api/v1/customer/{chain}/blocks/receipts"]["parameters"]) {
		if p := p.(map[string]any); p["name"] == "limit" {
			limit = p["schema"].(map[string]any)
		}
	}
	if fmt.Sprintf("%v %v %v", limit["minimum"], limit["maximum"], limit["default"]) != "1 50 10" {
		t.Errorf("limit schema %v", limit)
	}
	filter := resolve(doc, "#/components/schemas/TraceFilter")
	if filter["additionalProperties"] != false {
		t.Errorf("TraceFilter must reject unknown fields")
	}
}

// TestOpenAPI_ResponsesConform validates real answers against the schemas
// the document gives for them: every field written is documented, every
// required field is written, and types, patterns and bounds hold.
func TestOpenAPI_ResponsesConform(t *testing.T) {
	s := MustOpenServer(t)
	doc := openAPI(t, s)
	ops := docOperations(doc)
	acct := storetest.WalletAcct.String()
	for _, tc := range []struct {
		op, method, path, body string
		status                 int
	}{
		{"POST /api/v1/customer/{chain}/traces/filter", "POST", tracesPath + "?limit=50", fixtureRange, 200},
		{"POST /api/v1/customer/{chain}/traces/filter", "POST", tracesPath, `{"from_block": 1}`, 400},
		{"POST /api/v1/customer/{chain}/traces/filter", "POST", tracesPath, fixtureRange + strings.Repeat(" ", cqhttp.MaxBodyBytes), 413},
		{"GET /api/v1/customer/{chain}/transactions/{transaction_hash}/logs", "GET", logsPath("polygon", storetest.TxNested.Hex()), "", 200},
		{"GET /api/v1/customer/{chain}/transactions/{transaction_hash}/logs", "GET", logsPath("polygon", storetest.H(1, 1).Hex()), "", 404},
		{"GET /api/v1/customer/{chain}/blocks/receipts", "GET", receiptsPath("polygon", "?block_number=68000000"), "", 200},
		{"GET /api/v1/customer/{chain}/block", "GET", blockPath("polygon", "?block_number=68000000"), "", 200},
		{"GET /api/v1/customer/{chain}/block", "GET", blockPath("polygon", "?block_number=68000000&full_transactions=true"), "", 200},
		{"GET /api/v1/customer/{chain}/block", "GET", blockPath("polygon", "?block_number=68000001&full_transactions=true"), "", 200},
		{"GET /api/v1/customer/{chain}/blocks/latest", "GET", latestPath("polygon"), "", 200},
		{"GET /api/v1/customer/{chain}/blocks/latest", "GET", latestPath("base"), "", 404},
		{"GET /api/v1/customer/solana/token-balances/token-account/{token_account}", "GET", balancePath(acct, "?datetime_filter=2025-06-01T12:30:00Z&include_metadata=true"), "", 200},
		{"GET /api/v1/customer/solana/token-balances/token-account/{token_account}", "GET", balancePath(storetest.OrphanAcct.String(), "?datetime_filter=2025-06-01T12:30:00Z"), "", 200},
		{"GET /healthz", "GET", "/healthz", "", 200},
	} {
		t.Run(fmt.Sprint(tc.status, " ", tc.path), func(t *testing.T) {
			resp := s.Do(t, tc.method, tc.path, s.Key, body(tc.body))
			if resp.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.Status, tc.status, resp.Body)
			}
			r, ok := ops[tc.op]["responses"].(map[string]any)[fmt.Sprint(tc.status)].(map[string]any)
			if !ok {
				t.Fatalf("status %d of %s is not documented", tc.status, tc.op)
			}
			if ref, ok := r["$ref"].(string); ok {
				r = resolve(doc, ref)
			}
			schema := r["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
			var v any
			d := json.NewDecoder(strings.NewReader(string(resp.Body)))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
			for _, problem := range validate(doc, schema, v, "$") {
				t.Error(problem)
			}
		})
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// resolve follows a local reference such as #/components/schemas/Trace.
func resolve(doc map[string]any, ref string) map[string]any {
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	m, _ := cur.(map[string]any)
	return m
}

// validate checks v against the subset of JSON Schema the document uses.
// Objects are treated as closed, so that an undocumented field is reported.
func validate(doc, schema map[string]any, v any, at string) []string {
	if ref, ok := schema["$ref"].(string); ok {
		return validate(doc, resolve(doc, ref), v, at)
	}
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, at+": "+fmt.Sprintf(format, args...)) }

	kind := jsonKind(v)
	if t, ok := schema["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		match := false
		for _, want := range types {
			if want == kind || want == "number" && kind == "integer" {
				match = true
			}
		}
		if !match {
			fail("type %s, want %v", kind, types)
			return problems
		}
	}
	if kind == "null" {
		return problems
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			fail("%v not in enum %v", v, enum)
		}
	}
	if c, ok := schema["const"]; ok && fmt.Sprint(c) != fmt.Sprint(v) {
		fail("%v, want const %v", v, c)
	}
	switch v := v.(type) {
	case string:
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(v) {
			fail("%q does not match %s", v, p)
		}
	case json.Number:
		n, _ := new(big.Rat).SetString(v.String())
		if m, ok := schema["minimum"].(json.Number); ok {
			if min, _ := new(big.Rat).SetString(m.String()); n.Cmp(min) < 0 {
				fail("%s below minimum %s", v, m)
			}
		}
		if m, ok := schema["maximum"].(json.Number); ok {
			if max, _ := new(big.Rat).SetString(m.String()); n.Cmp(max) > 0 {
				fail("%s above maximum %s", v, m)
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, x := range v {
				problems = append(problems, validate(doc, items, x, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		for _, r := range asList(schema["required"]) {
			if _, ok := v[r.(string)]; !ok {
				fail("required field %s is missing", r)
			}
		}
		for name, x := range v {
			p, ok := props[name].(map[string]any)
			if !ok {
				fail("field %s is not documented", name)
				continue
			}
			problems = append(problems, validate(doc, p, x, at+"."+name)...)
		}
	}
	return problems
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
