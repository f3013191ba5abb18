package http_test

import (
	"net/http"
	"strconv"
	"testing"

	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

func limited(perSecond float64, burst int) func(*cqhttp.Config) {
	return func(c *cqhttp.Config) { c.RateLimit, c.RateBurst = perSecond, burst }
}

func TestRateLimit(t *testing.T) {
	t.Run("OverBurst", func(t *testing.T) {
		s := MustOpenServer(t, limited(1, 2))
		MustOK(t, s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil))
		MustOK(t, s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil))
		resp := s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil)
		detail := MustErrorDetail(t, resp, http.StatusTooManyRequests)
		if want := "rate limit exceeded for this API key: 1 requests per second"; detail != want {
			t.Errorf("detail = %q, want %q", detail, want)
		}
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("Retry-After = %q, want whole seconds >= 1", resp.Header.Get("Retry-After"))
		}

		// Another key has a bucket of its own.
		MustOK(t, s.Do(t, http.MethodGet, logsPath("polygon", storetest.TxNested.Hex()), s.LogsKey, nil))

		// Authentication comes first: bad keys and keys not enabled for the
		// endpoint are told so, not rate limited.
		for _, key := range []string{NoKey, "", "wrong", s.RevokedKey} {
			MustErrorDetail(t, s.Do(t, http.MethodGet, latestPath("polygon"), key, nil), http.StatusUnauthorized)
		}
		MustErrorDetail(t, s.Do(t, http.MethodGet, latestPath("polygon"), s.LogsKey, nil), http.StatusForbidden)

		// The public routes are never limited.
		for range 5 {
			MustOK(t, s.Do(t, http.MethodGet, "/healthz", s.Key, nil))
			MustOK(t, s.Do(t, http.MethodGet, "/openapi.json", NoKey, nil))
		}
	})

	t.Run("DefaultBurst", func(t *testing.T) {
		s := MustOpenServer(t, limited(0.5, 0)) // burst max(1, ceil(0.5)) = 1
		MustOK(t, s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil))
		resp := s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil)
		detail := MustErrorDetail(t, resp, http.StatusTooManyRequests)
		if want := "rate limit exceeded for this API key: 0.5 requests per second"; detail != want {
			t.Errorf("detail = %q, want %q", detail, want)
		}
		// The next token is about 2 s away.
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 || n > 2 {
			t.Errorf("Retry-After = %q, want 1 or 2", resp.Header.Get("Retry-After"))
		}
		// A refused request does not use up a token: still refused, not
		// pushed further back.
		resp = s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil)
		MustErrorDetail(t, resp, http.StatusTooManyRequests)
		if n, _ := strconv.Atoi(resp.Header.Get("Retry-After")); n > 2 {
			t.Errorf("Retry-After = %d after a refused request, want at most 2", n)
		}
	})

	t.Run("Off", func(t *testing.T) {
		s := MustOpenServer(t, limited(0, 1))
		for range 20 {
			MustOK(t, s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil))
		}
	})
}

func TestDefaultRateBurst(t *testing.T) {
	for _, tc := range []struct {
		perSecond float64
		want      int
	}{{0, 1}, {0.2, 1}, {1, 1}, {1.5, 2}, {10, 10}} {
		if got := cqhttp.DefaultRateBurst(tc.perSecond); got != tc.want {
			t.Errorf("DefaultRateBurst(%v) = %d, want %d", tc.perSecond, got, tc.want)
		}
	}
}
