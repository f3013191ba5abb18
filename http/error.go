package http

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/chainquery/chainquery"
)

// errorStatus maps an error code of the root package to its HTTP status. It
// is the only place that does, so that the same failure never gets two
// different statuses on two endpoints. Unknown codes are internal errors.
func errorStatus(code string) int {
	switch code {
	case chainquery.EINVALID:
		return http.StatusBadRequest
	case chainquery.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case chainquery.EFORBIDDEN:
		return http.StatusForbidden
	case chainquery.ENOTFOUND:
		return http.StatusNotFound
	case chainquery.ENOTALLOWED:
		return http.StatusMethodNotAllowed
	case chainquery.ECONFLICT:
		return http.StatusConflict
	case chainquery.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case chainquery.ERATELIMIT:
		return http.StatusTooManyRequests
	case chainquery.EUNAVAILABLE, chainquery.ETIMEOUT:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// internalDetail is all a client learns of an internal error: its real text
// (SQL, file paths, driver messages) goes to the log only.
const internalDetail = "Internal server error"

// errorBody is the body of every error response.
type errorBody struct {
	Detail string `json:"detail"`
}

// writeError writes err as {"detail": ...} with the status of its code.
// Internal and unavailable errors are logged with their real text first.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := chainquery.ErrorCode(err)
	status := errorStatus(code)
	detail := chainquery.ErrorMessage(err)
	if status >= http.StatusInternalServerError {
		info := infoFrom(r.Context())
		s.logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "route", info.route, "status", status, "error", err)
	}
	if status == http.StatusInternalServerError {
		detail = internalDetail
	}
	writeJSON(w, status, errorBody{Detail: detail})
}

// writeJSON writes v as the JSON body of a response with the given status.
// A jsonAppender writes itself into a pooled buffer; anything else goes
// through json.Marshal.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if a, ok := v.(jsonAppender); ok {
		bp := bufferPool.Get().(*[]byte)
		b := append(a.appendJSON((*bp)[:0]), '\n')
		writeBody(w, status, b)
		if cap(b) <= maxPooledBuffer { // Write does not keep b
			*bp = b[:0]
			bufferPool.Put(bp)
		}
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Every response type marshals; this is a programming error that
		// must still reach the client as JSON.
		status, b = http.StatusInternalServerError, []byte(`{"detail":"`+internalDetail+`"}`)
	}
	writeBody(w, status, append(b, '\n'))
}

// writeBody writes b, a JSON document and its trailing newline, as the body
// of a response with the given status.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b) // a failed write means the client left
}
