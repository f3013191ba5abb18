package http

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainquery/chainquery"
)

// Config configures a Server. Only Store is required.
type Config struct {
	// Store answers every request: the API reads its read services and
	// its API keys (store.go). It must not be nil.
	Store Store

	// Logger receives one line per request and the real text of internal
	// errors. Nil discards everything.
	Logger *slog.Logger

	// Now returns the current time; datetime_filter of Token Balance by
	// Account is checked against it. Nil means time.Now. Tests pin it.
	Now func() time.Time

	// TraceStart is the first time Filter Traces serves, per chain:
	// traces of blocks stamped earlier are left out. Nil means the
	// interface's default, polygon from 2025-01-01T00:00:00Z; a non-nil map
	// is used as given, and a chain missing from it has no bound.
	TraceStart map[chainquery.Chain]time.Time

	// TracedChains are the chains whose blocks this process's followers
	// store with traces (serve --config): Filter Traces and Get Block
	// serve them, besides polygon and every chain whose stored blocks hold
	// traces (traced.go).
	TracedChains []chainquery.Chain

	// TracedTTL is how long the store's answer to which chains its blocks
	// hold traces for is trusted before it is read again; 0 means
	// TracedTTL (the constant).
	TracedTTL time.Duration

	// RateLimit is how many requests per second each API key may make,
	// counted by the key's name after authentication; 0 means no limit. A
	// request over it gets 429 with Retry-After. /openapi.json and /healthz
	// are never limited.
	RateLimit float64

	// RateBurst is how many requests a key may make at once before
	// RateLimit paces it; 0 means max(1, ceil(RateLimit)). A key's own
	// KeyLimits.Rate and Burst override both.
	RateBurst int

	// RequestTimeout is the deadline of every request that needs an API
	// key, from its arrival: past it the store's statement is interrupted
	// and the client gets 503 saying the request was too expensive and how
	// to narrow it. 0 means DefaultRequestTimeout; a negative value sets no
	// deadline.
	RequestTimeout time.Duration

	// StoreConcurrency is how many requests may use the store at once, all
	// keys together (admission.go); 0 means DefaultStoreConcurrency, the SQLite
	// read pool's size. A negative value turns fair share off: no slots, no
	// queue, no cost budget.
	StoreConcurrency int

	// KeyDefaults are the limits of a key that sets none of its own: its
	// share of StoreConcurrency while other keys use the store (0: a
	// quarter of it; a key alone may hold all but one), and its cost budget (0:
	// DefaultCostRate ms of store time a second, a burst of
	// DefaultCostBurstSecs seconds of it). Its Rate and Burst are ignored:
	// RateLimit and RateBurst are the defaults of those.
	KeyDefaults chainquery.KeyLimits

	// QueueWait is how long a request may wait for a store slot before it
	// gets 429; 0 means DefaultQueueWait. QueueMax is how many requests of
	// one key may wait; 0 means DefaultQueueMax.
	QueueWait time.Duration
	QueueMax  int

	// KeyCacheTTL is how long an API key found in the store is trusted
	// before it is looked up again, so that revoking a key takes effect
	// within it. 0 means DefaultKeyCacheTTL; a negative value looks the key
	// up on every request.
	KeyCacheTTL time.Duration

	// Metrics serves Prometheus metrics at GET /metrics, without an API key
	// and never rate limited; restrict it at the network level. The metrics
	// are recorded either way, on the registry that Server.Registry returns.
	Metrics bool

	// Ready is what GET /readyz checks beyond the store (which must answer
	// and have applied every migration): an error makes it 503 with the
	// error's text as the detail. Nil checks nothing more.
	Ready func(ctx context.Context) error

	// Confirmations is, per chain, how many blocks below the latest indexed
	// one an answer's blocks must be for the answer to be cached: Get Block,
	// Get Block Receipts, Get Transaction Logs and Filter Traces answers about
	// such blocks get a strong ETag (If-None-Match gives 304) and
	// Cache-Control: max-age=3600; all other answers say no-cache. A chain
	// missing from the map, or a nil map, has no cached answers.
	Confirmations map[chainquery.Chain]uint64

	// AnswerCacheBytes bounds the memory of the answer cache: deep answers
	// (see Confirmations) kept encoded and served again without the store,
	// for at most an hour, least recently used first out. 0 keeps none;
	// serve's default is DefaultAnswerCacheBytes.
	AnswerCacheBytes int64

	// NodeHeads returns, for each chain this process follows (serve
	// --config), its node's head as the follower last heard it, 0 before it
	// has: GET /api/v1/customer/status adds it and the lag behind it to the
	// chain's indexed range. Nil: no chain is followed.
	NodeHeads func() map[chainquery.Chain]uint64

	// FollowErrors returns, for each chain this process follows that has
	// failed at least once, the follower's last error: the status endpoint
	// shows it, so that a follower which never reached its node says why.
	// Nil: no follower has failed.
	FollowErrors func() map[chainquery.Chain]FollowError
}

// FollowError is the last failure of a chain's follower (Config.FollowErrors):
// most often its node's (unreachable, refusing, another chain), sometimes the
// store's.
type FollowError struct {
	Text string    // the error's text, with the node's URL redacted
	Time time.Time // when it failed
}

