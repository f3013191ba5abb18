package chainquery

import "context"

// Store is a chainquery database: every read service of the API, the API
// keys, the writers of the EVM and Solana ingesters, and the health and
// lifetime of its connections. The sqlite and postgres packages implement
// it; the HTTP server and the commands take a Store, the ingesters only the
// writer they use.
type Store interface {
	TraceService
	LogService
	LogRangeService
	ReceiptService
	TransactionService
	BlockService
	TokenBalanceService
	SOLBalanceService
	StatusService
	APIKeyService
	BlockWriter
	TokenBalanceWriter

	// Ping checks that the database answers. It returns EUNAVAILABLE if it
	// cannot be reached, or the error it answered with.
	Ping(ctx context.Context) error

	// PendingMigrations returns the names of the schema migrations this
	// binary has and the database has not applied: none when its schema is
	// current (serve's readiness).
	PendingMigrations(ctx context.Context) ([]string, error)

	// Close releases the store's connections, waiting for those in use to
	// be returned. The store must not be used afterwards.
	Close() error
}
