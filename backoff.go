package chainquery

import (
	"context"
	"time"
)

// Backoff is the schedule of waits between attempts at something that may
// work later (a node that is behind or down, a database that restarts): Min
// after the first failure, doubling after each further one up to Max. The
// ingesters and serve's followers all wait by it, so that their waits read
// the same in the log.
//
// The JSON-RPC client (package jsonrpc) keeps a jittered copy of its own: it
// imports only the standard library, and only a client shared by many
// concurrent callers needs the jitter.
type Backoff struct {
	Min time.Duration
	Max time.Duration // a Max below Min means Min every time
}

// Next returns the wait after the attempt-th failure in a row, counting from
// 1: Min doubled attempt-1 times, at most Max.
func (b Backoff) Next(attempt int) time.Duration {
	d := b.Min
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	return min(d, max(b.Max, b.Min))
}

// Sleep waits d or until ctx ends, and reports whether ctx is still live:
// false means stop.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
