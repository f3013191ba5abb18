package http

import (
	"sync"
	"time"

	"github.com/chainquery/chainquery"
)

// DefaultKeyCacheTTL is how long Server trusts a key it found in the store
// before asking again. Under load, looking the key up on every request was a
// large part of the server's CPU (docs/benchmarks.md, "What changed, each
// from a profile": a key found once); once a second per key costs nothing,
// and a key revoked or changed with `chainquery keys` stops working within
// that second.
const DefaultKeyCacheTTL = time.Second

// keyCacheMax bounds the cache: more distinct keys than this within one TTL
// (far more than any deployment has) start it over, so its memory stays
// bounded whatever clients send. Only keys the store found are cached; an
// unknown key always goes to the store and gets 401.
const keyCacheMax = 10_000

// keyCache remembers the API keys the store found, by hash, for ttl.
type keyCache struct {
	ttl time.Duration
	now func() time.Time // monotonic wall clock; tests replace it

	mu   sync.RWMutex
	keys map[[32]byte]cachedKey
}

type cachedKey struct {
	key   *chainquery.APIKey
	until time.Time
}

func newKeyCache(ttl time.Duration) *keyCache {
	return &keyCache{ttl: ttl, now: time.Now, keys: make(map[[32]byte]cachedKey)}
}

// get returns the key cached for hash, if it is still fresh.
func (c *keyCache) get(hash [32]byte) (*chainquery.APIKey, bool) {
	if c.ttl <= 0 {
		return nil, false
	}
	c.mu.RLock()
	e, ok := c.keys[hash]
	c.mu.RUnlock()
	if !ok || !c.now().Before(e.until) {
		return nil, false
	}
	return e.key, true
}

// put remembers key, which the store returned for hash.
func (c *keyCache) put(hash [32]byte, key *chainquery.APIKey) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.keys) >= keyCacheMax {
		clear(c.keys)
	}
	c.keys[hash] = cachedKey{key: key, until: c.now().Add(c.ttl)}
}
