package http

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainquery/chainquery"
)

// HeadTTL is how long the server trusts the latest indexed block of a
// chain it last read before reading it again: deep answers cost one
// LatestBlock query per chain per TTL, not one per request. A stale head is
// lower than the real one (fewer answers count as deep), so staleness only
// ever withholds caching; after a rewind shallower than the confirmations,
// the blocks a stale head calls deep are below the rewind and unchanged.
const HeadTTL = time.Second

// heads holds, per chain with confirmations, the latest indexed block as
// last read. The map is filled by NewServer and only read afterwards.
type heads map[chainquery.Chain]*chainHead

type chainHead struct {
	confirmations uint64
	state         atomic.Pointer[headState] // nil until first read
	refreshing    atomic.Bool               // one request at a time reads a stale head again
	mark          atomic.Uint64             // the store's rewrite mark as last read (Rewrites)
}

// headState is one reading of a chain's latest indexed block.
type headState struct {
	latest uint64
	at     time.Time
	seq    uint64 // of readings

	// The time of the bound block (see deepBound), read once per reading
	// and only for a datetime range.
	boundaryOnce sync.Once
	boundaryTime int64
	boundaryOK   bool
}

func newHeads(confirmations map[chainquery.Chain]uint64) heads {
	t := make(heads, len(confirmations))
	for c, n := range confirmations {
		t[c] = &chainHead{confirmations: n}
	}
	return t
}

// headOf returns the latest reading of chain's head, reading it again when it
// is older than TipTTL, or nil when chain has no confirmations
// configured or its head could not be read (nothing is then deep).
func (s *Server) headOf(ctx context.Context, chain chainquery.Chain) (*headState, *chainHead) {
	t := s.heads[chain]
	if t == nil {
		return nil, nil
	}
	st := t.state.Load()
	if st != nil && time.Since(st.at) < HeadTTL {
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
	next := &headState{latest: latest, at: time.Now(), seq: readings.Add(1)}
	if s.answers != nil {
		// Read after the head, so that a rewrite the head reflects is seen
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

// readings numbers the head readings of all chains, in the order they are
// made: the answer cache refuses an answer read under a reading older than
// the last one that dropped answers of its chain.
var readings atomic.Uint64

// deepBound is the deepest block of a chain's head reading, latest -
// confirmations: answers about blocks at or below it are deep. Handlers take
// it before they read the answer from the store, so that a block rewritten
// between the two reads is never called deep (a reorg within the
// confirmations of a later head could rewrite a block that head calls deep);
// its zero value (no reading) calls nothing deep.
type deepBound struct {
	chain chainquery.Chain
	block uint64
	state *headState // nil: no reading
}

// deepBound returns the current bound of chain.
func (s *Server) deepBound(ctx context.Context, chain chainquery.Chain) deepBound {
	st, t := s.headOf(ctx, chain)
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
	seq   uint64 // the head reading that called it deep
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
// of the head.
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

// rangeDeepness says whether the answer about a block range ending at
// toBlock, or a datetime range ending at toTime, is deep: every block of
// the range is at or below the deep bound.
func (s *Server) rangeDeepness(ctx context.Context, chain chainquery.Chain, bound deepBound, toBlock *uint64, toTime *time.Time) deepAnswer {
	if toBlock != nil {
		return bound.answer(*toBlock)
	} else if toTime != nil && s.coversTime(ctx, chain, bound, *toTime) {
		return bound.answer(bound.block) // every block of the range is at or below it
	}
	return deepAnswer{}
}
