package chainquery

import (
	"context"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Trace types and call types as the API names them (docs/api.md, Filter Traces).
const (
	TraceCall    = "call"
	TraceCreate  = "create"
	TraceSuicide = "suicide"

	CallTypeCall         = "call"
	CallTypeDelegateCall = "delegatecall"
	CallTypeStaticCall   = "staticcall"
	CallTypeCreate       = "create"
)

// Trace is one call frame of a transaction's execution.
//
// Ingesters fill the frame's own fields; stores fill the fields of the
// enclosing block and transaction (Timestamp, TransactionHash,
// TransactionFrom, TransactionTo, TransactionStatus, Version) on reads.
type Trace struct {
	BlockNumber       uint64
	Timestamp         int64
	TransactionHash   Hash
	TransactionIndex  int
	TraceAddress      []int // empty for the top-level call
	TransactionFrom   Address
	TransactionTo     *Address
	TransactionStatus bool
	Type              string // TraceCall, TraceCreate or TraceSuicide
	CallType          string // CallType* values
	From              Address
	To                *Address // nil for a failed creation
	Gas               uint64
	GasUsed           uint64
	Value             *big.Int
	Subtraces         int
	Input             []byte
	Output            []byte
	Error             string // "" when the call succeeded
	Version           int
}

// GasRefund is the gas the call returned unused: gas - gas_used, never
// below zero (docs/api.md, Filter Traces).
func (t *Trace) GasRefund() uint64 {
	if t.GasUsed > t.Gas {
		return 0
	}
	return t.Gas - t.GasUsed
}

// FormatTraceAddress returns the dot-separated form of a trace address, ""
// for the top-level call.
func FormatTraceAddress(addr []int) string {
	var b strings.Builder
	for i, n := range addr {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// ParseTraceAddress parses the dot-separated form of a trace address.
func ParseTraceAddress(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ".")
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, Errorf(EINVALID, "bad trace address %q", s)
		}
		out[i] = n
	}
	return out, nil
}

// CompareTraceAddress orders trace addresses depth-first, parent before
// children, comparing components as integers: "" < "0" < "0.1" < "0.2" <
// "0.10" < "1". It returns -1, 0 or +1.
func CompareTraceAddress(a, b []int) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// MaxBlockRange is the most blocks one Filter Traces block range may hold:
// both ends are inclusive, so to_block - from_block <= 99 (docs/api.md, Filter Traces).
const MaxBlockRange = 100

// MaxFilterAddresses is the most addresses each of from_address and
// to_address may hold.
const MaxFilterAddresses = 10

// TraceFilter selects traces by a block range or a datetime range, optionally
// by sender and recipient. Within FromAddresses (and within ToAddresses) any
// address matches; when both are given both must match.
type TraceFilter struct {
	Chain         Chain
	FromBlock     *uint64
	ToBlock       *uint64
	FromTime      *time.Time
	ToTime        *time.Time
	FromAddresses []Address
	ToAddresses   []Address

	// MinTime is the start of the chain's trace history: traces of blocks
	// stamped before it are not served. Zero means no bound.
	MinTime time.Time

	Page
}

