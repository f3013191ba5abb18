package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// wrap turns failures of the database server, or of the way to it, into
// EUNAVAILABLE (a 503 the client may retry), joined with the original error
// so that logs keep the real cause. Errors that already carry a chainquery
// code, and every other error (a bug, a constraint broken), pass unchanged
// and so stay EINTERNAL.
func wrap(err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	var e *chainquery.Error
	if errors.As(err, &e) {
		return err
	}
	return sqlstore.UnavailableError(err)
}

// unavailable reports whether err means the database could not answer now
// but may shortly: the server is down, restarting, overloaded or out of
// reach, or a connection to it broke.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableState(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), // dial, TLS or start-up failed
		errors.As(err, &netErr), // a broken or timed-out connection
		errors.Is(err, puddle.ErrClosedPool),
		errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		// The request's deadline passed, most often while waiting for a
		// connection of an exhausted pool: the database is saturated.
		errors.Is(err, context.DeadlineExceeded),
		// Nothing reached the server: pgx knows that trying again is safe.
		pgconn.SafeToRetry(err):
		return true
	}
	return false
}

// unavailableState reports whether a SQLSTATE is one of the transient
// server conditions.
func unavailableState(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"): // connection exception
		return true
	case strings.HasPrefix(code, "53"): // insufficient resources: too many connections, out of memory, disk full
		return true
	}
	switch code {
	case "57P01", "57P02", "57P03": // admin shutdown, crash shutdown, cannot connect now (starting up)
		return true
	case "57014":
		// query_canceled: statement_timeout fired (Options.StatementTimeout).
		// Every API query is bounded by what it returns (plan_test.go), so
		// one that runs past the timeout is waiting on an overloaded server,
		// on locks, or on a replica's replay: a transient condition the
		// client may retry, not a fault in the request or in the code. A
		// 500 would also page someone for load.
		return true
	case "40001":
		// serialization_failure: on a hot standby, "canceling statement due
		// to conflict with recovery". The API's read-only REPEATABLE READ
		// transactions never fail this way on a primary.
		return true
	}
	return false
}
