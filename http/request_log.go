package http

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

// requestInfo collects what the request log line reports but only inner
// handlers know: the route that matched and the name of the key used.
// logRequests puts a pointer to it in the request context.
type requestInfo struct {
	route   string
	pattern string // the route pattern of the path hit, for metrics; "" if none
	keyName string

	// answerKey is the answer cache's key of the request, when it was
	// looked up there and missed (answer_cache.go).
	answerKey string
}

type infoKey struct{}

// infoFrom returns the request's info; a throwaway value when the request
// did not pass through logRequests, so that handlers never check for nil.
func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

// logRequests writes one log line per request, records its metrics, and
// turns a panic in next into a JSON 500, so that one faulty request neither
// kills the connection silently nor goes unrecorded.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		body := &countingReader{r: r.Body}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = body
		}
		rec := &responseRecorder{ResponseWriter: w}
		s.metrics.inFlight.Inc()

		defer func() {
			defer s.metrics.inFlight.Dec()
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler { // the server's own way to abort a response
					panic(v)
				}
				s.logger.ErrorContext(r.Context(), "panic serving request",
					"method", r.Method, "route", info.route, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if !rec.wroteHeader { // else the client gets a cut-off answer: nothing better is possible
					writeJSON(rec, http.StatusInternalServerError, errorBody{Detail: internalDetail})
				}
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK // the handler wrote nothing at all
			}
			elapsed := time.Since(start)
			s.metrics.observe(info.pattern, r.Method, status, elapsed)
			route := info.route
			if route == "" {
				route = "unmatched"
			}
			level := slog.LevelInfo
			if status >= http.StatusInternalServerError {
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Duration("duration", elapsed),
				slog.Int64("request_bytes", body.n),
				slog.Int64("response_bytes", rec.n),
			}
			if info.keyName != "" {
				attrs = append(attrs, slog.String("key", info.keyName))
			}
			s.logger.LogAttrs(r.Context(), level, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

// responseRecorder remembers the status and the size of a response for the
// log line.
type responseRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	n           int64
}

func (w *responseRecorder) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseRecorder) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *responseRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingReader counts the request body bytes a handler read.
type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }
