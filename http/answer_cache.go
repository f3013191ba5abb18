package http

import (
	"bytes"
	clist "container/list"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
)

// DefaultAnswerCacheBytes is Config.AnswerCacheBytes's default in serve,
// chosen for the number of full Polygon blocks and Filter Traces pages it
// holds (docs/benchmarks.md, "What changed, each from a profile": the answer
// cache).
const DefaultAnswerCacheBytes = 64 << 20

// answerMaxAge is how long an entry is served, deepMaxAge's hour.
const answerMaxAge = time.Hour

// entryOverhead is what an entry costs beyond its key and body: the list
// element, the map slot and the struct, roughly.
const entryOverhead = 200

// cachedAnswer is one deep 200 answer.
type cachedAnswer struct {
	key   string
	chain chainquery.Chain
	block uint64    // the highest block the answer is about
	body  []byte    // the JSON and its newline, as writeJSON sends it; never modified
	tag   string    // its ETag, uncompressed form
	at    time.Time // when it was stored
	seq   uint64    // the head reading whose bound called it deep
}

func (a *cachedAnswer) cost() int64 { return int64(len(a.key) + len(a.body) + entryOverhead) }

// answerCache is a least-recently-used cache of deep answers, bounded in
// bytes. Its methods are safe for concurrent use.
//
// Deep answers do not change but by a reorg deeper than the chain's
// confirmations, so the server keeps the encoded bytes of the most recently
// used ones in memory and answers the same request again without the store,
// which was most of serve's CPU on those answers (docs/benchmarks.md, "What
// changed, each from a profile": the answer cache). The key and the rate
// limit are checked before the cache is, as for any request; one answer
// serves every key.
//
// An entry is served while it is younger than the deepMaxAge that the
// answer's Cache-Control gives any other cache, and the chain's head as last
// read still calls its block deep. Each head reading (once per TipTTL) also
// reads the store's log of rewrites (Store.Rewrites): a rewind, or a block
// written again, by any process, drops the entries about the heights it
// reached, so a rewrite is served at most TipTTL late, as the ETags already
// allow. An answer read from the store under a head reading older than the
// last one that dropped entries of its chain is not kept: it may predate
// the rewrite.
type answerCache struct {
	max      int64 // bytes
	maxEntry int64 // a larger answer is not kept: it would evict too many others

	mu     sync.Mutex
	size   int64
	byKey  map[string]*clist.Element   // of *cachedAnswer
	lru    clist.List                  // most recently used first
	forgot map[chainquery.Chain]uint64 // the head reading that last dropped answers of the chain
}

func newAnswerCache(max int64) *answerCache {
	if max <= 0 {
		return nil
	}
	return &answerCache{max: max, maxEntry: max / 8, byKey: map[string]*clist.Element{}, forgot: map[chainquery.Chain]uint64{}}
}

// get returns the entry of key, or nil.
func (c *answerCache) get(key string) *cachedAnswer {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byKey[key]
	if e == nil {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedAnswer)
}

// put stores a, evicting the least recently used entries to make room,
// unless a was read before the last rewrite of its chain was seen.
func (c *answerCache) put(a *cachedAnswer) {
	n := a.cost()
	if n > c.maxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.seq < c.forgot[a.chain] {
		return
	}
	if e := c.byKey[a.key]; e != nil {
		c.remove(e)
	}
	c.byKey[a.key] = c.lru.PushFront(a)
	c.size += n
	for c.size > c.max {
		c.remove(c.lru.Back())
	}
}

// remove drops e; c.mu is held.
func (c *answerCache) remove(e *clist.Element) {
	a := c.lru.Remove(e).(*cachedAnswer)
	delete(c.byKey, a.key)
	c.size -= a.cost()
}

// forgetFrom drops the entries about chain's blocks from height up, and
// refuses those read under a head reading older than seq, the reading that
// found the rewrite. Rewrites are rare (reorgs, a manual rewind), so a walk
// of every entry is cheap enough.
func (c *answerCache) forgetFrom(chain chainquery.Chain, height, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgot[chain] = max(c.forgot[chain], seq)
	for e := c.lru.Front(); e != nil; {
		next := e.Next()
		if a := e.Value.(*cachedAnswer); a.chain == chain && a.block >= height {
			c.remove(e)
		}
		e = next
	}
}

// bytes returns the bytes the entries hold, as cost counts them.
func (c *answerCache) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// answerKey returns the key of r's answer: the method, the path and query as
// sent, and for a POST its body, which it reads and puts back for the
// handler. It returns "" when r's answer is not to be looked up: a body
// over MaxBodyBytes (an error either way) or one that cannot be read.
func answerKey(r *http.Request) string {
	uri := r.URL.RequestURI()
	if r.Method != http.MethodPost {
		return r.Method + " " + uri
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) > MaxBodyBytes {
		return ""
	}
	return r.Method + " " + uri + "\n" + string(body)
}

// serveCached answers r from the cache when it holds a servable entry for
// r's answer, and reports whether it did. Otherwise it leaves the request's
// key in its info, so that writeAnswer keeps a deep answer under it.
func (s *Server) serveCached(w http.ResponseWriter, r *http.Request) bool {
	key := answerKey(r)
	if key == "" {
		return false
	}
	// The bound first: a head reading it makes may drop entries, the one
	// asked for among them. A path naming no chain the server knows has no
	// head, and no entry.
	bound := s.deepBound(r.Context(), chainquery.Chain(r.PathValue("chain")))
	if a := s.answers.get(key); a != nil && bound.covers(a.block) && time.Since(a.at) < answerMaxAge {
		s.metrics.answerCache.WithLabelValues("hit").Inc()
		s.writeDeep(w, r, a.body, a.tag)
		return true
	}
	s.metrics.answerCache.WithLabelValues("miss").Inc()
	infoFrom(r.Context()).answerKey = key
	return false
}

// keep stores b, a deep answer, under the key serveCached left in r's info,
// if any.
func (s *Server) keep(r *http.Request, deep deepAnswer, b []byte, tag string) {
	info := infoFrom(r.Context())
	if s.answers == nil || info.answerKey == "" {
		return
	}
	s.answers.put(&cachedAnswer{
		key: info.answerKey, chain: deep.chain, block: deep.block, seq: deep.seq,
		body: bytes.Clone(b), tag: tag, at: time.Now(),
	})
}