// DefaultTraceStart is the trace start of the interface ("traces
// available from January 2025 onwards" on polygon), used when
// Config.TraceStart is nil.
func DefaultTraceStart() map[chainquery.Chain]time.Time {
	return map[chainquery.Chain]time.Time{
		chainquery.Polygon: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// DefaultRequestTimeout is the deadline of a keyed request when
// Config.RequestTimeout is 0: far above what any request of a well-formed
// query takes on the benchmark datasets, the heaviest Filter Traces page
// included (docs/benchmarks.md, "Fair share"), and short enough that a
// request that runs past it is refused before a client's own timeout gives
// up on it.
const DefaultRequestTimeout = 5 * time.Second

// Timeouts of the *http.Server that Serve runs. A slow or stalled client
// must not hold a connection (and a goroutine) forever; the write timeout
// leaves room for the slowest legitimate query.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 15 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 120 * time.Second
)

// Server is the HTTP API. It is safe for concurrent use.
type Server struct {
	store        Store
	keys         *keyCache
	logger       *slog.Logger
	now          func() time.Time
	historyStart map[chainquery.Chain]time.Time
	limiter      *rateLimiter
	admission    *admission    // nil: no fair share
	timeout      time.Duration // of a keyed request; 0: none
	metrics      *metrics
	serveMetrics bool // GET /metrics is routed
	ready        func(ctx context.Context) error
	nodeHeads    func() map[chainquery.Chain]uint64
	followErrors func() map[chainquery.Chain]FollowError
	heads        heads        // per chain with confirmations: its latest block, as last read
	traced       tracedChains // the chains Filter Traces and Get Block serve
	answers      *answerCache // nil: no answer cache
	export       exportLimits // an export's sizes (exports.go); zero: the defaults

	routes  []route
	handler http.Handler
	docs    atomic.Pointer[apiDocs] // the OpenAPI document and the docs page, for the traced chains last served
	docsMu  sync.Mutex              // one build at a time
	server  *http.Server
}

// NewServer returns a Server for cfg. It builds the route table, the mux and
// the OpenAPI document once, so that requests only read them; the
// document is built again only when the chains the traced operations
// serve change (apiDocs).
func NewServer(cfg Config) *Server {
	s := &Server{
		store:        cfg.Store,
		keys:         newKeyCache(cmp.Or(cfg.KeyCacheTTL, DefaultKeyCacheTTL)),
		logger:       cfg.Logger,
		now:          cfg.Now,
		historyStart: make(map[chainquery.Chain]time.Time),
		limiter:      newRateLimiter(cfg.RateLimit, cfg.RateBurst),
		timeout:      max(0, cmp.Or(cfg.RequestTimeout, DefaultRequestTimeout)),
		metrics:      newMetrics(),
		serveMetrics: cfg.Metrics,
		ready:        cfg.Ready,
		nodeHeads:    cfg.NodeHeads,
		followErrors: cfg.FollowErrors,
		heads:        newHeads(cfg.Confirmations),
		answers:      newAnswerCache(cfg.AnswerCacheBytes),
		traced:       tracedChains{configured: slices.Clone(cfg.TracedChains), ttl: cmp.Or(cfg.TracedTTL, TracedTTL)},
	}
	if s.logger == nil {
		s.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.admission = newAdmissionFor(cfg)
	start := cfg.TraceStart
	if start == nil {
		start = DefaultTraceStart()
	}
	for c, t := range start { // a copy: the caller may change its map later
		s.historyStart[c] = t
	}
	s.routes = s.routeTable()
	s.docs.Store(s.buildDocs(s.tracedWithoutStore()))
	s.handler = s.logRequests(s.compress(cacheControl(s.newMux())))
	s.server = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler returns the whole API with its middleware: request logging and
// metrics, panic recovery, compression, caching headers, routing and
// authentication. Tests serve it directly.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve accepts connections on ln until Shutdown is called. Like
// http.Server.Serve it always returns a non-nil error: http.ErrServerClosed
// after Shutdown, anything else when the listener breaks.
func (s *Server) Serve(ln net.Listener) error { return s.server.Serve(ln) }

// Shutdown stops accepting connections and waits for in-flight requests to
// finish, or for ctx to end, whichever comes first (then it returns ctx's
// error). Calling it before Serve makes Serve return at once.
func (s *Server) Shutdown(ctx context.Context) error { return s.server.Shutdown(ctx) }

// handleHealth answers the liveness probe. It needs no key and touches no
// store, so that it tells whether the process serves at all.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{"ok"})
	return nil
}

// readyTimeout bounds the checks of one GET /readyz: a database slower
// than this to answer is as good as down for the API.
const readyTimeout = 5 * time.Second

// handleReady answers whether this server can serve: its store answers and
// has applied every migration it has, and Config.Ready passes. Unlike
// /healthz (liveness, no store), a load balancer takes a server that
// answers 503 here out of rotation until it is ready again.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	detail := ""
	if err := s.store.Ping(ctx); err != nil {
		detail = "the database is unavailable"
		s.logger.WarnContext(ctx, "not ready", "error", err)
	} else if pending, err := s.store.PendingMigrations(ctx); err != nil {
		detail = "the database is unavailable"
		s.logger.WarnContext(ctx, "not ready", "error", err)
	} else if len(pending) > 0 {
		detail = "the database schema is behind this server: migrations " + strings.Join(pending, ", ") +
			" are not applied (a chainquery command of this version applies them when it opens the database)"
	} else if s.ready != nil {
		if err := s.ready(ctx); err != nil {
			detail = err.Error()
		}
	}
	if detail != "" {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Detail: detail})
		return nil
	}
	writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{"ready"})
	return nil
}

// handleOpenAPI serves the OpenAPI document, for the chains the traced
// operations serve now.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(s.apiDocs(r.Context()).spec) // a failed write means the client left; nothing to tell it
	return nil
}
