package chainquery

import (
	"math"
	"strconv"
)

// Limits of list endpoints (docs/api.md, "Lists and paging").
const (
	DefaultLimit = 10
	MaxLimit     = 50
	// MaxOffset is the largest offset: stores take it as a signed 64-bit
	// integer. No list holds that many items, so it gives an empty page.
	MaxOffset = math.MaxInt64
)

// MaxBlockNumber is the largest block number of a request: stores keep block
// numbers as signed 64-bit integers (docs/api.md, "Request values").
const MaxBlockNumber = math.MaxInt64

// Page is the offset and limit of a list request, as applied.
type Page struct {
	Offset int
	Limit  int
}

// ParsePage parses the limit and offset query values; empty means the
// default. It returns EINVALID naming the parameter otherwise.
func ParsePage(limit, offset string) (Page, error) {
	p := Page{Offset: 0, Limit: DefaultLimit}
	if limit != "" {
		n, err := strconv.ParseUint(limit, 10, 63) // decimal digits, as offset
		if err != nil || n < 1 || n > MaxLimit {
			return p, Errorf(EINVALID, "limit must be an integer between 1 and %d", MaxLimit)
		}
		p.Limit = int(n)
	}
	if offset != "" {
		n, err := strconv.ParseUint(offset, 10, 63) // decimal digits up to MaxOffset
		if err != nil {
			return p, Errorf(EINVALID, "offset must be an integer between 0 and %d", MaxOffset)
		}
		p.Offset = int(n)
	}
	return p, nil
}

// ParseBlockNumber parses a block number, of a query or of a request body:
// decimal digits of at most MaxBlockNumber. It returns EINVALID naming param
// otherwise.
func ParseBlockNumber(param, s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 63) // 63 bits: MaxBlockNumber
	if err != nil {
		return 0, Errorf(EINVALID, "%s must be an integer between 0 and %d", param, MaxBlockNumber)
	}
	return n, nil
}

// ParseBool parses a boolean query value: true, false, 1 or 0 in any case.
func ParseBool(param, s string) (bool, error) {
	switch s {
	case "1":
		return true, nil
	case "0":
		return false, nil
	}
	switch {
	case equalFold(s, "true"):
		return true, nil
	case equalFold(s, "false"):
		return false, nil
	}
	return false, Errorf(EINVALID, "%s must be a boolean: true, false, 1 or 0", param)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != b[i] {
			return false
		}
	}
	return true
}
