package chainquery

import (
	"errors"
	"fmt"
)

// Error codes: the one vocabulary of failures. The HTTP layer maps each code to
// a status in one place; stores and ingesters only choose the code.
const (
	EINVALID      = "invalid"      // a request value breaks a rule (400)
	EUNAUTHORIZED = "unauthorized" // missing, empty, unknown or revoked API key (401)
	EFORBIDDEN    = "forbidden"    // key not enabled for the endpoint (403)
	ENOTFOUND     = "not_found"    // nothing indexed answers the request (404)
	ENOTALLOWED   = "not_allowed"  // known path, wrong method (405)
	ECONFLICT     = "conflict"     // a name or row that must be unique already exists (409)
	ETOOLARGE     = "too_large"    // request body over the limit (413)
	ERATELIMIT    = "rate_limited" // the key's rate limit is exceeded (429)
	EINTERNAL     = "internal"     // an unexpected fault (500)
	EUNAVAILABLE  = "unavailable"  // the store cannot be reached (503)
	ETIMEOUT      = "timeout"      // the request ran past its deadline (503)
)

// Error is an error a client may see: Message is written for the user and must
// never carry internal details (SQL, file paths, driver errors).
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("chainquery error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err. Errors that are not an
// *Error get a generic text so that internals never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error"
}
