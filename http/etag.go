package http

import (
	"context"
	"encoding/hex"
	"hash/crc32"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainquery/chainquery"
)

// An answer about blocks at least Config.Confirmations deep below the
// latest indexed block of their chain ("deep") changes only through a reorg
// deeper than that, which the confirmations are chosen to rule out. Such an
// answer gets a strong ETag and may be cached for deepMaxAge; every other
// answer says Cache-Control: no-cache, so that no cache serves it without
// asking again (and, having no validator, it is then sent in full).

// deepMaxAge is how long a cache may serve a deep answer without asking
// again. A reorg deeper than the confirmations would leave a cached answer
// stale for at most this long; an hour keeps that bounded while a client
// that asks again still gets a 304 from its ETag.
const deepMaxAge = "max-age=3600"

// TipTTL is how long the server trusts the latest indexed block of a
// chain it last read before reading it again: deep answers cost one
// LatestBlock query per chain per TTL, not one per request. A stale tip is
// lower than the real one (fewer answers count as deep), so staleness only
// ever withholds caching; after a rewind shallower than the confirmations,
// the blocks a stale tip calls deep are below the rewind and unchanged.
const TipTTL = time.Second

// cacheControl sets Cache-Control: no-cache on every answer before next
// runs; the handlers of deep answers replace it.
func cacheControl(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// tips holds, per chain with confirmations, the latest indexed block as
// last read. The map is filled by NewServer and only read afterwards.
type tips map[chainquery.Chain]*tip

type tip struct {
	confirmations uint64
	state         atomic.Pointer[tipState] // nil until first read
	refreshing    atomic.Bool              // one request at a time reads a stale tip again
	mark          atomic.Uint64            // the store's rewrite mark as last read (Rewrites)
}

// tipState is one reading of a chain's latest indexed block.
type tipState struct {
	latest uint64
	at     time.Time
	seq    uint64 // of readings

	// The time of the bound block (see deepBound), read once per reading
	// and only for a datetime range.
	boundaryOnce sync.Once
	boundaryTime int64
	boundaryOK   bool
}

func newTips(confirmations map[chainquery.Chain]uint64) tips {
	t := make(tips, len(confirmations))
	for c, n := range confirmations {
		t[c] = &tip{confirmations: n}
	}
	return t
}

// tipOf returns the latest reading of chain's tip, reading it again when it
// is older than TipTTL, or nil when chain has no confirmations
// configured or its tip could not be read (nothing is then deep).
func (s *Server) tipOf(ctx context.Context, chain chainquery.Chain) (*tipState, *tip) {
	t := s.tips[chain]
	if t == nil {
		return nil, nil
	}
	st := t.state.Load()
	if st != nil && time.Since(st.at) < TipTTL {
		return st, t
	}
	if st != nil {
		if !t.refreshing.CompareAndSwap(false, true) {
			return st, t // another request is reading it; the old one is safe meanwhile
		}
		defer t.refreshing.Store(false)
	}
	latest, err := s.store.LatestBlock(ctx, chain)
	if err != nil {
		// Not worth failing the answer for: it goes out as no-cache.
		s.logger.DebugContext(ctx, "latest block for caching", "chain", chain, "error", err)
		return st, t
	}
	next := &tipState{latest: latest, at: time.Now(), seq: readings.Add(1)}
	if s.answers != nil {
		// Read after the tip, so that a rewrite the tip reflects is seen
		// here too; the answers it reached are dropped before any request
		// takes this reading's bound.
		mark, lowest, err := s.store.Rewrites(ctx, chain, t.mark.Load())
		if err != nil {
			s.logger.DebugContext(ctx, "rewrites for caching", "chain", chain, "error", err)
			return st, t
		}
		if lowest != chainquery.NoRewrite {
			s.answers.forgetFrom(chain, lowest, next.seq)
		}
		t.mark.Store(mark)
	}
	t.state.Store(next)
	return next, t
}

// readings numbers the tip readings of all chains, in the order they are
// made: the answer cache refuses an answer read under a reading older than
// the last one that dropped answers of its chain.
var readings atomic.Uint64

// deepBound is the deepest block of a chain's tip reading, latest -
// confirmations: answers about blocks at or below it are deep. Handlers take
// it before they read the answer from the store, so that a block rewritten
// between the two reads is never called deep (a reorg within the
// confirmations of a later tip could rewrite a block that tip calls deep);
// its zero value (no reading) calls nothing deep.
type deepBound struct {
	chain chainquery.Chain
	block uint64
	state *tipState // nil: no reading
}

// deepBound returns the current bound of chain.
func (s *Server) deepBound(ctx context.Context, chain chainquery.Chain) deepBound {
	st, t := s.tipOf(ctx, chain)
	if st == nil || st.latest < t.confirmations {
		return deepBound{}
	}
	return deepBound{chain: chain, block: st.latest - t.confirmations, state: st}
}

// covers reports whether block is deep.
func (d deepBound) covers(block uint64) bool { return d.state != nil && block <= d.block }

// deepAnswer says whether an answer is deep, and about which blocks: those
// of chain up to block.
type deepAnswer struct {
	ok    bool
	chain chainquery.Chain
	block uint64
	seq   uint64 // the tip reading that called it deep
}

// answer returns the deepness of an answer about blocks up to block.
func (d deepBound) answer(block uint64) deepAnswer {
	a := deepAnswer{ok: d.covers(block), chain: d.chain, block: block}
	if a.ok {
		a.seq = d.state.seq
	}
	return a
}

// coversTime reports whether every block of chain stamped at or before to is
// deep. Block times do not decrease along a chain, so that holds when to is
// earlier than the time of the bound block: every block from it on is
// stamped later than to. The bound block's time is read once per reading
// of the tip.
func (s *Server) coversTime(ctx context.Context, chain chainquery.Chain, d deepBound, to time.Time) bool {
	st := d.state
	if st == nil {
		return false
	}
	st.boundaryOnce.Do(func() {
		b, err := s.store.FindBlock(ctx, chain, d.block, false)
		if err != nil {
			s.logger.DebugContext(ctx, "bound block for caching", "chain", chain, "error", err)
			return
		}
		st.boundaryTime, st.boundaryOK = b.Timestamp, true
	})
	return st.boundaryOK && to.Unix() < st.boundaryTime
}

// writeAnswer writes a, the 200 answer to r. A deep answer is kept in the
// answer cache when the request was looked up there (answers.go), and
// written by writeDeep. Any other answer goes as writeJSON sends it.
func (s *Server) writeAnswer(w http.ResponseWriter, r *http.Request, a jsonAppender, deep deepAnswer) {
	if !deep.ok {
		writeJSON(w, http.StatusOK, a)
		return
	}
	bp := bufferPool.Get().(*[]byte)
	b := append(a.appendJSON((*bp)[:0]), '\n')
	tag := etag(b)
	s.keep(r, deep, b, tag)
	s.writeDeep(w, r, b, tag)
	if cap(b) <= maxPooledBuffer {
		*bp = b[:0]
		bufferPool.Put(bp)
	}
}

// writeDeep writes b, a deep 200 answer to r whose uncompressed form has the
// ETag tag. It gets the tag (with "-gzip" when compressed), Cache-Control for
// deepMaxAge and Vary: apikey (a shared cache must not hand one key's answer
// to a request without one); when r's If-None-Match matches the tag the
// answer is 304 with no body.
func (s *Server) writeDeep(w http.ResponseWriter, r *http.Request, b []byte, tag string) {
	if compresses(w, len(b)) {
		tag = tag[:len(tag)-1] + `-gzip"`
	}
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", deepMaxAge)
	h.Add("Vary", "apikey")
	if noneMatch(r.Header["If-None-Match"], tag) {
		writeBody(w, http.StatusOK, b)
	} else {
		w.WriteHeader(http.StatusNotModified)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// etag returns the strong entity tag of the answer b: two CRC-32s of
// different polynomials, 64 bits that change with any change of the bytes
// (a reorg's new block hash, a trace's version), at about 10 GB/s with the
// CPU's CRC instructions where a cryptographic hash runs at 1.6. The
// compressed form is another representation and gets "-gzip" after the
// same digits (writeDeep). Equal bytes give equal tags on every server, so replicas
// behind one cache agree.
func etag(b []byte) string {
	var sum [8]byte
	ieee, c := crc32.ChecksumIEEE(b), crc32.Checksum(b, castagnoli)
	sum[0], sum[1], sum[2], sum[3] = byte(ieee>>24), byte(ieee>>16), byte(ieee>>8), byte(ieee)
	sum[4], sum[5], sum[6], sum[7] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
	tag := make([]byte, 0, 24)
	tag = append(tag, '"')
	tag = hex.AppendEncode(tag, sum[:])
	return string(append(tag, '"'))
}

// noneMatch reports whether the If-None-Match header values let the request
// through, that is whether none of their entity tags matches tag by the weak
// comparison (RFC 9110 §13.1.2: W/ is ignored) and none is "*". An absent
// header lets every request through; a malformed one is ignored as a whole,
// as the RFC allows for a header the server cannot parse.
func noneMatch(values []string, tag string) bool {
	for _, v := range values {
		for {
			v = strings.TrimLeft(v, " \t,")
			if v == "" {
				break
			}
			if v[0] == '*' {
				return false
			}
			v = strings.TrimPrefix(v, "W/")
			if v == "" || v[0] != '"' {
				return true // malformed
			}
			end := strings.IndexByte(v[1:], '"')
			if end < 0 {
				return true // malformed
			}
			if v[:end+2] == tag {
				return false
			}
			v = v[end+2:]
		}
	}
	return true
}
