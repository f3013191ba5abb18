package http_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/jsonschema/v6"
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
	lax validator.Validator
	// request applies the document to a request's path and path
	// parameters; validRequest applies it to the query parameters and the
	// body itself, with exact numbers (exactProblems).
	request validator.Validator
	// exact compiles the document's schemas for exactProblems, with the
	// document's numbers kept exact; compiled holds them by location.
	exact     *jsonschema.Compiler
	compiled  map[string]*jsonschema.Schema
	schemas   schema_validation.SchemaValidator
	errSchema *base.Schema // the body of every error answer
	routes    []docRoute
	// ndjson is, by path, the schema of each line of an NDJSON answer
	// (the exports): the validators read a body as one document.
	ndjson map[string]*base.Schema
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
	d.request = validator.NewValidatorFromV3Model(&model.Model, config.WithoutSecurityValidation(),
		config.WithoutRequestQueryParameterValidation(), config.WithoutRequestBodyValidation())
	d.exact = jsonschema.NewCompiler()
	d.exact.DefaultDraft(jsonschema.Draft2020)
	exactDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("the OpenAPI document is not JSON: %v", err)
	}
	if err := d.exact.AddResource(exactDocURL, exactDoc); err != nil {
		tb.Fatalf("the OpenAPI document cannot be read as JSON Schema: %v", err)
	}
	d.compiled = map[string]*jsonschema.Schema{}
	d.schemas = schema_validation.NewSchemaValidator()
	notFound := model.Model.Components.Responses.GetOrZero("NotFound")
	if notFound == nil || notFound.Content.GetOrZero("application/json") == nil {
		tb.Fatalf("the document has no components.responses.NotFound with a JSON body")
	}
	d.errSchema = notFound.Content.GetOrZero("application/json").Schema.Schema()
	d.ndjson = map[string]*base.Schema{}
	for p := model.Model.Paths.PathItems.First(); p != nil; p = p.Next() {
		if op := p.Value().Post; op != nil && op.Responses != nil {
			if ok := op.Responses.Codes.GetOrZero("200"); ok != nil {
				if mt := ok.Content.GetOrZero("application/x-ndjson"); mt != nil {
					d.ndjson[p.Key()] = mt.Schema.Schema()
				}
			}
		}
	}

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
	ndjson := resp.Header.Get("Content-Type") == "application/x-ndjson" && resp.Status == http.StatusOK
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" && !ndjson {
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

	if ndjson {
		schema := d.ndjson[rt.pattern]
		if schema == nil {
			return append(problems, "an NDJSON answer where the document gives none")
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		for i, line := range bytes.Split(bytes.TrimSuffix(resp.Body, []byte("\n")), []byte("\n")) {
			if ok, errs := d.schemas.ValidateSchemaBytes(schema, line); !ok {
				problems = append(problems, fmt.Sprintf("line %d: %s", i+1, formatErrors(errs)))
			}
		}
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
	ok, errs := d.request.ValidateHttpRequestSync(r)
	why := formatErrors(errs)
	for _, p := range d.exactProblems(req, reqBody) {
		ok = false
		why += "\n  " + p
	}
	return ok, why
}

// exactDocURL names the document as a JSON Schema resource.
const exactDocURL = "https://chainquery.test/openapi.json"

// exactProblems returns every way in which the query parameters and the
// body of req break the document, by JSON Schema 2020-12 with numbers read
// exactly, as JSON Schema means them (a client generator or a property-based
// tester in a language with big integers reads them so). libopenapi-validator
// reads a query integer as int64, rejecting any above 2^63-1 whatever the
// schema says, and a body's numbers as float64, rounding 2^63-1 up to 2^63,
// above a maximum of 2^63-1: it would decide the bounds of offset and of
// block numbers wrongly. Query values are read as OpenAPI serializes them:
// a JSON number for an integer or a number, true or false for a boolean, the
// text for a string. A path or method the document does not have is left
// to d.request. The caller holds d.mu.
func (d *apiDoc) exactProblems(req *http.Request, reqBody []byte) []string {
	rt := d.route(req.URL.EscapedPath())
	if rt == nil {
		return nil
	}
	method := strings.ToLower(req.Method)
	op, _ := d.raw["paths"].(map[string]any)[rt.pattern].(map[string]any)[method].(map[string]any)
	if op == nil {
		return nil
	}
	opPtr := "/paths/" + jsonPointerEscape(rt.pattern) + "/" + method
	var problems []string
	validate := func(what, ptr string, v any) {
		sch, err := d.compile(ptr)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: the schema at %s does not compile: %v", what, ptr, err))
		} else if err := sch.Validate(v); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", what, err))
		}
	}
	q := req.URL.Query()
	for i, p := range asList(op["parameters"]) {
		p := p.(map[string]any)
		if p["in"] != "query" {
			continue
		}
		name := p["name"].(string)
		if !q.Has(name) {
			if p["required"] == true {
				problems = append(problems, "query parameter "+name+" is required")
			}
			continue
		}
		typ, _ := schemaType(p["schema"].(map[string]any))
		for _, v := range q[name] {
			validate("query parameter "+name+"="+v, opPtr+"/parameters/"+strconv.Itoa(i)+"/schema", queryValue(typ, v))
		}
	}
	rb, _ := op["requestBody"].(map[string]any)
	switch {
	case rb == nil:
	case len(bytes.TrimSpace(reqBody)) == 0:
		if rb["required"] == true {
			problems = append(problems, "the request body is required")
		}
	default:
		if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); mt != "application/json" {
			problems = append(problems, fmt.Sprintf("request body of type %q, want application/json", req.Header.Get("Content-Type")))
			break
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(reqBody))
		if err != nil {
			problems = append(problems, fmt.Sprintf("the request body is not JSON: %v", err))
			break
		}
		validate("request body", opPtr+"/requestBody/content/application~1json/schema", v)
	}
	return problems
}

