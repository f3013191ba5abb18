package http

import (
	"context"

	"github.com/chainquery/chainquery"
)

// Store is what the API reads from the database: every read service of the
// root package, the lookup of a presented API key, and the two checks of GET
// /readyz. The API never writes, creates keys or closes the store; whoever
// opened it does (cmd/chainquery passes the root package's whole Store, which
// sqlite.DB and postgres.DB implement). The read services state their own
// error contracts; the exports read through BlockService's BlockAtTime too
// (chainquery.NewTraceExport, chainquery.NewLogExport).
type Store interface {
	chainquery.TraceService
	chainquery.LogService
	chainquery.LogRangeService
	chainquery.ReceiptService
	chainquery.TransactionService
	chainquery.BlockService
	chainquery.TokenBalanceService
	chainquery.SOLBalanceService
	chainquery.StatusService

	// FindAPIKeyByHash returns the key whose hash is hash
	// (chainquery.APIKeyService). It returns ENOTFOUND if there is none.
	FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*chainquery.APIKey, error)

	// Ping checks that the database answers. It returns EUNAVAILABLE if it
	// cannot be reached.
	Ping(ctx context.Context) error

	// PendingMigrations returns the names of the schema migrations the
	// binary has and the database has not applied: /readyz is 503 until
	// there are none.
	PendingMigrations(ctx context.Context) ([]string, error)
}
