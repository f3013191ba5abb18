package http_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// apiReference is the human-readable API reference, held to the OpenAPI
// document by TestAPIDoc.
var apiReference = filepath.Join("..", "docs", "api.md")

// apiDocExtraOperations are the operations docs/api.md describes that the
// OpenAPI document leaves out on purpose: the Swagger UI page and the
// operators' metrics (docs.go, metrics.go).
var apiDocExtraOperations = []string{"GET /docs", "GET /metrics"}

// apiDocSection is one section of docs/api.md: a heading and everything up
// to the next heading of the same or a higher level.
type apiDocSection struct {
	heading string
	body    string // the heading line and the section's text, subsections included
}

// apiDocSections splits a Markdown text into its sections. Lines inside
// fenced code blocks are never headings (a shell comment is not one).
func apiDocSections(text string) []apiDocSection {
	type heading struct {
		level, line int
	}
	lines := strings.Split(text, "\n")
	var heads []heading
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		level := len(l) - len(strings.TrimLeft(l, "#"))
		if level < len(l) && l[level] == ' ' {
			heads = append(heads, heading{level, i})
		}
	}
	var out []apiDocSection
	for i, h := range heads {
		end := len(lines)
		for _, next := range heads[i+1:] {
			if next.level <= h.level {
				end = next.line
				break
			}
		}
		out = append(out, apiDocSection{heading: lines[h.line], body: strings.Join(lines[h.line:end], "\n")})
	}
	return out
}

// operationHeading matches a code span naming an operation in a heading:
// `GET /path`.
var operationHeading = regexp.MustCompile("`([A-Z]+) (/[^`]*)`")

// schemaNames returns the property names of schema and of every schema
// within it (properties, array items, oneOf/anyOf/allOf alternatives),
// following local references.
func schemaNames(doc map[string]any, schema any, seen map[string]bool, names map[string]bool) {
	m, ok := schema.(map[string]any)
	if !ok {
		return
	}
	if ref, ok := m["$ref"].(string); ok {
		if seen[ref] {
			return
		}
		seen[ref] = true
		schemaNames(doc, resolve(doc, ref), seen, names)
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for name, p := range props {
			names[name] = true
			schemaNames(doc, p, seen, names)
		}
	}
	schemaNames(doc, m["items"], seen, names)
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		for _, alt := range asList(m[k]) {
			schemaNames(doc, alt, seen, names)
		}
	}
}

// jsonSchemaOf returns the application/json schema of a request body or a
// response, nil when it has none.
func jsonSchemaOf(doc map[string]any, v any) any {
	m, _ := v.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		m = resolve(doc, ref)
	}
	content, _ := m["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	if media == nil { // an export's lines
		media, _ = content["application/x-ndjson"].(map[string]any)
	}
	return media["schema"]
}

// TestAPIDoc holds docs/api.md to the OpenAPI document the server serves:
// every operation of the document has a section in docs/api.md whose heading
// names it as a code span (`GET /healthz`), and that section names, as code
// spans, each of the operation's parameters, the fields of its request body
// and of its 200 answer, and mentions each status it documents. Every
// operation a heading of docs/api.md names is one the server serves, so that
// a removed route cannot stay documented.
func TestAPIDoc(t *testing.T) {
	text, err := os.ReadFile(apiReference)
	if err != nil {
		t.Fatal(err)
	}
	sections := apiDocSections(string(text))
	s := MustOpenServer(t)
	doc := openAPI(t, s)
	ops := docOperations(doc)

	documented := map[string]apiDocSection{} // "METHOD /path" -> its section
	for _, sec := range sections {
		for _, m := range operationHeading.FindAllStringSubmatch(sec.heading, -1) {
			key := m[1] + " " + m[2]
			if _, dup := documented[key]; dup {
				t.Errorf("%s: two headings name %s", apiReference, key)
			}
			documented[key] = sec
		}
	}
	for key := range documented {
		if _, ok := ops[key]; !ok && !slices.Contains(apiDocExtraOperations, key) {
			t.Errorf("%s has a section for %s, which the server does not serve", apiReference, key)
		}
	}

	var keys []string
	for k := range ops {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		op := ops[key]
		t.Run(key, func(t *testing.T) {
			sec, ok := documented[key]
			if !ok {
				t.Fatalf("%s has no heading naming `%s`", apiReference, key)
			}
			want := func(what, name string) {
				t.Helper()
				if !strings.Contains(sec.body, "`"+name+"`") {
					t.Errorf("%s, section %q: %s `%s` is not named", apiReference, sec.heading, what, name)
				}
			}
			for _, p := range asList(op["parameters"]) {
				p := p.(map[string]any)
				want(p["in"].(string)+" parameter", p["name"].(string))
			}
			for _, part := range []struct {
				what   string
				schema any
			}{
				{"request body field", jsonSchemaOf(doc, op["requestBody"])},
				{"response field", jsonSchemaOf(doc, op["responses"].(map[string]any)["200"])},
			} {
				names := map[string]bool{}
				schemaNames(doc, part.schema, map[string]bool{}, names)
				for name := range names {
					want(part.what, name)
				}
			}
			for status := range op["responses"].(map[string]any) {
				if !regexp.MustCompile(`\b` + status + `\b`).MatchString(sec.body) {
					t.Errorf("%s, section %q: status %s is not mentioned", apiReference, sec.heading, status)
				}
			}
		})
	}
}
