package http_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/testenv"
)

// TestDocs checks the docs page and its assets as a browser gets them:
// without a key, each asset under a versioned path with its own Content-Type
// and a year of caching, byte for byte the committed file, and a
// Content-Security-Policy that keeps every fetch on this server. The page
// itself running in a browser is TestDocsChromium's (cmd/chainquery).
func TestDocs(t *testing.T) {
	s := MustOpenServer(t)
	page := getPublic(t, s, "/docs")
	if page.Status != http.StatusOK {
		t.Fatalf("GET /docs: %d %s", page.Status, page.Body)
	}
	wantHeaders(t, "/docs", page.Header, map[string]string{
		"Content-Type":  "text/html; charset=utf-8",
		"Cache-Control": "no-cache",
	})
	checkDocsCSP(t, "/docs", page.Header.Get("Content-Security-Policy"))
	// Scripts are files: the policy forbids inline ones. The one element
	// with content is the OpenAPI document, a JSON data block that runs
	// nothing: /openapi.json's bytes, so that the page renders it without
	// fetching it.
	scripts := regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(string(page.Body), -1)
	if len(scripts) == 0 || strings.Count(string(page.Body), "<script") != len(scripts) {
		t.Errorf("the page's scripts are not all closed <script> elements:\n%.2000s", page.Body)
	}
	blocks := 0
	for _, m := range scripts {
		if m[1] == ` type="application/json" id="openapi-document"` {
			blocks++
			if doc := getPublic(t, s, "/openapi.json").Body; m[2] != string(doc) {
				t.Errorf("the page's document is not /openapi.json's:\n%.300s\nwant\n%.300s", m[2], doc)
			}
			continue
		}
		if !strings.Contains(m[1], "src=") || strings.TrimSpace(m[2]) != "" {
			t.Errorf("inline script in /docs: <script%s>%.300s</script>", m[1], m[2])
		}
	}
	if blocks != 1 {
		t.Errorf("the page has %d data blocks with the OpenAPI document, want 1", blocks)
	}

	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page.Body), -1)
	want := map[string]string{ // every asset the page needs, and its Content-Type
		"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
		"docs.js":              "text/javascript; charset=utf-8",
		"swagger-ui.css":       "text/css; charset=utf-8",
		"favicon-32x32.png":    "image/png",
	}
	versioned := regexp.MustCompile(`^docs/assets/[0-9a-f]{16}/([^/]+)$`)
	var prefix string
	for _, ref := range refs {
		m := versioned.FindStringSubmatch(ref[1])
		if m == nil {
			t.Errorf("the page refers to %q, not to a versioned path relative to /docs (docs/assets/HASH/NAME)", ref[1])
			continue
		}
		prefix = "/" + path.Dir(ref[1])
		name := m[1]
		contentType, ok := want[name]
		if !ok {
			t.Errorf("the page refers to %s, which this test does not know", name)
			continue
		}
		delete(want, name)
		resp := getPublic(t, s, prefix+"/"+name)
		if resp.Status != http.StatusOK {
			t.Errorf("GET %s/%s: %d %s", prefix, name, resp.Status, resp.Body)
			continue
		}
		wantHeaders(t, name, resp.Header, map[string]string{
			"Content-Type":           contentType,
			"Cache-Control":          "public, max-age=31536000, immutable",
			"X-Content-Type-Options": "nosniff",
		})
		checkDocsCSP(t, name, resp.Header.Get("Content-Security-Policy"))
		committed := filepath.Join("docs", "swagger-ui", name)
		if name == "docs.js" {
			committed = filepath.Join("docs", name)
		}
		if b, err := os.ReadFile(committed); err != nil || !bytes.Equal(b, resp.Body) {
			t.Errorf("GET %s/%s: %d bytes, not the %s committed (%v)", prefix, name, len(resp.Body), committed, err)
		}
	}
	for name := range want {
		t.Errorf("the page does not load %s", name)
	}
	// The license of the renderer is served with it.
	if resp := getPublic(t, s, prefix+"/LICENSE"); resp.Status != http.StatusOK || !bytes.Contains(resp.Body, []byte("Apache License")) {
		t.Errorf("GET %s/LICENSE: %d %.100s", prefix, resp.Status, resp.Body)
	}

	// Swagger UI's Authorize sends the key in the apikey header because the
	// document says so.
	var doc struct {
		Components struct {
			SecuritySchemes map[string]map[string]string `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(getPublic(t, s, "/openapi.json").Body, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Components.SecuritySchemes["apikey"]; got["type"] != "apiKey" || got["in"] != "header" || got["name"] != "apikey" {
		t.Errorf("securitySchemes.apikey = %v, want an apiKey in the apikey header", got)
	}

	t.Run("DocumentEscaped", func(t *testing.T) {
		// No string of the document can end its data block; JSON.parse
		// reads the escapes back as the characters.
		page := string(cqhttp.DocsPage([]byte(`{"description":"</script><script>alert(1)</script> & more"}`)))
		if strings.Count(page, "</script>") != 3 || !strings.Contains(page, `"\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e \u0026 more"`) {
			t.Errorf("the document is not escaped in the page:\n%s", page)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, p := range []string{"/docs/", "/docs/assets/0000000000000000/swagger-ui.css", prefix + "/index.html", prefix + "/README.md"} {
			if resp := getPublic(t, s, p); resp.Status != http.StatusNotFound || !json.Valid(resp.Body) {
				t.Errorf("GET %s: %d %s, want the JSON 404", p, resp.Status, resp.Body)
			}
		}
	})
	t.Run("ErrMethod", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, s.HTTP.URL+"/docs", nil)
		if resp := s.send(t, req); resp.Status != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET" {
			t.Errorf("POST /docs: %d, Allow %q", resp.Status, resp.Header.Get("Allow"))
		}
	})
}

// TestDocsAssets checks that the renderer's files committed in
// http/docs/swagger-ui are those of the swagger-ui-dist package that
// scripts/setup pins and installs: an upgrade changes the pin, then
// scripts/docs-assets copies the new files.
func TestDocsAssets(t *testing.T) {
	version, err := os.ReadFile("docs/swagger-ui/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(version))
	setup, err := os.ReadFile("../scripts/setup")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(setup, []byte("\tswagger-ui-dist@"+v+" ")) {
		t.Errorf("scripts/setup does not pin swagger-ui-dist@%s, the version committed in http/docs/swagger-ui", v)
	}

	pkg := filepath.Join("..", "node_modules", "swagger-ui-dist")
	manifest, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	testenv.Require(t, err == nil, "swagger-ui-dist is not installed in node_modules (%v): run scripts/setup", err)
	var installed struct{ Version string }
	if err := json.Unmarshal(manifest, &installed); err != nil {
		t.Fatal(err)
	}
	if installed.Version != v {
		t.Fatalf("node_modules has swagger-ui-dist %s, http/docs/swagger-ui holds %s: run scripts/setup, then scripts/docs-assets", installed.Version, v)
	}
	entries, err := os.ReadDir("docs/swagger-ui")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "VERSION" {
			continue
		}
		committed, err := os.ReadFile(filepath.Join("docs", "swagger-ui", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(pkg, e.Name())); err != nil || !bytes.Equal(b, committed) {
			t.Errorf("http/docs/swagger-ui/%s differs from swagger-ui-dist %s's (%v): run scripts/docs-assets", e.Name(), v, err)
		}
	}
}

// checkDocsCSP fails unless policy keeps every kind of fetch on this
// server: a default of 'none', and no other origin, scheme or wildcard
// anywhere but data: images.
func checkDocsCSP(t *testing.T, what, policy string) {
	t.Helper()
	directives := map[string]string{}
	for _, d := range strings.Split(policy, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	if directives["default-src"] != "'none'" || directives["script-src"] != "'self'" {
		t.Errorf("%s: Content-Security-Policy %q: want default-src 'none' and script-src 'self'", what, policy)
	}
	for name, value := range directives {
		for _, source := range strings.Fields(value) {
			switch {
			case source == "'self'", source == "'none'":
			case source == "data:" && name == "img-src":
			default:
				t.Errorf("%s: Content-Security-Policy allows %s in %s", what, source, name)
			}
		}
	}
}

// getPublic sends a GET without a key: the docs page and its assets need none.
func getPublic(t *testing.T, s *Server, p string) Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.HTTP.URL+p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.send(t, req)
}

func wantHeaders(t *testing.T, what string, h http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %s %q, want %q", what, k, got, v)
		}
	}
}