// compile returns the schema at a JSON pointer of the document. The caller
// holds d.mu.
func (d *apiDoc) compile(ptr string) (*jsonschema.Schema, error) {
	if sch, ok := d.compiled[ptr]; ok {
		return sch, nil
	}
	sch, err := d.exact.Compile(exactDocURL + "#" + ptr)
	if err == nil {
		d.compiled[ptr] = sch
	}
	return sch, err
}

// jsonNumber is the grammar of a JSON number (RFC 8259).
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// queryValue is the JSON value that the query value v of a parameter of
// type typ stands for: a number written as JSON writes it, true or false,
// else the text itself, which a schema of another type rejects.
func queryValue(typ, v string) any {
	switch {
	case (typ == "integer" || typ == "number") && jsonNumber.MatchString(v):
		return json.Number(v)
	case typ == "boolean" && (v == "true" || v == "false"):
		return v == "true"
	}
	return v
}

// jsonPointerEscape escapes one token of a JSON pointer (RFC 6901).
func jsonPointerEscape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
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

// TestOpenAPI_ValidRequest shows that validRequest applies each keyword the
// served document's request schemas use, with numbers read exactly: at
// 2^63-1 and just past it, where a reading as float64 (libopenapi-validator's
// for bodies) or as int64 (its reading of query integers) decides wrongly.
func TestOpenAPI_ValidRequest(t *testing.T) {
	d := handlerDoc(t, MustOpenServer(t).Handler())
	const (
		traces   = "/api/v1/customer/polygon/traces/filter"
		receipts = "/api/v1/customer/polygon/blocks/receipts?block_number=1"
	)
	for _, tc := range []struct {
		name, path, body string
		valid            bool
	}{
		{"OneOf/blocks", traces, `{"from_block": 1, "to_block": 2}`, true},
		{"OneOf/datetimes", traces, `{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:00Z"}`, true},
		{"OneOf/both", traces, `{"from_block": 1, "to_block": 2, "from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:00Z"}`, false},
		{"OneOf/neither", traces, `{}`, false},
		{"Required/halfRange", traces, `{"from_block": 1}`, false},
		{"NotNull/halfRange", traces, `{"from_block": 1, "to_block": null}`, false},
		{"NotNull/bothNull", traces, `{"from_block": null, "to_block": null}`, false},
		{"TypeNull/otherRangeNull", traces, `{"from_block": 1, "to_block": 2, "from_datetime": null, "to_datetime": null}`, true},
		{"TypeNull/otherRangeGiven", traces, `{"from_block": 1, "to_block": 2, "to_datetime": "2025-03-01T00:00:00Z"}`, false},
		{"TypeNull/address", traces, `{"from_block": 1, "to_block": 2, "from_address": null}`, true},
		{"Maximum/bodyAt", traces, `{"from_block": 9223372036854775807, "to_block": 9223372036854775807}`, true},
		{"Maximum/bodyPast", traces, `{"from_block": 9223372036854775807, "to_block": 9223372036854775808}`, false},
		{"Maximum/queryAt", "/api/v1/customer/polygon/blocks/receipts?block_number=9223372036854775807&offset=9223372036854775807", "", true},
		{"Maximum/blockNumberPast", "/api/v1/customer/polygon/blocks/receipts?block_number=9223372036854775808", "", false},
		{"Maximum/queryPast", receipts + "&offset=9223372036854775808", "", false},
		{"Maximum/queryPastUint64", receipts + "&offset=18446744073709551616", "", false},
		{"Maximum/limit", receipts + "&limit=51", "", false},
		{"Minimum/query", receipts + "&offset=-1", "", false},
		{"Type/query", receipts + "&offset=ten", "", false},
		{"Type/body", traces, `{"from_block": "1", "to_block": 2}`, false},
		{"AdditionalProperties", traces, `{"from_block": 1, "to_block": 2, "fromBlock": 1}`, false},
		{"Required/query", "/api/v1/customer/polygon/blocks/receipts", "", false},
		{"Required/body", traces, "", false},
		{"Body/notJSON", traces, `{"from_block": 1,`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, body := http.MethodGet, []byte(nil)
			if strings.HasPrefix(tc.path, traces) {
				method, body = http.MethodPost, []byte(tc.body)
			}
			req := httptest.NewRequest(method, tc.path, bytes.NewReader(body))
			if method == http.MethodPost {
				req.Header.Set("Content-Type", "application/json")
			}
			if valid, why := d.validRequest(req, body); valid != tc.valid {
				t.Errorf("%s %s %s: valid %v, want %v:%s", method, tc.path, tc.body, valid, tc.valid, why)
			}
		})
	}
}
