package http

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/chainquery/chainquery"
)

// rateLimiter holds one token bucket per API key, by the key's name. Buckets
// are made on a key's first request and kept: there are never more of them
// than there are keys. A nil *rateLimiter limits nothing.
type rateLimiter struct {
	limit   rate.Limit
	burst   int
	detail  string
	buckets sync.Map // key name -> *rate.Limiter
}

// newRateLimiter returns the limiter of perSecond requests per second per
// key, with bursts of burst requests; burst 0 means max(1, ceil(perSecond)).
// It returns nil when perSecond is not positive: no limit.
func newRateLimiter(perSecond float64, burst int) *rateLimiter {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) {
		return nil
	}
	if burst <= 0 {
		burst = DefaultRateBurst(perSecond)
	}
	return &rateLimiter{
		limit:  rate.Limit(perSecond),
		burst:  burst,
		detail: "rate limit exceeded for this API key: " + strconv.FormatFloat(perSecond, 'g', -1, 64) + " requests per second",
	}
}

// DefaultRateBurst is the burst of Config.RateBurst 0: max(1, ceil(perSecond)).
func DefaultRateBurst(perSecond float64) int {
	if !(perSecond >= 1) {
		return 1
	}
	if perSecond >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int(math.Ceil(perSecond))
}

// allow takes a token of keyName's bucket. When there is none, it sets
// Retry-After on w, in whole seconds and at least 1, and returns an
// ERATELIMIT error for the error writer.
func (l *rateLimiter) allow(w http.ResponseWriter, keyName string) error {
	if l == nil {
		return nil
	}
	b, ok := l.buckets.Load(keyName)
	if !ok {
		b, _ = l.buckets.LoadOrStore(keyName, rate.NewLimiter(l.limit, l.burst))
	}
	lim := b.(*rate.Limiter)
	now := time.Now()
	res := lim.ReserveN(now, 1)
	if !res.OK() { // cannot happen with burst >= 1; refuse rather than wait forever
		w.Header().Set("Retry-After", "1")
		return chainquery.Errorf(chainquery.ERATELIMIT, "%s", l.detail)
	}
	delay := res.DelayFrom(now)
	if delay == 0 {
		return nil
	}
	res.CancelAt(now) // the request is refused: give its token back
	secs := int64(math.Ceil(delay.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return chainquery.Errorf(chainquery.ERATELIMIT, "%s", l.detail)
}
