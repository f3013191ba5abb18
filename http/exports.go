package http

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/chainquery/chainquery"
)

// Paths of the exports.
const (
	pathExportTraces = "/api/v1/customer/{chain}/traces/export"
	pathExportLogs   = "/api/v1/customer/{chain}/logs/export"
)

// The budget of one export response: past either, the response ends after
// its last checkpoint and the client resumes from it. A connection is not
// held for ever, and the response ends well within the server's
// WriteTimeout.
const (
	ExportResponseRows = 1_000_000
	ExportResponseTime = 20 * time.Second
)

// contentTypeNDJSON is the media type of an export: one JSON document a line.
const contentTypeNDJSON = "application/x-ndjson"

// exportLimits are an export's sizes: those of chainquery.Export and the
// response budget; zero values are the defaults. Tests make them small.
type exportLimits struct {
	chunkRows     int
	responseRows  int
	responseTime  time.Duration
	afterFirstRow func() // a test's hook, run after the first chunk is sent
}

// exportCall is what serveKeyed hands an export's handler: the key whose
// share each chunk is admitted to, and the route for the metrics.
type exportCall struct {
	key *chainquery.APIKey
	rt  route
}

type exportCallKey struct{}

// isExport reports whether e streams its answer, admitting each chunk on
// its own (serveExport) rather than once for the request.
func isExport(e chainquery.Endpoint) bool {
	return e == chainquery.EndpointExportTraces || e == chainquery.EndpointExportLogs
}

// serveExport runs an export route's handler for key without the request's
// own admission and deadline: the handler takes them a chunk at a time.
// Each chunk is admitted, charged and given the request deadline on its own,
// as a request of its own would be (exportChunk): an export is one key's
// stream of ordinary reads, and other keys' requests take their turns
// between its chunks.
func (s *Server) serveExport(w http.ResponseWriter, r *http.Request, rt route, key *chainquery.APIKey) {
	r = r.WithContext(context.WithValue(r.Context(), exportCallKey{}, &exportCall{key: key, rt: rt}))
	if err := rt.handle(w, r); err != nil {
		s.writeError(w, r, err)
	}
}

// exportFields are the fields of an export's body besides its filter's.
var exportFields = []string{"cursor"}

// handleExportTraces serves POST /api/v1/customer/{chain}/traces/export.
func (s *Server) handleExportTraces(w http.ResponseWriter, r *http.Request) error {
	chain, err := s.tracedChain(r.Context(), chainquery.EndpointExportTraces, r.PathValue("chain"))
	if err != nil {
		return err
	}
	if err := noPaging(r.URL.Query()); err != nil {
		return err
	}
	get, cursor, err := readExportBody(w, r, traceFilterFields)
	if err != nil {
		return err
	}
	f, err := traceFilterOf(get)
	if err != nil {
		return err
	}
	f.Chain, f.MinTime = chain, s.historyStart[chain]
	e, err := chainquery.NewTraceExport(s.store, f, cursor)
	if err != nil {
		return err
	}
	return streamExport(s, w, r, e, appendTrace)
}

// handleExportLogs serves POST /api/v1/customer/{chain}/logs/export.
func (s *Server) handleExportLogs(w http.ResponseWriter, r *http.Request) error {
	chain, err := chainquery.ParseChain(chainquery.EndpointExportLogs, r.PathValue("chain"))
	if err != nil {
		return err
	}
	if err := noPaging(r.URL.Query()); err != nil {
		return err
	}
	get, cursor, err := readExportBody(w, r, logFilterFields)
	if err != nil {
		return err
	}
	f, err := logFilterOf(get)
	if err != nil {
		return err
	}
	f.Chain = chain
	e, err := chainquery.NewLogExport(s.store, f, cursor)
	if err != nil {
		return err
	}
	return streamExport(s, w, r, e, appendLog)
}

// noPaging refuses the list parameters, which an export has no use for: it
// sends every row, and resumes by cursor.
func noPaging(q url.Values) error {
	for _, p := range []string{"limit", "offset", "count"} {
		if q.Has(p) {
			return chainquery.Errorf(chainquery.EINVALID, "%s is not a parameter of an export: an export sends every matching row, and a cut one resumes with the cursor of its last checkpoint line", p)
		}
	}
	return nil
}