// Validate checks the Filter Traces rules of docs/api.md and returns EINVALID with a message naming the broken rule.
func (f *TraceFilter) Validate() error {
	hasBlocks := f.FromBlock != nil || f.ToBlock != nil
	hasTimes := f.FromTime != nil || f.ToTime != nil
	switch {
	case hasBlocks && hasTimes:
		return Errorf(EINVALID, "give exactly one range: from_block/to_block or from_datetime/to_datetime, not both")
	case !hasBlocks && !hasTimes:
		return Errorf(EINVALID, "give exactly one range: from_block/to_block or from_datetime/to_datetime")
	case f.FromBlock == nil && f.ToBlock != nil:
		return Errorf(EINVALID, "from_block is required with to_block")
	case f.FromBlock != nil && f.ToBlock == nil:
		return Errorf(EINVALID, "to_block is required with from_block")
	case f.FromTime == nil && f.ToTime != nil:
		return Errorf(EINVALID, "from_datetime is required with to_datetime")
	case f.FromTime != nil && f.ToTime == nil:
		return Errorf(EINVALID, "to_datetime is required with from_datetime")
	}
	if hasBlocks {
		if *f.ToBlock < *f.FromBlock {
			return Errorf(EINVALID, "to_block must be at least from_block")
		}
		if *f.ToBlock-*f.FromBlock >= MaxBlockRange {
			return Errorf(EINVALID, "block range must not exceed %d blocks (to_block - from_block must be at most %d)", MaxBlockRange, MaxBlockRange-1)
		}
	} else if f.ToTime.Before(*f.FromTime) {
		return Errorf(EINVALID, "to_datetime must be at least from_datetime")
	}
	if len(f.FromAddresses) > MaxFilterAddresses {
		return Errorf(EINVALID, "from_address must have at most %d addresses", MaxFilterAddresses)
	}
	if len(f.ToAddresses) > MaxFilterAddresses {
		return Errorf(EINVALID, "to_address must have at most %d addresses", MaxFilterAddresses)
	}
	return nil
}

// TraceService is what the API reads of traces.
type TraceService interface {
	// FindTraces returns one page of the traces that match f, ordered by
	// block_number, transaction_index and trace_address (CompareTraceAddress),
	// and the number of traces that match over all pages. Ranges outside what
	// is indexed give an empty page, not an error.
	FindTraces(ctx context.Context, f TraceFilter) ([]*Trace, int, error)
}

// TimeSeek is what a range asks of the blocks' timestamps, in unix
// seconds: the first block stamped at or after From, the last stamped at
// or before To, and the first at or after Min (the traces' history start,
// TraceFilter.MinTime). A store answers the three in one read (TimeBlocks);
// math.MinInt64 asks nothing of From or Min, math.MaxInt64 nothing of To.
type TimeSeek struct{ From, To, Min int64 }

// TimeBlocks are a store's answers to a TimeSeek: each block with whether
// there is one.
type TimeBlocks struct {
	From, To, Min       uint64
	FromOK, ToOK, MinOK bool
}

// TimeSeek returns what f's range asks of the blocks' timestamps, false
// when it asks nothing (a block range without MinTime).
func (f *TraceFilter) TimeSeek() (TimeSeek, bool) {
	// Block times are whole seconds: a fractional start rounds up.
	ceil := func(t time.Time) int64 {
		if t.Nanosecond() > 0 {
			return t.Unix() + 1
		}
		return t.Unix()
	}
	q := TimeSeek{From: math.MinInt64, To: math.MaxInt64, Min: math.MinInt64}
	if f.FromTime != nil && f.ToTime != nil && (f.FromBlock == nil || f.ToBlock == nil) {
		q.From, q.To = ceil(*f.FromTime), f.ToTime.Unix()
	}
	if !f.MinTime.IsZero() {
		q.Min = ceil(f.MinTime)
	}
	return q, q != TimeSeek{From: math.MinInt64, To: math.MaxInt64, Min: math.MinInt64}
}

// BlockRange turns f's range (blocks or datetimes) and its MinTime into an
// inclusive block range, with seek's answers to f's TimeSeek (not called
// when it asks nothing). ok is false when nothing indexed can match.
func (f *TraceFilter) BlockRange(seek func(TimeSeek) (TimeBlocks, error)) (lo, hi uint64, ok bool, err error) {
	var at TimeBlocks
	if q, asks := f.TimeSeek(); asks {
		if at, err = seek(q); err != nil {
			return 0, 0, false, err
		}
	}
	switch {
	case f.FromBlock != nil && f.ToBlock != nil:
		lo, hi = *f.FromBlock, *f.ToBlock
	case f.FromTime != nil && f.ToTime != nil:
		if !at.FromOK || !at.ToOK {
			return 0, 0, false, nil
		}
		lo, hi = at.From, at.To
	default:
		return 0, 0, false, Errorf(EINVALID, "a block range or a datetime range is required")
	}
	if !f.MinTime.IsZero() {
		if !at.MinOK {
			return 0, 0, false, nil
		}
		lo = max(lo, at.Min)
	}
	return lo, hi, lo <= hi, nil
}
