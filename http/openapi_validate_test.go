package http_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// undocumentedPaths are the paths the server answers on purpose outside the
// OpenAPI document, whose answers are therefore not checked against it:
// /metrics is for operators, in Prometheus' text format, and is kept out of
// the document of the API (README, "API keys"). When metrics are off, its
// JSON 404 is checked like that of any unknown path.
var undocumentedPaths = map[string]bool{"/metrics": true}

// apiDoc is the OpenAPI document a server serves at /openapi.json, loaded
// into pb33f's libopenapi-validator, which implements OpenAPI 3.1 and JSON
// Schema 2020-12 in full (minLength, minItems, oneOf, patterns, required,
// additionalProperties, const, enum, type unions...).
type apiDoc struct {
	raw map[string]any // the document decoded with json.Number, to generate requests from

	mu sync.Mutex // one check at a time: the validators fill caches of compiled schemas as they go
	// strict checks answers in strict mode: a field the document does not
	// name is an error even where additionalProperties is not false, so
	// that every field a handler writes must be documented.
	strict validator.Validator
	// lax applies the document's rules as OpenAPI states them: to requests
	// (a server may ignore query parameters it does not name), and to the
	// answer of /openapi.json, whose fields are the document's own. It
	// leaves the apikey out, which the tests vary on purpose.
	lax       validator.Validator
	schemas   schema_validation.SchemaValidator
	errSchema *base.Schema // the body of every error answer
	routes    []docRoute
}

// docRoute is one path of the document and its methods.
type docRoute struct {
	pattern string
	re      *regexp.Regexp // matches the escaped path, one segment per parameter
	methods []string       // upper case, sorted
}

var apiDocs sync.Map // sha256 of the document → *apiDoc; every test server serves the same one

// loadAPIDoc parses a served document and builds its validators, once per
// distinct document.
func loadAPIDoc(tb testing.TB, body []byte) *apiDoc {
	tb.Helper()
	sum := sha256.Sum256(body)
	if d, ok := apiDocs.Load(sum); ok {
		return d.(*apiDoc)
	}
	d := &apiDoc{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&d.raw); err != nil {
		tb.Fatalf("the OpenAPI document is not JSON: %v", err)
	}
	if d.raw["openapi"] != "3.1.0" {
		tb.Fatalf("openapi = %v, want 3.1.0", d.raw["openapi"])
	}
	doc, err := libopenapi.NewDocument(body)
	if err != nil {
		tb.Fatalf("libopenapi cannot read the OpenAPI document: %v", err)
	}
	if ok, errs := schema_validation.ValidateOpenAPIDocument(doc); !ok {
		tb.Fatalf("the served OpenAPI document breaks the OpenAPI 3.1 schema:%s", formatErrors(errs))
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		tb.Fatalf("libopenapi cannot build the OpenAPI document: %v", err)
	}
	d.strict = validator.NewValidatorFromV3Model(&model.Model, config.WithStrictMode(),
		// writeJSON sends it with every answer; a header, not a field of the API.
		config.WithStrictIgnoredHeadersExtra("x-content-type-options"))
	d.lax = validator.NewValidatorFromV3Model(&model.Model, config.WithoutSecurityValidation())
	d.schemas = schema_validation.NewSchemaValidator()
	notFound := model.Model.Components.Responses.GetOrZero("NotFound")
	if notFound == nil || notFound.Content.GetOrZero("application/json") == nil {
		tb.Fatalf("the document has no components.responses.NotFound with a JSON body")
	}
	d.errSchema = notFound.Content.GetOrZero("application/json").Schema.Schema()

	param := regexp.MustCompile(`\{[^}]+\}`)
	for p, item := range d.raw["paths"].(map[string]any) {
		// Each parameter is one non-empty segment, as in ServeMux patterns.
		quoted := regexp.QuoteMeta(param.ReplaceAllLiteralString(p, "\x00"))
		rt := docRoute{pattern: p, re: regexp.MustCompile("^" + strings.ReplaceAll(quoted, "\x00", "[^/]+") + "$")}
		for _, m := range httpMethods {
			if _, ok := item.(map[string]any)[m]; ok {
				rt.methods = append(rt.methods, strings.ToUpper(m))
			}
		}
		slices.Sort(rt.methods)
		d.routes = append(d.routes, rt)
	}
	got, _ := apiDocs.LoadOrStore(sum, d)
	return got.(*apiDoc)
}

