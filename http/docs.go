package http

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// docsFS holds the /docs page's files: its start-up script and the Swagger UI
// renderer, copied from the swagger-ui-dist npm package by scripts/docs-assets
// (the version in docs/swagger-ui/VERSION). They are in the binary, so the
// page needs neither node_modules nor a CDN.
//
//go:embed docs/docs.js docs/swagger-ui
var docsFS embed.FS

// pathDocs is the docs page; its assets are under pathDocs/assets/HASH/.
const pathDocs = "/docs"

// docsCSP is the Content-Security-Policy of the page and its assets: every
// kind of fetch is limited to this server ('self'), and data: only for the
// images Swagger UI's stylesheet inlines, so that the browser itself refuses
// any request to another origin. Scripts are files, never inline: the
// OpenAPI document in the page is a JSON data block, which runs nothing.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsAssetsCacheControl lets browsers and proxies keep an asset for a year
// without asking again: its path holds a hash of every asset's content, so a
// binary with other assets serves them under another path.
const docsAssetsCacheControl = "public, max-age=31536000, immutable"

// docsPage is the HTML of /docs; Assets is the versioned assets path,
// relative to /docs so that a path prefix in front of the API keeps working.
// Spec is the OpenAPI document, as /openapi.json serves it, in a data block
// that docs.js hands to Swagger UI: the operations are listed by the page's
// load event, without a request for the document after the page's own.
var docsPage = template.Must(template.New("docs").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chainquery API</title>
<link rel="icon" type="image/png" href="{{.Assets}}/favicon-32x32.png">
<link rel="stylesheet" href="{{.Assets}}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script type="application/json" id="openapi-document">{{.Spec}}</script>
<script src="{{.Assets}}/swagger-ui-bundle.js"></script>
<script src="{{.Assets}}/docs.js"></script>
</body>
</html>
`))

// docsAsset is one file served under the assets path.
type docsAsset struct {
	name        string
	body        []byte
	contentType string
}

// docsBundle is the assets the docs routes serve, read once per process.
type docsBundle struct {
	prefix string // the assets path, /docs/assets/HASH
	assets []*docsAsset
}

var loadDocs = sync.OnceValue(func() *docsBundle {
	var assets []*docsAsset
	h := sha256.New()
	err := fs.WalkDir(docsFS, "docs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := docsFS.ReadFile(p)
		if err != nil {
			return err
		}
		name := path.Base(p)
		h.Write([]byte(name + "\x00" + strconv.Itoa(len(body)) + "\x00"))
		h.Write(body)
		assets = append(assets, &docsAsset{name: name, body: body, contentType: docsContentType(name)})
		return nil
	})
	if err != nil {
		panic("docs: " + err.Error()) // embedded files; any test that builds a Server finds this
	}
	return &docsBundle{prefix: pathDocs + "/assets/" + hex.EncodeToString(h.Sum(nil))[:16], assets: assets}
})

// docsPageFor returns the HTML of /docs with spec, the OpenAPI document, in
// it. The document's strings are escaped for HTML (json.HTMLEscape), so that
// none can end the data block early; JSON.parse reads them back unchanged.
func docsPageFor(b *docsBundle, spec []byte) []byte {
	var escaped, page bytes.Buffer
	json.HTMLEscape(&escaped, spec)
	if err := docsPage.Execute(&page, struct {
		Assets string
		Spec   template.JS
	}{strings.TrimPrefix(b.prefix, "/"), template.JS(escaped.String())}); err != nil {
		panic("docs: " + err.Error()) // a constant template; any test that builds a Server finds this
	}
	return page.Bytes()
}

// docsContentType is the Content-Type of an asset, by its name: explicit,
// since mime.TypeByExtension depends on the machine's mime tables and
// LICENSE has no extension.
func docsContentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	}
	return "text/plain; charset=utf-8" // LICENSE, NOTICE, VERSION, *.LICENSE.txt
}

// docsRoutes are the routes of the docs page and of each of its assets. Like
// /metrics they are not in the route table, so the OpenAPI document leaves
// them out, and they need no key: the page is public, and the operations it
// tries send the key the reader types into Authorize.
func (s *Server) docsRoutes() []route {
	b := loadDocs()
	routes := []route{{
		method:  http.MethodGet,
		pattern: pathDocs,
		handle: func(w http.ResponseWriter, r *http.Request) error {
			h := w.Header()
			setDocsHeaders(h)
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache") // a new binary names new assets
			page := s.apiDocs(r.Context()).page
			h.Set("Content-Length", strconv.Itoa(len(page)))
			w.WriteHeader(http.StatusOK)
			w.Write(page) // a failed write means the client left
			return nil
		},
	}}
	for _, a := range b.assets {
		routes = append(routes, route{
			method:  http.MethodGet,
			pattern: b.prefix + "/" + a.name,
			handle:  a.serve,
		})
	}
	return routes
}

// setDocsHeaders sets what every docs response carries.
func setDocsHeaders(h http.Header) {
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// serve writes the asset. Compression is the server's, as for every answer.
func (a *docsAsset) serve(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	setDocsHeaders(h)
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", docsAssetsCacheControl)
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	w.Write(a.body) // a failed write means the client left
	return nil
}
