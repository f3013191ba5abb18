package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// openAPI returns the document the server serves, decoded with json.Number.
func openAPI(t *testing.T, s *Server) map[string]any {
	t.Helper()
	return s.Doc(t).raw
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
		"owner":            storetest.Wallet.String(),
		"account":          storetest.Wallet.String(),
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
				want200 = append(want200, "401", "403", "429", "503")
			}
			if op["parameters"] != nil || op["requestBody"] != nil { // the status takes nothing to get wrong
				want200 = append(want200, "400")
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
			// The reads of one thing answer 404 when it is not indexed; the
			// filters answer an empty page.
			if (strings.Contains(pattern, "/blocks/") || strings.Contains(pattern, "/block") ||
				strings.Contains(pattern, "/logs") || strings.Contains(pattern, "token-account")) && !strings.HasSuffix(pattern, "/filter") && !strings.HasSuffix(pattern, "/export") {
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

// TestOpenAPI_ResponsesConform sends a request of every kind of answer of
// every operation; Server.Do checks each answer against the served document
// (apiDoc.problems), so this test is about reaching every answer schema.
func TestOpenAPI_ResponsesConform(t *testing.T) {
	s := MustOpenServer(t)
	acct := storetest.WalletAcct.String()
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", tracesPath + "?limit=50", fixtureRange, 200},
		{"POST", tracesPath, `{"from_block": 1}`, 400},
		{"POST", tracesPath, fixtureRange + strings.Repeat(" ", cqhttp.MaxBodyBytes), 413},
		{"GET", logsPath("polygon", storetest.TxNested.Hex()), "", 200},
		{"GET", logsPath("polygon", storetest.H(1, 1).Hex()), "", 404},
		{"GET", receiptsPath("polygon", "?block_number=68000000"), "", 200},
		{"GET", blockPath("polygon", "?block_number=68000000"), "", 200},
		{"GET", blockPath("polygon", "?block_number=68000000&full_transactions=true"), "", 200},
		{"GET", blockPath("polygon", "?block_number=68000001&full_transactions=true"), "", 200},
		{"GET", latestPath("polygon"), "", 200},
		{"GET", latestPath("base"), "", 404},
		{"GET", balancePath(acct, "?datetime_filter=2025-06-01T12:30:00Z&include_metadata=true"), "", 200},
		{"GET", balancePath(storetest.OrphanAcct.String(), "?datetime_filter=2025-06-01T12:30:00Z"), "", 200},
		{"GET", "/healthz", "", 200},
		{"GET", "/openapi.json", "", 200},
	} {
		t.Run(fmt.Sprint(tc.status, " ", tc.path), func(t *testing.T) {
			if resp := s.Do(t, tc.method, tc.path, s.Key, body(tc.body)); resp.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.Status, tc.status, resp.Body)
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