// handlerDoc loads the document that h serves at /openapi.json.
func handlerDoc(tb testing.TB, h http.Handler) *apiDoc {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET /openapi.json: status %d: %s", rec.Code, rec.Body)
	}
	return loadAPIDoc(tb, rec.Body.Bytes())
}

// route returns the documented path that p (an escaped path) is, or nil.
func (d *apiDoc) route(p string) *docRoute {
	for i := range d.routes {
		if d.routes[i].re.MatchString(p) {
			return &d.routes[i]
		}
	}
	return nil
}

// check reports, as test errors, every way in which resp, the answer to req
// (whose body was reqBody), breaks the document.
func (d *apiDoc) check(tb testing.TB, req *http.Request, reqBody []byte, resp Response) {
	tb.Helper()
	for _, p := range d.problems(req, reqBody, resp) {
		tb.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %s\nbody: %.500s", req.Method, req.URL, resp.Status, p, resp.Body)
	}
}

// problems returns every way in which resp breaks the document: its status
// must be one the document lists for the operation, its Content-Type the
// documented one, its headers and body valid against the documented schemas.
// A path the document does not have must get a JSON 404, a method it does
// not list for a documented path a JSON 405 with an Allow header naming the
// documented methods.
func (d *apiDoc) problems(req *http.Request, reqBody []byte, resp Response) []string {
	if undocumentedPaths[req.URL.Path] && resp.Status != http.StatusNotFound {
		return nil
	}
	var problems []string
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		problems = append(problems, fmt.Sprintf("Content-Type %q, want application/json", ct))
	}
	checkError := func() {
		if req.Method == http.MethodHead { // no body to check
			return
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if ok, errs := d.schemas.ValidateSchemaBytes(d.errSchema, resp.Body); !ok {
			problems = append(problems, "error body: "+formatErrors(errs))
		}
	}

	// A path that is not in canonical form is no documented path: its dot
	// segments or empty segments are not values of a parameter (RFC 3986
	// removes dot segments), and the server answers 404 for it.
	var rt *docRoute
	if p := req.URL.Path; p == "/" || path.Clean(p) == p {
		rt = d.route(req.URL.EscapedPath())
	}
	switch {
	case rt == nil:
		if resp.Status != http.StatusNotFound {
			problems = append(problems, "the path is not in the document, want 404")
		}
		checkError()
		return problems
	case !slices.Contains(rt.methods, req.Method):
		if resp.Status != http.StatusMethodNotAllowed {
			problems = append(problems, fmt.Sprintf("%s is not documented for %s, want 405", req.Method, rt.pattern))
		}
		allow := strings.Split(resp.Header.Get("Allow"), ", ")
		slices.Sort(allow)
		if !slices.Equal(allow, rt.methods) {
			problems = append(problems, fmt.Sprintf("Allow %q, want the documented methods %v", resp.Header.Get("Allow"), rt.methods))
		}
		checkError()
		return problems
	}

	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	hr := &http.Response{
		StatusCode: resp.Status,
		Header:     resp.Header,
		Body:       io.NopCloser(bytes.NewReader(resp.Body)),
		Request:    r,
	}
	v := d.strict
	if rt.pattern == "/openapi.json" {
		// The document itself: loadAPIDoc checked it against the OpenAPI
		// 3.1 schema; its schema here only says it is an object.
		v = d.lax
	}
	d.mu.Lock()
	ok, errs := v.ValidateHttpResponse(r, hr)
	d.mu.Unlock()
	if !ok {
		problems = append(problems, formatErrors(errs))
	}
	return problems
}

// validRequest reports whether the document accepts req, by the rules it
// states for parameters and bodies, and if not why.
func (d *apiDoc) validRequest(req *http.Request, reqBody []byte) (bool, string) {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	d.mu.Lock()
	defer d.mu.Unlock()
	ok, errs := d.lax.ValidateHttpRequestSync(r)
	return ok, formatErrors(errs)
}

// formatErrors writes the validator's findings, each with the schema
// failures under it.
func formatErrors(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s %s", f.FieldPath, f.Reason)
		}
	}
	return b.String()
}

