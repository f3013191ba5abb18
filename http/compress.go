package http

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// GzipMinBytes is the smallest answer (JSON and its trailing newline) sent
// gzip-compressed to a client that accepts it: below it, compressing costs
// more time than the few bytes it saves are worth. Errors, Get Latest Block
// and /healthz go as they are; a header-only Get Block and every page of
// receipts, logs or traces are compressed (BenchmarkGzip; docs/benchmarks.md,
// "Compression").
const GzipMinBytes = 1024

// gzipLevel is gzip.BestSpeed: on Polygon-shaped answers it runs about twice
// as fast as the default level for a few points of ratio (BenchmarkGzip;
// docs/benchmarks.md, "Compression").
const gzipLevel = gzip.BestSpeed

// gzipPool holds idle compressors: setting a new one up costs more than
// compressing a full block (docs/benchmarks.md, "Compression").
var gzipPool = sync.Pool{New: func() any {
	w, err := gzip.NewWriterLevel(nil, gzipLevel)
	if err != nil {
		panic("http: gzip level: " + err.Error()) // a constant; the tests run it
	}
	return w
}}

// compress sends the answers of next gzip-compressed to clients that accept
// gzip, when they are large enough to gain from it (GzipMinBytes). Every
// answer says Vary: Accept-Encoding, so that a shared cache keeps the two
// forms apart. A client that does not accept gzip costs nothing more than
// that header: its writer is not wrapped.
func (s *Server) compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Accept-Encoding")
		if r.Method == http.MethodHead || !acceptsGzip(r.Header) {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w}
		defer gw.close()
		next.ServeHTTP(gw, r)
	})
}

// gzipWriter compresses an answer on its way to the client, without holding
// it: the handler's bytes go through the compressor straight into the
// connection's buffer. Whether to compress is decided when the header is
// written, from the status, the Content-Encoding and the Content-Length the
// handler set.
type gzipWriter struct {
	http.ResponseWriter
	gz          *gzip.Writer // nil unless this answer is compressed
	wroteHeader bool
}

// compresses reports whether an answer of n bytes written to w will be
// compressed: the handlers that make ETags ask it, since the compressed form
// is another representation and must have another tag (RFC 9110 §8.8.3).
func compresses(w http.ResponseWriter, n int) bool {
	for {
		switch u := w.(type) {
		case *gzipWriter:
			return n >= GzipMinBytes
		case *chargedWriter: // the handler's own wrapper (share.go)
			w = u.ResponseWriter
		default:
			return false
		}
	}
}

func (w *gzipWriter) WriteHeader(status int) {
	if w.wroteHeader || status < http.StatusOK { // informational answers come before the real header
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.wroteHeader = true
	h := w.Header()
	if worthCompressing(status, h) {
		h.Del("Content-Length") // of the uncompressed body; net/http counts or chunks the rest
		h.Set("Content-Encoding", "gzip")
		w.gz = gzipPool.Get().(*gzip.Writer)
		w.gz.Reset(w.ResponseWriter)
	}
	w.ResponseWriter.WriteHeader(status)
}

// worthCompressing reports whether an answer with this status and header
// gets compressed: one with a body, not encoded already (the Prometheus
// handler compresses its own), and at least GzipMinBytes long, or of a
// length unknown in advance (the OpenAPI document).
func worthCompressing(status int, h http.Header) bool {
	if status == http.StatusNoContent || status == http.StatusNotModified || h.Get("Content-Encoding") != "" {
		return false
	}
	if cl := h.Get("Content-Length"); cl != "" {
		n, err := strconv.Atoi(cl)
		return err == nil && n >= GzipMinBytes
	}
	return true
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.gz == nil {
		return w.ResponseWriter.Write(b)
	}
	return w.gz.Write(b)
}

// FlushError sends what the handler wrote so far to the client, through
// the compressor when the answer is compressed: the exports stream their
// chunks (http.ResponseController calls it).
func (w *gzipWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.gz != nil {
		if err := w.gz.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// close writes the end of the compressed stream, if the answer was
// compressed, and gives the compressor back.
func (w *gzipWriter) close() {
	if w.gz == nil {
		return
	}
	w.gz.Close() // a failed write means the client left; Reset makes the compressor whole on reuse
	gzipPool.Put(w.gz)
	w.gz = nil
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip
// (RFC 9110 §12.5.3): gzip or x-gzip with a q-value above 0, or, when
// neither is named, * above 0. No header means no compression: many
// clients that never asked for it could not read it.
func acceptsGzip(h http.Header) bool {
	gzipQ, starQ := -1, -1 // -1: not named; 0: refused; 1: accepted
	for _, v := range h["Accept-Encoding"] {
		for v != "" {
			var item string
			item, v, _ = strings.Cut(v, ",")
			name, params, _ := strings.Cut(item, ";")
			name = strings.TrimSpace(name)
			q := 1
			if qZero(params) {
				q = 0
			}
			switch {
			case strings.EqualFold(name, "gzip"), strings.EqualFold(name, "x-gzip"):
				gzipQ = max(gzipQ, q)
			case name == "*":
				starQ = max(starQ, q)
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// qZero reports whether the parameters of an Accept-Encoding member set
// q=0 (0, 0., 0.0, 0.00 or 0.000), which refuses the coding.
func qZero(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		value = strings.TrimSpace(value)
		if value == "" || value[0] != '0' {
			return false
		}
		return strings.Trim(value[1:], ".0") == "" && strings.Count(value, ".") <= 1
	}
	return false
}
