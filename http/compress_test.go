package http_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// Raw sends a request with the all-endpoints key and exactly the headers
// given (name, value, ...): unlike Do, the client neither asks for gzip by
// itself nor decompresses, so the test sees the bytes on the wire. The
// answer is not checked against the OpenAPI document.
func (s *Server) Raw(tb testing.TB, method, path, body string, header ...string) Response {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.HTTP.URL+path, r)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("apikey", s.Key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// gunzip returns the decompressed body of a gzip answer, checking that the
// stream is whole (its CRC and length trailer) and holds one member.
func gunzip(tb testing.TB, b []byte) []byte {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("not gzip: %v", err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("gzip stream: %v", err)
	}
	return out
}

// varies reports whether the Vary header names h.
func varies(resp Response, h string) bool {
	for _, v := range resp.Header.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), h) {
				return true
			}
		}
	}
	return false
}

func TestGzip(t *testing.T) {
	s := MustOpenServer(t, func(c *cqhttp.Config) { c.Metrics = true })
	full := blockPath("polygon", fmt.Sprintf("?block_number=%d&full_transactions=true", storetest.PolygonBlock))
	plain := s.Raw(t, "GET", full, "")
	if plain.Status != http.StatusOK || len(plain.Body) < cqhttp.GzipMinBytes {
		t.Fatalf("the full block: status %d, %d bytes; the test needs a 200 of at least %d", plain.Status, len(plain.Body), cqhttp.GzipMinBytes)
	}

	t.Run("NoAcceptEncoding", func(t *testing.T) {
		if ce := plain.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("Content-Encoding %q without Accept-Encoding", ce)
		}
		if cl := plain.Header.Get("Content-Length"); cl != strconv.Itoa(len(plain.Body)) {
			t.Errorf("Content-Length %q, body %d bytes", cl, len(plain.Body))
		}
		if !varies(plain, "Accept-Encoding") {
			t.Errorf("Vary %q, want Accept-Encoding", plain.Header.Values("Vary"))
		}
	})

	t.Run("Compressed", func(t *testing.T) {
		resp := s.Raw(t, "GET", full, "", "Accept-Encoding", "gzip")
		if resp.Status != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("status %d, Content-Encoding %q, want 200 gzip", resp.Status, resp.Header.Get("Content-Encoding"))
		}
		if cl := resp.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(resp.Body)) {
			t.Errorf("Content-Length %s is not the compressed length %d", cl, len(resp.Body))
		}
		if !varies(resp, "Accept-Encoding") {
			t.Errorf("Vary %q, want Accept-Encoding", resp.Header.Values("Vary"))
		}
		if len(resp.Body) >= len(plain.Body) {
			t.Errorf("compressed %d bytes, plain %d", len(resp.Body), len(plain.Body))
		}
		got := gunzip(t, resp.Body)
		if !bytes.Equal(got, plain.Body) {
			t.Fatalf("decompressed body differs:\n got: %s\nwant: %s", got, plain.Body)
		}
		// The decompressed answer is still the documented one.
		resp.Header.Del("Content-Encoding")
		resp.Body = got
		req, _ := http.NewRequest("GET", s.HTTP.URL+full, nil)
		s.Doc(t).check(t, req, nil, resp)
	})

	t.Run("AcceptEncoding", func(t *testing.T) {
		for _, tc := range []struct {
			header string
			gzip   bool
		}{
			{"gzip", true},
			{"GZIP", true},
			{"x-gzip", true},
			{"deflate, gzip;q=0.5, br", true},
			{"br;q=1.0, gzip ; q=0.001", true},
			{"*", true},
			{"*;q=0, gzip", true},
			{"identity", false},
			{"deflate, br", false},
			{"gzip;q=0", false},
			{"gzip; q=0.000", false},
			{"gzip;q=0, *", false},
			{"*;q=0", false},
			{"", false},
		} {
			resp := s.Raw(t, "GET", full, "", "Accept-Encoding", tc.header)
			if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
				t.Errorf("Accept-Encoding %q: gzip %v, want %v", tc.header, got, tc.gzip)
			}
		}
		// Two header lines are one list.
		resp := s.Raw(t, "GET", full, "", "Accept-Encoding", "br", "Accept-Encoding", "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("gzip in a second Accept-Encoding line: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
		}
	})

	t.Run("SmallAnswersPlain", func(t *testing.T) {
		for _, path := range []string{
			"/api/v1/customer/polygon/blocks/latest",
			blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonEmptyBlock)),
			"/healthz",
		} {
			resp := s.Raw(t, "GET", path, "", "Accept-Encoding", "gzip")
			if resp.Status != http.StatusOK || resp.Header.Get("Content-Encoding") != "" || len(resp.Body) >= cqhttp.GzipMinBytes {
				t.Errorf("%s: status %d, Content-Encoding %q, %d bytes; want a plain 200 under %d bytes",
					path, resp.Status, resp.Header.Get("Content-Encoding"), len(resp.Body), cqhttp.GzipMinBytes)
			}
			if !varies(resp, "Accept-Encoding") {
				t.Errorf("%s: Vary %q, want Accept-Encoding", path, resp.Header.Values("Vary"))
			}
		}
	})

	t.Run("Errors", func(t *testing.T) {
		for _, tc := range []struct {
			method, path, body string
			status             int
		}{
			{"GET", blockPath("polygon", "?block_number=1"), "", http.StatusNotFound},
			{"GET", blockPath("polygon", ""), "", http.StatusBadRequest},
			{"POST", tracesPath, strings.Repeat(" ", cqhttp.MaxBodyBytes+1), http.StatusRequestEntityTooLarge},
			{"DELETE", full, "", http.StatusMethodNotAllowed},
		} {
			resp := s.Raw(t, tc.method, tc.path, tc.body, "Accept-Encoding", "gzip")
			if resp.Header.Get("Content-Encoding") == "gzip" {
				resp.Body = gunzip(t, resp.Body)
			}
			MustErrorDetail(t, resp, tc.status)
		}
	})

	t.Run("OpenAPIDocument", func(t *testing.T) {
		want := s.Raw(t, "GET", "/openapi.json", "")
		resp := s.Raw(t, "GET", "/openapi.json", "", "Accept-Encoding", "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
		}
		if got := gunzip(t, resp.Body); !bytes.Equal(got, want.Body) {
			t.Errorf("decompressed document differs from the plain one (%d and %d bytes)", len(got), len(want.Body))
		}
	})

	t.Run("MetricsCompressedOnce", func(t *testing.T) {
		resp := s.Raw(t, "GET", "/metrics", "", "Accept-Encoding", "gzip")
		if resp.Status != http.StatusOK || resp.Header.Values("Content-Encoding")[0] != "gzip" || len(resp.Header.Values("Content-Encoding")) != 1 {
			t.Fatalf("status %d, Content-Encoding %q, want 200 and gzip once", resp.Status, resp.Header.Values("Content-Encoding"))
		}
		if got := gunzip(t, resp.Body); !bytes.Contains(got, []byte("# TYPE")) {
			t.Errorf("decompressed metrics are not the text format: %.200s", got)
		}
	})

	t.Run("LogCountsWireBytes", func(t *testing.T) {
		s.Logs.Reset()
		resp := s.Raw(t, "GET", full, "", "Accept-Encoding", "gzip")
		if want := fmt.Sprintf("response_bytes=%d ", len(resp.Body)); !strings.Contains(s.Logs.String(), want) {
			t.Errorf("the request log does not say %q: %s", want, s.Logs.String())
		}
	})
}

// TestGzip_Concurrent checks that the pooled compressors never mix two
// answers: many requests at once, each decompressed and compared.
func TestGzip_Concurrent(t *testing.T) {
	s := MustOpenServer(t)
	paths := []string{
		blockPath("polygon", fmt.Sprintf("?block_number=%d&full_transactions=true", storetest.PolygonBlock)),
		receiptsPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonBlock)),
		logsPath("polygon", storetest.TxNested.Hex()),
	}
	want := make([][]byte, len(paths))
	for i, p := range paths {
		want[i] = s.Raw(t, "GET", p, "").Body
	}
	errs := make(chan error, 60)
	for i := range cap(errs) {
		go func() {
			p := i % len(paths)
			errs <- getGzip(s.HTTP.URL+paths[p], s.Key, want[p])
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// getGzip asks for url with gzip and checks that the answer decompresses to
// want; it is safe to call from any goroutine.
func getGzip(url, key string, want []byte) error {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("apikey", key)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req) // an explicit Accept-Encoding: the client leaves the body as it is
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %v", url, err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("%s: %v", url, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s: decompressed body differs", url)
	}
	return nil
}
