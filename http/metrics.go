package http

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// pathMetrics serves the Prometheus metrics when Config.Metrics is true. It
// is an operator's endpoint, not part of the customer API: it needs no key,
// is never rate limited and is left out of the OpenAPI document (its answer
// is the Prometheus text format, not JSON). Operators restrict it at the
// network level.
const pathMetrics = "/metrics"

// unmatchedRoute is the route label of requests that match no path.
const unmatchedRoute = "unmatched"

// metrics are the Server's Prometheus collectors, on a registry of its own
// rather than the global default, so that several servers (and tests) in one
// process do not collide. Every label has a bounded set of values: the route
// is a pattern of the route table or "unmatched", never the raw path, and
// the method is a standard method or "other".
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec   // route, method, status
	duration *prometheus.HistogramVec // route, method
	inFlight prometheus.Gauge

	answerCache *prometheus.CounterVec // result: hit or miss

	admissions *prometheus.CounterVec   // route, result (admission.go)
	cost       *prometheus.HistogramVec // route
	timeouts   *prometheus.CounterVec   // route
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainquery_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chainquery_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chainquery_http_requests_in_flight",
			Help: "HTTP requests being answered now.",
		}),
		answerCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainquery_http_answer_cache_lookups_total",
			Help: "Lookups of requests whose answer may be deep in the answer cache, by result (hit or miss).",
		}, []string{"result"}),
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainquery_http_admissions_total",
			Help: "Keyed requests that needed the database, by route pattern and what admission did: admitted (a slot was free), queued (admitted after waiting), or refused with 429: cost (the key's cost budget was spent), queue_full, queue_timeout, canceled (the client left or the deadline passed while waiting).",
		}, []string{"route", "result"}),
		cost: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chainquery_http_request_cost_seconds",
			Help:    "Database time an admitted request was charged (its X-Request-Cost, in seconds), by route pattern.",
			Buckets: []float64{.0001, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainquery_http_request_timeouts_total",
			Help: "Requests that ran past the request deadline and were answered 503, by route pattern.",
		}, []string{"route"}),
	}
	m.registry.MustRegister(
		m.requests, m.duration, m.inFlight, m.answerCache, m.admissions, m.cost, m.timeouts,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// observe records one answered request. route is a route pattern, or "" for
// a request that matched no path.
func (m *metrics) observe(route, method string, status int, d time.Duration) {
	if route == "" {
		route = unmatchedRoute
	}
	method = methodLabel(method)
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route, method).Observe(d.Seconds())
}

// methodLabel bounds the method label: a client may send any token as the
// method.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}

// Registry returns the Prometheus registry the Server's metrics live on, so
// that the caller can register collectors of its own, served at /metrics
// along with the HTTP ones. It is never nil, even when Config.Metrics is
// false (then nothing serves it).
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

// metricsRoute is the route of /metrics. It is not in the route table, so
// that the OpenAPI document leaves it out.
func (s *Server) metricsRoute() route {
	h := promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})
	return route{
		method:  http.MethodGet,
		pattern: pathMetrics,
		handle: func(w http.ResponseWriter, r *http.Request) error {
			h.ServeHTTP(w, r)
			return nil
		},
	}
}
