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
// than there are keys. A key's own KeyLimits.Rate and Burst override the
// server's; a key with neither, on a server with no rate limit, is not
// limited at all.
type rateLimiter struct {
	limit   float64  // the server's requests per second; 0: none
	burst   int      // the server's burst; 0: DefaultRateBurst(limit)
	buckets sync.Map // key name -> *keyBucket
}

// keyBucket is one key's bucket and the limits it was made for, so that a
// change of the key's limits (keys update) reaches a running server.
type keyBucket struct {
	mu        sync.Mutex
	perSecond float64
	burst     int
	lim       *rate.Limiter
}

// newRateLimiter returns the limiter of perSecond requests per second per
// key by default, with bursts of burst requests; burst 0 means
// max(1, ceil(perSecond)). perSecond 0 (or below, or infinite) limits only
// the keys that have a rate of their own.
func newRateLimiter(perSecond float64, burst int) *rateLimiter {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) {
		perSecond = 0
	}
	return &rateLimiter{limit: perSecond, burst: burst}
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

// limitsOf returns the rate and burst that apply to key; rate 0: no limit.
func (l *rateLimiter) limitsOf(key *chainquery.APIKey) (float64, int) {
	perSecond, burst := l.limit, l.burst
	if key.Limits.Rate > 0 {
		perSecond, burst = key.Limits.Rate, 0
	}
	if key.Limits.Burst > 0 {
		burst = key.Limits.Burst
	}
	if burst <= 0 {
		burst = DefaultRateBurst(perSecond)
	}
	return perSecond, burst
}

// allow takes a token of key's bucket. When there is none, it sets
// Retry-After on w, in whole seconds and at least 1, and returns an
// ERATELIMIT error for the error writer.
func (l *rateLimiter) allow(w http.ResponseWriter, key *chainquery.APIKey) error {
	perSecond, burst := l.limitsOf(key)
	if perSecond <= 0 {
		return nil
	}
	v, ok := l.buckets.Load(key.Name)
	if !ok {
		v, _ = l.buckets.LoadOrStore(key.Name, &keyBucket{})
	}
	b := v.(*keyBucket)
	now := time.Now()
	b.mu.Lock()
	if b.lim == nil {
		b.lim = rate.NewLimiter(rate.Limit(perSecond), burst)
	} else if b.perSecond != perSecond || b.burst != burst {
		b.lim.SetLimitAt(now, rate.Limit(perSecond))
		b.lim.SetBurstAt(now, burst)
	}
	b.perSecond, b.burst = perSecond, burst
	res := b.lim.ReserveN(now, 1)
	b.mu.Unlock()
	if !res.OK() { // cannot happen with burst >= 1; refuse rather than wait forever
		w.Header().Set("Retry-After", "1")
		return rateLimited(perSecond)
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
	return rateLimited(perSecond)
}

// rateLimited is the error of a request over the rate of perSecond.
func rateLimited(perSecond float64) error {
	return chainquery.Errorf(chainquery.ERATELIMIT, "rate limit exceeded for this API key: %s requests per second",
		strconv.FormatFloat(perSecond, 'g', -1, 64))
}
