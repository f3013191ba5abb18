package http

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chainquery/chainquery"
)

// TracedTTL is how long the chains whose stored blocks hold traces, as
// the store last reported them, are trusted before they are read again: a
// chain an ingester starts tracing is served within it.
const TracedTTL = 10 * time.Second

// tracedChains says which chains Filter Traces and Get Block serve: polygon,
// the chain of the hosted interface; the chains this process's followers
// trace (Config.TracedChains); and every chain whose stored blocks hold
// traces, whichever process wrote them, as the store's indexing status
// says (the status endpoint's traces_indexed).
type tracedChains struct {
	configured []chainquery.Chain
	ttl        time.Duration // how long a reading is trusted
	stored     atomic.Pointer[tracedReading]
	refreshing atomic.Bool
}

// tracedReading is the store's answer at a time.
type tracedReading struct {
	chains []chainquery.Chain
	at     time.Time
}

// tracedEndpoints are the endpoints that serve the chains whose traces
// this server indexes, not every EVM chain: each checks its chain with
// tracedChain, and the OpenAPI document lists those chains in their
// chain enums (apiDocs).
var tracedEndpoints = []chainquery.Endpoint{chainquery.EndpointGetBlock, chainquery.EndpointFilterTraces, chainquery.EndpointExportTraces}

// apiDocs is the OpenAPI document and the docs page that holds it, built
// for one list of traced chains.
type apiDocs struct {
	traced     []chainquery.Chain
	spec, page []byte
}

func (s *Server) buildDocs(traced []chainquery.Chain) *apiDocs {
	spec := buildOpenAPI(s.routes, traced)
	return &apiDocs{traced: traced, spec: spec, page: docsPageFor(loadDocs(), spec)}
}

// apiDocs returns the document for the chains the traced operations serve
// now: what a request the document calls valid is served, and an untraced
// chain is in no traced operation's enum. It is built again only when
// those chains change (an ingester starts tracing a chain).
func (s *Server) apiDocs(ctx context.Context) *apiDocs {
	traced := s.servedTracedChains(ctx)
	if d := s.docs.Load(); slices.Equal(d.traced, traced) {
		return d
	}
	s.docsMu.Lock()
	defer s.docsMu.Unlock()
	if d := s.docs.Load(); slices.Equal(d.traced, traced) {
		return d
	}
	d := s.buildDocs(traced)
	s.docs.Store(d)
	return d
}

// tracedWithoutStore is servedTracedChains before the store is asked:
// polygon and the configured chains.
func (s *Server) tracedWithoutStore() []chainquery.Chain { return s.tracedWith(nil) }

// tracedChain returns the chain named name if endpoint serves it here,
// else EINVALID naming the chains that it serves.
func (s *Server) tracedChain(ctx context.Context, endpoint chainquery.Endpoint, name string) (chainquery.Chain, error) {
	chain, err := chainquery.ParseChain(endpoint, name)
	if err == nil && (chain == chainquery.Polygon || slices.Contains(s.traced.configured, chain)) {
		return chain, nil // no need to ask the store
	}
	served := s.servedTracedChains(ctx)
	if err == nil && slices.Contains(served, chain) {
		return chain, nil
	}
	names := make([]string, len(served))
	for i, c := range served {
		names[i] = string(c)
	}
	return "", chainquery.Errorf(chainquery.EINVALID,
		"chain must be one of: %s (the chains whose traces this server indexes: see /api/v1/customer/status, traces_indexed)",
		strings.Join(names, ", "))
}

// servedTracedChains returns the chains Filter Traces and Get Block serve, in
// the order of chainquery.EVMChains.
func (s *Server) servedTracedChains(ctx context.Context) []chainquery.Chain {
	var stored []chainquery.Chain
	if r := s.readTraced(ctx); r != nil {
		stored = r.chains
	}
	return s.tracedWith(stored)
}

// tracedWith returns polygon, the configured chains and stored, in the
// order of chainquery.EVMChains.
func (s *Server) tracedWith(stored []chainquery.Chain) []chainquery.Chain {
	var out []chainquery.Chain
	for _, c := range chainquery.EVMChains {
		if c == chainquery.Polygon || slices.Contains(s.traced.configured, c) || slices.Contains(stored, c) {
			out = append(out, c)
		}
	}
	return out
}

// readTraced returns the store's traced chains, read again when older
// than its TTL by one request at a time (the others keep the last
// reading meanwhile); nil when the store has never answered.
func (s *Server) readTraced(ctx context.Context) *tracedReading {
	r := s.traced.stored.Load()
	if r != nil && time.Since(r.at) < s.traced.ttl {
		return r
	}
	if r != nil {
		if !s.traced.refreshing.CompareAndSwap(false, true) {
			return r
		}
		defer s.traced.refreshing.Store(false)
	}
	st, err := s.store.IndexStatus(ctx)
	if err != nil {
		// The error is the answer's: the chain is refused as if untraced,
		// and the next request asks again.
		s.logger.DebugContext(ctx, "indexing status for the traced chains", "error", err)
		return r
	}
	next := &tracedReading{at: time.Now()}
	for _, c := range st.Chains {
		if c.TracesFrom != nil {
			next.chains = append(next.chains, c.Chain)
		}
	}
	s.traced.stored.Store(next)
	return next
}