// TestOpenAPI_CheckCatches shows that the check of answers is not vacuous:
// answers that break the document in each way it can be broken are caught.
func TestOpenAPI_CheckCatches(t *testing.T) {
	d := handlerDoc(t, MustOpenServer(t).Handler())
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	latest := "/api/v1/customer/polygon/blocks/latest"
	balance := "/api/v1/customer/solana/token-balances/token-account/AiZVGdcGBvupD3XxZyZMgQGXR75LLSetcPaLavjuRPLw?datetime_filter=2025-06-01T12:00:00Z"
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
	}{
		{"UndocumentedStatus", "GET", latest, http.StatusTeapot, jsonCT, `{"detail":"x"}`},
		{"UndocumentedStatusOfOperation", "GET", "/healthz", http.StatusUnauthorized, jsonCT, `{"detail":"x"}`},
		{"EmptyDetail (minLength)", "GET", latest, http.StatusNotFound, jsonCT, `{"detail":""}`},
		{"NoDetail (required)", "GET", latest, http.StatusNotFound, jsonCT, `{}`},
		{"UndocumentedField", "GET", latest, http.StatusOK, jsonCT, `{"block_number":1,"hash":"0x"}`},
		{"UndocumentedErrorField", "GET", latest, http.StatusBadRequest, jsonCT, `{"detail":"x","code":1}`},
		{"Minimum", "GET", latest, http.StatusOK, jsonCT, `{"block_number":-1}`},
		{"Type", "GET", latest, http.StatusOK, jsonCT, `{"block_number":"1"}`},
		{"NotJSON", "GET", latest, http.StatusOK, jsonCT, `{"block_number":1`},
		{"ContentType", "GET", latest, http.StatusOK, http.Header{"Content-Type": {"text/plain"}}, `{"block_number":1}`},
		{"Const", "GET", "/healthz", http.StatusOK, jsonCT, `{"status":"fine"}`},
		{"Pattern", "GET", "/api/v1/customer/polygon/transactions/0x" + strings.Repeat("ab", 32) + "/logs", http.StatusOK, jsonCT,
			`{"transaction_hash":"0x12","offset":0,"limit":10,"result":[],"count":0}`},
		{"Maximum", "GET", "/api/v1/customer/polygon/blocks/receipts?block_number=1", http.StatusOK, jsonCT,
			`{"block_number":1,"offset":0,"limit":51,"result":[],"count":0}`},
		{"Null", "GET", balance, http.StatusOK, jsonCT,
			`{"as_of_datetime":"2025-06-01 12:00:00.000","account_owner":null,"token_address":"a","token_account":"b","token_name":null,"token_symbol":null,"balance":null,"balance_source":1,"datetime_last_updated":"2025-06-01 12:00:00.000","block_slot_last_updated":1}`},
		{"UnknownPathNot404", "GET", "/nowhere", http.StatusOK, jsonCT, `{"detail":"x"}`},
		{"UnknownPathBadBody", "GET", "/nowhere", http.StatusNotFound, jsonCT, `{"detail":""}`},
		{"NonCanonicalPathNot404", "GET", "/api/v1/customer/polygon/../polygon/blocks/latest", http.StatusOK, jsonCT, `{"block_number":1}`},
		{"WrongMethodNot405", "DELETE", latest, http.StatusNotFound, http.Header{"Content-Type": {"application/json"}, "Allow": {"GET"}}, `{"detail":"x"}`},
		{"WrongMethodBadAllow", "DELETE", latest, http.StatusMethodNotAllowed, http.Header{"Content-Type": {"application/json"}, "Allow": {"GET, POST"}}, `{"detail":"x"}`},
		{"RetryAfterMissing", "GET", latest, http.StatusTooManyRequests, jsonCT, `{"detail":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if problems := d.problems(req, nil, Response{Status: tc.status, Header: tc.header, Body: []byte(tc.body)}); len(problems) == 0 {
				t.Errorf("the check let through %s %s answered %d %s", tc.method, tc.path, tc.status, tc.body)
			}
		})
	}
	t.Run("OK", func(t *testing.T) {
		req := httptest.NewRequest("GET", latest, nil)
		if problems := d.problems(req, nil, Response{Status: http.StatusOK, Header: jsonCT, Body: []byte(`{"block_number":1}`)}); len(problems) > 0 {
			t.Errorf("a valid answer was refused: %v", problems)
		}
	})
}
