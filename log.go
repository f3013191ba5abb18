package chainquery

import (
	"context"
	"slices"
	"time"
)

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

// LogRangeFilter selects the logs of a block range or a datetime range by
// the contract that emitted them and their topics (Filter Logs), as
// eth_getLogs does: any of Addresses, and at each topic position any of its
// values; an empty list does not filter. Every given condition must hold.
type LogRangeFilter struct {
	Chain     Chain
	FromBlock *uint64
	ToBlock   *uint64
	FromTime  *time.Time
	ToTime    *time.Time
	Addresses []Address
	Topics    [4][]Hash
	Page
}

// MaxLogRangeBlocks is the most blocks one Filter Logs range without an
// address or a topic0 may hold, a datetime range's blocks included: such a
// range's logs are read and matched one by one (docs/api.md, Filter Logs).
// With either, the stores find the matches by index, over any range.
const MaxLogRangeBlocks = MaxBlockRange

// Keyed reports whether f names an address or a topic0, which the stores
// index logs by: its range may then be of any length.
func (f *LogRangeFilter) Keyed() bool { return len(f.Addresses) > 0 || len(f.Topics[0]) > 0 }

// traceRange returns f's range as a TraceFilter's, whose rules and block
// range conversion it shares.
func (f *LogRangeFilter) traceRange() *TraceFilter {
	return &TraceFilter{Chain: f.Chain, FromBlock: f.FromBlock, ToBlock: f.ToBlock, FromTime: f.FromTime, ToTime: f.ToTime}
}

// Validate checks the Filter Logs rules and returns EINVALID with a message
// naming the broken rule: Filter Traces' range rules, and at most
// MaxFilterAddresses addresses and values of each topic.
func (f *LogRangeFilter) Validate() error {
	t := f.traceRange()
	if t.FromBlock != nil && t.ToBlock != nil && *t.ToBlock >= *t.FromBlock {
		if !f.Keyed() && *t.ToBlock-*t.FromBlock >= MaxLogRangeBlocks {
			return Errorf(EINVALID, "without an address or a topic0, a block range must not exceed %d blocks (to_block - from_block must be at most %d)", MaxLogRangeBlocks, MaxLogRangeBlocks-1)
		}
		t.ToBlock = t.FromBlock // its length is checked: the rules left are those of its ends
	}
	if err := t.Validate(); err != nil {
		return err
	}
	if len(f.Addresses) > MaxFilterAddresses {
		return Errorf(EINVALID, "address must have at most %d addresses", MaxFilterAddresses)
	}
	for i, t := range f.Topics {
		if len(t) > MaxFilterAddresses {
			return Errorf(EINVALID, "topic%d must have at most %d values", i, MaxFilterAddresses)
		}
	}
	return nil
}

// TimeSeek returns what f's range asks of the blocks' timestamps, as
// TraceFilter.TimeSeek does.
func (f *LogRangeFilter) TimeSeek() (TimeSeek, bool) {
	return f.traceRange().TimeSeek()
}

// BlockRange turns f's range into an inclusive block range, as
// TraceFilter.BlockRange does, and returns EINVALID when a datetime range
// holds more than MaxLogRangeBlocks blocks and f is not Keyed.
func (f *LogRangeFilter) BlockRange(seek func(TimeSeek) (TimeBlocks, error)) (lo, hi uint64, ok bool, err error) {
	lo, hi, ok, err = f.traceRange().BlockRange(seek)
	if ok && !f.Keyed() && hi-lo >= MaxLogRangeBlocks {
		return 0, 0, false, Errorf(EINVALID, "the datetime range holds %d blocks; without an address or a topic0, a Filter Logs range must hold at most %d", hi-lo+1, MaxLogRangeBlocks)
	}
	return lo, hi, ok, err
}

// Matches reports whether l passes f's address and topic conditions.
func (f *LogRangeFilter) Matches(l *Log) bool { return f.MatchesFields(l.Address, l.Topics) }

// MatchesFields reports whether a log of address and topics passes f's
// conditions.
func (f *LogRangeFilter) MatchesFields(address Address, topics []Hash) bool {
	if len(f.Addresses) > 0 && !slices.Contains(f.Addresses, address) {
		return false
	}
	for i, want := range f.Topics {
		if len(want) > 0 && (i >= len(topics) || !slices.Contains(want, topics[i])) {
			return false
		}
	}
	return true
}

// LogRangeService is what the API reads of logs over a range.
type LogRangeService interface {
	// FindLogs returns one page of the logs that match f, ordered by
	// block_number and log_index, and their number over all pages. Ranges
	// outside what is indexed give an empty page, not an error.
	FindLogs(ctx context.Context, f LogRangeFilter) ([]*Log, int, error)
}
