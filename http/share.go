package http

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/chainquery/chainquery"
)

// Headers of a keyed answer that used the store (admission.go): what the request
// cost, in milliseconds of store time, and what is left of the key's cost
// budget after it (below zero when the request cost more than was left: the
// key's next requests wait until it refills). A cached answer says cost 0.
const (
	headerCost      = "X-Request-Cost"
	headerCostLeft  = "X-Cost-Remaining"
	headerCostLimit = "X-Cost-Limit"
)

// serveKeyed runs a keyed route's handler under the request's deadline and
// the key's share of the store: admitted (or refused with 429 and
// Retry-After), charged when the handler writes its answer, and, when the
// deadline passes first, answered 503 with how to narrow the request.
func (s *Server) serveKeyed(w http.ResponseWriter, r *http.Request, rt route, key *chainquery.APIKey) {
	if isExport(rt.endpoint) {
		s.serveExport(w, r, rt, key) // admitted a chunk at a time
		return
	}
	parent := r.Context()
	ctx := parent
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, s.timeout)
		defer cancel()
		r = r.WithContext(ctx)
	}
	t, rej := s.admit(ctx, key, rt.pattern)
	if rej != nil {
		w.Header().Set("Retry-After", strconv.Itoa(rej.retryAfter))
		s.writeError(w, r, rej.err)
		return
	}
	cw := &chargedWriter{ResponseWriter: w, t: t}
	err := rt.handle(cw, r)
	if timeout := s.timedOut(ctx, parent, err, rt, "it"); timeout != nil {
		cw.Header().Set("Retry-After", "1")
		err = timeout
	}
	if err != nil {
		s.writeError(cw, r, err)
	}
	s.charge(t, rt.pattern)
}

// admit admits a read of key to its share of the store, counting the
// outcome in the metrics under the route's pattern.
func (s *Server) admit(ctx context.Context, key *chainquery.APIKey, pattern string) (*ticket, *rejection) {
	t, rej := s.admission.admit(ctx, key)
	if rej != nil {
		s.metrics.admissions.WithLabelValues(pattern, rej.reason).Inc()
		return nil, rej
	}
	if s.admission != nil {
		result := "admitted"
		if t.waited {
			result = "queued"
		}
		s.metrics.admissions.WithLabelValues(pattern, result).Inc()
	}
	return t, nil
}

// charge ends t's hold on the store and records its cost.
func (s *Server) charge(t *ticket, pattern string) {
	t.done()
	if s.admission != nil {
		s.metrics.cost.WithLabelValues(pattern).Observe(t.cost / 1000)
	}
}

// timedOut returns the answer to a read (what: "it", or the part of the
// request it was) whose error err came from ctx's deadline passing while
// parent, the client's context, was still live, and counts it; nil when
// err is something else.
func (s *Server) timedOut(ctx, parent context.Context, err error, rt route, what string) error {
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) || parent.Err() != nil {
		return nil
	}
	s.metrics.timeouts.WithLabelValues(rt.pattern).Inc()
	return chainquery.Errorf(chainquery.ETIMEOUT,
		"the request was too expensive: %s did not finish within the %s this server allows a request; %s",
		what, s.timeout, narrowHint(rt.endpoint))
}

// narrowHint tells how to make a request of endpoint cheaper.
func narrowHint(e chainquery.Endpoint) string {
	switch e {
	case chainquery.EndpointFilterTraces:
		return "narrow it: a shorter block or datetime range, fewer or less busy addresses, or a smaller offset (a deep offset reads every trace before it)"
	case chainquery.EndpointExportTraces, chainquery.EndpointExportLogs:
		return "retry it later from the last cursor: a chunk's size is fixed, so a chunk this slow means the server is busy"
	case chainquery.EndpointGetTransactionLogs:
		return "give the transaction's block_number, which narrows the lookup to one block, or a smaller offset"
	default:
		return "retry it later, when the server is less busy"
	}
}

// chargedWriter ends the request's hold on the store when the handler
// starts its answer (the answer is encoded by then; sending it to a slow
// client must not hold a slot), and sends the cost headers with it.
type chargedWriter struct {
	http.ResponseWriter
	t       *ticket
	charged bool
}

func (w *chargedWriter) WriteHeader(status int) {
	if !w.charged {
		w.charged = true
		w.t.done()
		if w.t.a != nil {
			h := w.Header()
			h.Set(headerCost, formatUnits(w.t.cost))
			h.Set(headerCostLeft, formatUnits(w.t.left))
			h.Set(headerCostLimit, formatUnits(w.t.limits.CostRate)+"/s, burst "+formatUnits(w.t.limits.CostBurst))
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *chargedWriter) Write(b []byte) (int, error) {
	if !w.charged {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *chargedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
