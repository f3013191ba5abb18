package http_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	cqhttp "github.com/chainquery/chainquery/http"
)

func withMetrics(c *cqhttp.Config) { c.Metrics = true }

func TestMetrics(t *testing.T) {
	s := MustOpenServer(t, withMetrics)
	latest := latestPath("polygon")
	const pattern = "/api/v1/customer/{chain}/blocks/latest"
	for _, tc := range []struct {
		method, path, key string
		status            int
	}{
		{"GET", latest, s.Key, 200},
		{"GET", latest, s.Key, 200},
		{"GET", latest, NoKey, 401},
		{"GET", "/no/such/path", s.Key, 404},
		{"DELETE", latest, s.Key, 405},
		{"BREW", latest, s.Key, 405},
		{"GET", "/healthz", NoKey, 200},
	} {
		if resp := s.Do(t, tc.method, tc.path, tc.key, nil); resp.Status != tc.status {
			t.Fatalf("%s %s: status %d, want %d: %s", tc.method, tc.path, resp.Status, tc.status, resp.Body)
		}
	}

	resp := s.Do(t, http.MethodGet, "/metrics", NoKey, nil) // no key needed
	if resp.Status != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", resp.Status, resp.Body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want text/plain", ct)
	}
	text := string(resp.Body)
	for _, want := range []string{
		`chainquery_http_requests_total{method="GET",route="` + pattern + `",status="200"} 2`,
		`chainquery_http_requests_total{method="GET",route="` + pattern + `",status="401"} 1`,
		`chainquery_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`chainquery_http_requests_total{method="DELETE",route="` + pattern + `",status="405"} 1`,
		`chainquery_http_requests_total{method="other",route="` + pattern + `",status="405"} 1`,
		`chainquery_http_requests_total{method="GET",route="/healthz",status="200"} 1`,
		`chainquery_http_request_duration_seconds_count{method="GET",route="` + pattern + `"} 3`,
		`chainquery_http_request_duration_seconds_bucket{method="GET",route="unmatched",le="+Inf"} 1`,
		// The scrape itself is in flight while the metrics are gathered.
		"chainquery_http_requests_in_flight 1\n",
		"go_goroutines ",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Labels never carry a raw path or an unknown method.
	for _, bad := range []string{"/no/such/path", "polygon", "BREW"} {
		if strings.Contains(text, bad) {
			t.Errorf("/metrics contains %q: unbounded label", bad)
		}
	}

	// The scrape of the first one is counted in the next.
	if text := string(s.Do(t, http.MethodGet, "/metrics", NoKey, nil).Body); !strings.Contains(text,
		`chainquery_http_requests_total{method="GET",route="/metrics",status="200"} 1`) {
		t.Errorf("the /metrics scrape is not counted")
	}

	// Collectors registered by the caller are served too.
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "chainquery_test_gauge", Help: "A test gauge."})
	g.Set(42)
	s.Registry().MustRegister(g)
	if text := string(s.Do(t, http.MethodGet, "/metrics", NoKey, nil).Body); !strings.Contains(text, "chainquery_test_gauge 42\n") {
		t.Errorf("/metrics lacks a gauge registered on Registry()")
	}

	// /metrics is an operator's endpoint, not part of the documented API.
	if _, ok := openAPI(t, s)["paths"].(map[string]any)["/metrics"]; ok {
		t.Errorf("the OpenAPI document lists /metrics")
	}
}

// TestMetrics_Registries checks that each server has a registry of its own:
// two servers in one process neither panic on registration nor share counts.
func TestMetrics_Registries(t *testing.T) {
	a := MustOpenServer(t, withMetrics)
	b := MustOpenServer(t, withMetrics)
	if a.Registry() == b.Registry() || a.Registry() == prometheus.DefaultRegisterer {
		t.Fatal("servers share a registry")
	}
	a.Do(t, http.MethodGet, "/healthz", NoKey, nil)
	if text := string(b.Do(t, http.MethodGet, "/metrics", NoKey, nil).Body); strings.Contains(text, `route="/healthz"`) {
		t.Errorf("server b counts a request to server a")
	}
}

func TestMetrics_Disabled(t *testing.T) {
	s := MustOpenServer(t) // Config.Metrics is false
	MustErrorDetail(t, s.Do(t, http.MethodGet, "/metrics", NoKey, nil), http.StatusNotFound)
	MustErrorDetail(t, s.Do(t, http.MethodGet, "/metrics", s.Key, nil), http.StatusNotFound)
	if s.Registry() == nil {
		t.Fatal("Registry() is nil with metrics off")
	}
}

// TestMetrics_NotRateLimited checks that scrapes do not use up a key's
// budget, nor get 429 themselves.
func TestMetrics_NotRateLimited(t *testing.T) {
	s := MustOpenServer(t, withMetrics, func(c *cqhttp.Config) { c.RateLimit, c.RateBurst = 0.001, 1 })
	for range 3 {
		if resp := s.Do(t, http.MethodGet, "/metrics", s.Key, nil); resp.Status != http.StatusOK {
			t.Fatalf("GET /metrics: status %d", resp.Status)
		}
	}
	if resp := s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil); resp.Status != http.StatusOK {
		t.Fatalf("first keyed request: status %d", resp.Status)
	}
}
