package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		code string
	}{
		{"ConnectionFailure", &pgconn.PgError{Code: "08006"}, chainquery.EUNAVAILABLE},
		{"CannotConnectNow", &pgconn.PgError{Code: "57P03"}, chainquery.EUNAVAILABLE},
		{"AdminShutdown", fmt.Errorf("query: %w", &pgconn.PgError{Code: "57P01"}), chainquery.EUNAVAILABLE},
		{"StatementTimeout", &pgconn.PgError{Code: "57014"}, chainquery.EUNAVAILABLE},
		{"TooManyConnections", &pgconn.PgError{Code: "53300"}, chainquery.EUNAVAILABLE},
		{"RecoveryConflict", &pgconn.PgError{Code: "40001"}, chainquery.EUNAVAILABLE},
		{"UniqueViolation", &pgconn.PgError{Code: "23505"}, chainquery.EINTERNAL},
		{"SyntaxError", &pgconn.PgError{Code: "42601"}, chainquery.EINTERNAL},
		{"ClosedPool", puddle.ErrClosedPool, chainquery.EUNAVAILABLE},
		{"ConnClosed", pgconn.ErrConnClosed, chainquery.EUNAVAILABLE},
		{"UnexpectedEOF", fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), chainquery.EUNAVAILABLE},
		{"Refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, chainquery.EUNAVAILABLE},
		{"AcquireTimeout", context.DeadlineExceeded, chainquery.EUNAVAILABLE},
		{"Plain", errors.New("boom"), chainquery.EINTERNAL},
		{"NotFoundStays", chainquery.Errorf(chainquery.ENOTFOUND, "x"), chainquery.ENOTFOUND},
		{"Nil", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := wrap(c.err)
			if got := chainquery.ErrorCode(err); got != c.code {
				t.Fatalf("code = %q, want %q", got, c.code)
			}
			if c.code == chainquery.EUNAVAILABLE {
				if msg := chainquery.ErrorMessage(err); msg != chainquery.ErrorMessage(sqlstore.UnavailableError(nil)) {
					t.Fatalf("message = %q", msg)
				}
				if !errors.Is(err, c.err) {
					t.Fatalf("the original error is lost: %v", err)
				}
			}
		})
	}
}

// TestStatementTimeout runs a statement longer than Options.StatementTimeout
// on the read pool: the server cancels it (57014), which is EUNAVAILABLE.
func TestStatementTimeout(t *testing.T) {
	db := MustOpen(t, NewTestDatabase(t, RequireEnv(t, EnvAdminDSN)), Options{StatementTimeout: 50 * time.Millisecond})
	ctx := context.Background()
	_, err := db.read.Exec(ctx, `SELECT pg_sleep(2)`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("err = %v, want SQLSTATE 57014", err)
	}
	if code := chainquery.ErrorCode(wrap(err)); code != chainquery.EUNAVAILABLE {
		t.Fatalf("code = %q", code)
	}
	// Writes have no statement timeout: a large COPY may take long.
	if _, err := db.write.Exec(ctx, `SELECT pg_sleep(0.2)`); err != nil {
		t.Fatalf("write pool: %v", err)
	}
}
