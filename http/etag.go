package http

import (
	"encoding/hex"
	"hash/crc32"
	"net/http"
	"strings"
)

// deepMaxAge is how long a cache may serve a deep answer without asking
// again. A reorg deeper than the confirmations would leave a cached answer
// stale for at most this long; an hour keeps that bounded while a client
// that asks again still gets a 304 from its ETag.
const deepMaxAge = "max-age=3600"

// cacheControl sets Cache-Control: no-cache on every answer before next
// runs; the handlers of deep answers replace it. An answer that is not deep
// has no validator either, so a cache that asks again gets it in full.
func cacheControl(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// writeAnswer writes a, the 200 answer to r. A deep answer is kept in the
// answer cache when the request was looked up there (answer_cache.go), and
// written by writeDeep. Any other answer goes as writeJSON sends it.
func (s *Server) writeAnswer(w http.ResponseWriter, r *http.Request, a jsonAppender, deep deepAnswer) {
	if !deep.ok {
		writeJSON(w, http.StatusOK, a)
		return
	}
	bp := bufferPool.Get().(*[]byte)
	b := append(a.appendJSON((*bp)[:0]), '\n')
	tag := etag(b)
	s.keep(r, deep, b, tag)
	s.writeDeep(w, r, b, tag)
	if cap(b) <= maxPooledBuffer {
		*bp = b[:0]
		bufferPool.Put(bp)
	}
}

// writeDeep writes b, a deep 200 answer to r whose uncompressed form has the
// ETag tag. It gets the tag (with "-gzip" when compressed), Cache-Control for
// deepMaxAge and Vary: apikey (a shared cache must not hand one key's answer
// to a request without one); when r's If-None-Match matches the tag the
// answer is 304 with no body.
func (s *Server) writeDeep(w http.ResponseWriter, r *http.Request, b []byte, tag string) {
	if compresses(w, len(b)) {
		tag = tag[:len(tag)-1] + `-gzip"`
	}
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", deepMaxAge)
	h.Add("Vary", "apikey")
	if noneMatch(r.Header["If-None-Match"], tag) {
		writeBody(w, http.StatusOK, b)
	} else {
		w.WriteHeader(http.StatusNotModified)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// etag returns the strong entity tag of the answer b: two CRC-32s of
// different polynomials, 64 bits that change with any change of the bytes
// (a reorg's new block hash, a trace's version), computed with the CPU's CRC
// instructions many times faster than a cryptographic hash would be
// (docs/benchmarks.md, "Compression"). The compressed form is another
// representation and gets "-gzip" after the same digits (writeDeep). Equal
// bytes give equal tags on every server, so replicas behind one cache agree.
func etag(b []byte) string {
	var sum [8]byte
	ieee, c := crc32.ChecksumIEEE(b), crc32.Checksum(b, castagnoli)
	sum[0], sum[1], sum[2], sum[3] = byte(ieee>>24), byte(ieee>>16), byte(ieee>>8), byte(ieee)
	sum[4], sum[5], sum[6], sum[7] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
	tag := make([]byte, 0, 24)
	tag = append(tag, '"')
	tag = hex.AppendEncode(tag, sum[:])
	return string(append(tag, '"'))
}

// noneMatch reports whether the If-None-Match header values let the request
// through, that is whether none of their entity tags matches tag by the weak
// comparison (RFC 9110 §13.1.2: W/ is ignored) and none is "*". An absent
// header lets every request through; a malformed one is ignored as a whole,
// as the RFC allows for a header the server cannot parse.
func noneMatch(values []string, tag string) bool {
	for _, v := range values {
		for {
			v = strings.TrimLeft(v, " \t,")
			if v == "" {
				break
			}
			if v[0] == '*' {
				return false
			}
			v = strings.TrimPrefix(v, "W/")
			if v == "" || v[0] != '"' {
				return true // malformed
			}
			end := strings.IndexByte(v[1:], '"')
			if end < 0 {
				return true // malformed
			}
			if v[:end+2] == tag {
				return false
			}
			v = v[end+2:]
		}
	}
	return true
}