// readExportBody reads an export's body: the filter's fields, and cursor,
// a string or null.
func readExportBody(w http.ResponseWriter, r *http.Request, filterFields []string) (func(string) (json.RawMessage, bool), string, error) {
	get, err := readBodyFields(w, r, slices.Concat(filterFields, exportFields))
	if err != nil {
		return nil, "", err
	}
	var cursor string
	if v, ok := get("cursor"); ok {
		if err := json.Unmarshal(v, &cursor); err != nil {
			return nil, "", chainquery.Errorf(chainquery.EINVALID, "cursor must be a string: the cursor of a checkpoint line of an export of the same body")
		}
		if cursor == "" {
			return nil, "", chainquery.Errorf(chainquery.EINVALID, "cursor must not be empty: leave it out to start the export")
		}
	}
	return get, cursor, nil
}

// streamExport sends e's rows, appended by appendRow, as NDJSON: after each
// chunk a checkpoint line {"cursor":"..."}, and {"cursor":null} as the last
// line once every row is sent. A chunk that cannot be read before the first
// byte is the request's error (429 with Retry-After when it was not
// admitted); after it, the stream ends without the null line, and the
// client resumes from the last checkpoint.
func streamExport[T any](s *Server, w http.ResponseWriter, r *http.Request, e *chainquery.Export[T], appendRow func([]byte, T) []byte) error {
	call, _ := r.Context().Value(exportCallKey{}).(*exportCall)
	if call == nil {
		return chainquery.Errorf(chainquery.EINTERNAL, "export served without its key") // a route table mistake
	}
	lim := s.export
	e.ChunkRows = lim.chunkRows
	maxRows, maxTime := cmp.Or(lim.responseRows, ExportResponseRows), cmp.Or(lim.responseTime, ExportResponseTime)
	start := time.Now()
	rc := http.NewResponseController(w)
	h := w.Header()
	var buf []byte
	var sent int
	var cost float64
	for started := false; ; started = true {
		rows, t, wait, err := exportChunk(s, r.Context(), call, e)
		if t != nil {
			cost += t.cost
		}
		if err != nil {
			if !started {
				if wait > 0 {
					h.Set("Retry-After", strconv.Itoa(wait))
				}
				return err
			}
			if code := chainquery.ErrorCode(err); code != chainquery.ERATELIMIT && code != chainquery.ETIMEOUT && r.Context().Err() == nil {
				s.logger.ErrorContext(r.Context(), "export cut", "route", call.rt.pattern, "error", err)
			}
			return nil // no null line: the client resumes from the last checkpoint
		}
		if !started {
			h.Set("Content-Type", contentTypeNDJSON)
			h.Set("X-Content-Type-Options", "nosniff")
			if t.a != nil {
				// The cost of the whole response is known at its end:
				// sent as trailers, the limit at once.
				h.Del(headerCost)
				h.Set("Trailer", headerCost+", "+headerCostLeft)
				h.Set(headerCostLimit, formatUnits(t.limits.CostRate)+"/s, burst "+formatUnits(t.limits.CostBurst))
			}
			w.WriteHeader(http.StatusOK)
		}
		buf = buf[:0]
		for _, row := range rows {
			buf = append(appendRow(buf, row), '\n')
		}
		sent += len(rows)
		if e.Done() {
			buf = append(buf, `{"cursor":null}`+"\n"...)
		} else {
			buf = append(append(append(buf, `{"cursor":"`...), e.Cursor()...), "\"}\n"...)
		}
		if t.a != nil {
			h.Set(headerCost, formatUnits(cost))
			h.Set(headerCostLeft, formatUnits(t.left))
		}
		if _, err := w.Write(buf); err != nil {
			return nil // the client left
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
		if lim.afterFirstRow != nil && !started {
			lim.afterFirstRow()
		}
		if e.Done() || sent >= maxRows || time.Since(start) >= maxTime {
			return nil
		}
	}
}

// exportChunk reads e's next chunk as a request of its own: admitted to
// the key's share of the store, under the server's request deadline, and
// charged when read, before the chunk is sent (a slow client holds no slot).
// It returns the ticket, for the cost, even with an error, and with an
// error the seconds a client should wait (Retry-After), 0 for none.
func exportChunk[T any](s *Server, ctx context.Context, call *exportCall, e *chainquery.Export[T]) ([]T, *ticket, int, error) {
	parent := ctx
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, s.timeout)
		defer cancel()
	}
	t, rej := s.admit(ctx, call.key, call.rt.pattern)
	if rej != nil {
		return nil, nil, rej.retryAfter, rej.err
	}
	rows, err := e.Next(ctx)
	s.charge(t, call.rt.pattern)
	if timeout := s.timedOut(ctx, parent, err, call.rt, "one chunk of the export"); timeout != nil {
		return nil, t, 1, timeout
	}
	return rows, t, 0, err
}
