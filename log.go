package chainquery

import "context"

// Log is one event log with the fields of its transaction the API serves.
type Log struct {
	BlockNumber      uint64
	Timestamp        int64
	TransactionHash  Hash
	TransactionIndex int
	TransactionFrom  Address
	TransactionTo    *Address
	LogIndex         int
	Address          Address
	Data             []byte
	Topics           []Hash // 0 to 4
}

// LogFilter selects the logs of one transaction, one page at a time.
type LogFilter struct {
	Chain           Chain
	TransactionHash Hash
	BlockNumber     *uint64 // narrows the lookup when given
	Page
}

// LogService is what the API reads of logs.
type LogService interface {
	// FindTransactionLogs returns one page of the transaction's logs in
	// log_index order and the transaction's log count. It returns ENOTFOUND
	// if the transaction is not indexed (in the given block, when one is
	// given).
	FindTransactionLogs(ctx context.Context, f LogFilter) ([]*Log, int, error)
}
