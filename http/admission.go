package http

import (
	"cmp"
	clist "container/list"
	"context"
	"math"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
)

// admission is the store's gate: fair share between API keys. A request
// that needs the store (an answer cache hit does not) is admitted here first,
// and charged here after. A nil *admission admits everything.
//
//   - The store has a fixed number of slots (Config.StoreConcurrency: the
//     read pool's size, so that no request waits inside the driver's pool,
//     where the order is nobody's), and while other keys use the store each
//     key may hold at most its share of them (KeyLimits.Concurrency). One
//     key's flood therefore never holds the whole store: the slots it cannot
//     take stay free for the other keys' requests, which start at once. The
//     default share is small (half the cores: the share is of the
//     database's CPU, and a key holding every core leaves the others only
//     what the scheduler preempts for them), so it gives way while a key is
//     alone: then it may hold every slot but one, the one a newcomer takes
//     at once. A key's own concurrency (keys update --concurrency) is a cap
//     whether or not it is alone.
//   - A request that finds no slot waits in its key's queue, a short while at
//     most (Config.QueueWait). Freed slots go to the keys with waiting
//     requests in turn, one request per key per turn: a key's cheap request
//     waits behind at most one request of each other key, never behind a
//     whole queue of another key's expensive ones. A request that cannot
//     queue (its key's queue is full) or waits too long gets 429.
//   - A request's cost is how long it held its slot, in milliseconds (the
//     same work is charged more on a loaded machine, which is when it costs
//     more). Each key has a budget of cost that refills at
//     KeyLimits.CostRate per second up to KeyLimits.CostBurst: while other
//     keys use the store, a request is admitted while the budget is above
//     zero and charged when it ends, so a key that spent its budget waits,
//     answered 429 with Retry-After, until the budget is positive again. One
//     expensive request a second is then limited like many cheap ones. A key
//     alone is charged too, but never refused for cost nor taken below zero:
//     the budget protects the other keys, and there are none.
//
// This is the shape of a concurrency limiter with per-tenant fair queuing
// (Envoy's and Netflix's limiters bound concurrency rather than rate, since
// concurrency is what overload is made of) and of cost-based limits (GitHub
// GraphQL's points, Alchemy's compute units), with the cost measured rather
// than estimated: a request's shape says little about its work here (a
// Filter Traces page of a cold address and one of a hot address differ by
// orders of magnitude: docs/benchmarks.md, "Load, SQLite").
type admission struct {
	mu       sync.Mutex
	slots    int           // the store's slots
	inUse    int           // slots held now
	queueMax int           // waiting requests a key may have
	maxWait  time.Duration // how long a request may wait for a slot
	defaults chainquery.KeyLimits
	now      func() time.Time

	keys map[string]*keyShare // by key name, made on a key's first request

	// recent are the last two distinct keys admitted, the latest first, and
	// when: recent[1] is the last admission of a key other than
	// recent[0]'s, which is all othersActive needs of the past.
	recent [2]struct {
		ks *keyShare
		at time.Time
	}
	turn *clist.List // keys with waiting requests, in turn order (*keyShare)
}

// keyShare is one key's state: its slots, its queue and its budget.
type keyShare struct {
	name    string
	limits  chainquery.KeyLimits // with the defaults filled in
	capped  bool                 // the key sets its own concurrency: a cap even when alone
	inUse   int
	waiting *clist.List    // *waiter, oldest first
	inTurn  *clist.Element // the key's element of admission.turn; nil when not waiting

	budget  float64 // cost units left; may be below zero after a costly request
	updated time.Time
}

// waiter is a request waiting for a slot: granted is closed once it holds one.
type waiter struct {
	granted chan struct{}
	el      *clist.Element
}

// Defaults of fair share, used when Config leaves them zero. They were
// chosen by measurement (docs/benchmarks.md, "Fair share").
const (
	DefaultQueueWait     = 500 * time.Millisecond
	DefaultQueueMax      = 100 // waiting requests of one key: QueueWait, not this, bounds a flood
	DefaultCostRate      = 500 // ms of store time per second: half a slot's worth (docs/benchmarks.md, "Fair share")
	DefaultCostBurstSecs = 2   // a full budget holds this many seconds of CostRate
)

// DefaultStoreConcurrency is the store's slots when Config leaves them zero:
// the size of the SQLite store's read pool (2 per core).
func DefaultStoreConcurrency(gomaxprocs int) int { return max(2, 2*gomaxprocs) }

// DefaultKeyConcurrency is a key's share of the slots while other keys use
// the store, when neither the key nor Config sets it: a quarter of them,
// half the cores at the default two slots a core, so that one key's heavy
// requests leave the database's other cores to the other keys.
func DefaultKeyConcurrency(storeSlots int) int { return max(1, storeSlots/4) }

// activeWindow is how recently a key must have been admitted to count as
// using the store, for the share of the others (limit).
const activeWindow = time.Second

func newAdmission(slots, queueMax int, maxWait time.Duration, defaults chainquery.KeyLimits, now func() time.Time) *admission {
	if slots <= 0 {
		return nil
	}
	if defaults.Concurrency <= 0 {
		defaults.Concurrency = DefaultKeyConcurrency(slots)
	}
	if defaults.CostRate <= 0 {
		defaults.CostRate = DefaultCostRate
	}
	if defaults.CostBurst <= 0 {
		defaults.CostBurst = defaults.CostRate * DefaultCostBurstSecs
	}
	if queueMax <= 0 {
		queueMax = DefaultQueueMax
	}
	if maxWait <= 0 {
		maxWait = DefaultQueueWait
	}
	return &admission{
		slots: slots, queueMax: queueMax, maxWait: maxWait, defaults: defaults, now: now,
		keys: make(map[string]*keyShare), turn: clist.New(),
	}
}

// limitsOf fills the zero limits of k with the admission's defaults.
func (a *admission) limitsOf(k *chainquery.APIKey) chainquery.KeyLimits {
	l := k.Limits
	if l.Concurrency <= 0 {
		l.Concurrency = a.defaults.Concurrency
	}
	if l.CostRate <= 0 {
		l.CostRate = a.defaults.CostRate
	}
	if l.CostBurst <= 0 {
		// A key given a cost rate of its own holds the default number of
		// seconds of it; the server's burst belongs to the server's rate.
		if k.Limits.CostRate > 0 {
			l.CostBurst = l.CostRate * DefaultCostBurstSecs
		} else {
			l.CostBurst = a.defaults.CostBurst
		}
	}
	return l
}

// share returns k's state, with its limits as the key now has them (an
// operator may change them while the server runs) and its budget refilled
// up to now. a.mu must be held.
func (a *admission) share(k *chainquery.APIKey, now time.Time) *keyShare {
	ks, ok := a.keys[k.Name]
	limits := a.limitsOf(k)
	if !ok {
		ks = &keyShare{name: k.Name, limits: limits, capped: k.Limits.Concurrency > 0, waiting: clist.New(), budget: limits.CostBurst, updated: now}
		a.keys[k.Name] = ks
		return ks
	}
	ks.limits, ks.capped = limits, k.Limits.Concurrency > 0
	ks.refill(now)
	return ks
}

// refill adds to ks's budget what its cost rate gave it since it was last
// refilled, up to its burst. a.mu must be held.
func (ks *keyShare) refill(now time.Time) {
	if dt := now.Sub(ks.updated).Seconds(); dt > 0 {
		ks.budget = math.Min(ks.limits.CostBurst, ks.budget+dt*ks.limits.CostRate)
		ks.updated = now
	}
}

// ticket is an admitted request's hold on a slot: done gives the slot back
// and charges the key.
type ticket struct {
	a      *admission
	ks     *keyShare
	start  time.Time
	once   sync.Once
	waited bool                 // it queued for its slot
	cost   float64              // ms charged, set by done
	limits chainquery.KeyLimits // the key's, as done read them
	left   float64              // the key's budget after the charge
}

// rejection is a refused admission: the error for the client and the
// Retry-After seconds to send with it.
type rejection struct {
	err        error
	retryAfter int
	reason     string // the admission metric's result
}

// admit returns a ticket once k's request holds a slot, or a rejection.
// It waits at most a.maxWait, and no longer than ctx allows.
func (a *admission) admit(ctx context.Context, k *chainquery.APIKey) (*ticket, *rejection) {
	if a == nil {
		return &ticket{}, nil
	}
	now := a.now()
	a.mu.Lock()
	ks := a.share(k, now)
	if ks.budget <= 0 && a.othersActive(ks, now) {
		var rej *rejection
		if ks, now, rej = a.awaitBudget(ctx, k, ks, now); rej != nil {
			return nil, rej
		}
	}
	if ks.budget <= 0 && a.othersActive(ks, now) {
		a.mu.Unlock()
		return nil, spent(ks)
	}
	lim := a.limit(ks, now)
	if ks.inUse < lim && a.inUse < a.slots && ks.waiting.Len() == 0 {
		a.hold(ks, now)
		a.mu.Unlock()
		return &ticket{a: a, ks: ks, start: now}, nil
	}
	if ks.waiting.Len() >= a.queueMax {
		a.mu.Unlock()
		return nil, a.busy(lim, "queue_full")
	}
	w := a.enqueue(ks)
	a.mu.Unlock()
	return a.await(ctx, ks, w)
}

// awaitBudget waits until the spent budget of ks is positive again, a.maxWait
// at most, and returns k's share and the time after the wait. A short debt
// becomes a short wait rather than a refusal; a long one is refused after the
// wait, so that a client that ignores Retry-After gets at most one answer per
// connection per a.maxWait, rather than a storm of refusals that would cost
// the other keys more than its requests did. a.mu must be held; it is held
// again on return, except with the rejection of a request whose ctx ended.
func (a *admission) awaitBudget(ctx context.Context, k *chainquery.APIKey, ks *keyShare, now time.Time) (*keyShare, time.Time, *rejection) {
	wait := time.Duration(-ks.budget / ks.limits.CostRate * float64(time.Second))
	lim := a.limit(ks, now)
	a.mu.Unlock()
	if !sleepCtx(ctx, min(wait+time.Millisecond, a.maxWait)) {
		return nil, now, a.busy(lim, "canceled")
	}
	now = a.now()
	a.mu.Lock()
	return a.share(k, now), now, nil
}

// spent is the rejection of a request whose key's cost budget is spent
// while other keys use the store: Retry-After is when the budget is
// positive again.
func spent(ks *keyShare) *rejection {
	secs := max(1, int(math.Ceil(-ks.budget/ks.limits.CostRate)))
	return &rejection{
		err: chainquery.Errorf(chainquery.ERATELIMIT,
			"this API key's cost budget is spent: it may use %s ms of database time per second (up to %s at once), and its recent requests used more; retry after %d s, or ask for less per request (a shorter range, fewer addresses, a smaller offset)",
			formatUnits(ks.limits.CostRate), formatUnits(ks.limits.CostBurst), secs),
		retryAfter: secs, reason: "cost",
	}
}

// hold gives ks a slot at now. a.mu must be held.
func (a *admission) hold(ks *keyShare, now time.Time) {
	ks.inUse++
	a.inUse++
	a.admitted(ks, now)
}

// enqueue puts a request of ks at the back of its key's queue, and the key
// in the turn if it was not waiting yet. a.mu must be held.
func (a *admission) enqueue(ks *keyShare) *waiter {
	w := &waiter{granted: make(chan struct{})}
	w.el = ks.waiting.PushBack(w)
	if ks.inTurn == nil {
		ks.inTurn = a.turn.PushBack(ks)
	}
	return w
}

// await waits, a.maxWait at most and no longer than ctx allows, for grant
// to hand w a slot, and otherwise takes w out of its key's queue. a.mu must
// not be held.
func (a *admission) await(ctx context.Context, ks *keyShare, w *waiter) (*ticket, *rejection) {
	timer := time.NewTimer(a.maxWait)
	defer timer.Stop()
	var reason string
	select {
	case <-w.granted:
		return &ticket{a: a, ks: ks, start: a.now(), waited: true}, nil
	case <-timer.C:
		reason = "queue_timeout"
	case <-ctx.Done():
		reason = "canceled"
	}
	a.mu.Lock()
	select {
	case <-w.granted: // granted while the timer fired: take it after all
		a.mu.Unlock()
		return &ticket{a: a, ks: ks, start: a.now(), waited: true}, nil
	default:
	}
	ks.waiting.Remove(w.el)
	if ks.waiting.Len() == 0 && ks.inTurn != nil {
		a.turn.Remove(ks.inTurn)
		ks.inTurn = nil
	}
	lim := a.limit(ks, a.now())
	a.mu.Unlock()
	return nil, a.busy(lim, reason)
}

// sleepCtx waits d, or until ctx ends; it reports whether it waited d.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// busy is the rejection of a request that found no slot in time.
// concurrency is the key's limit as admission last read it, under a.mu.
func (a *admission) busy(concurrency int, reason string) *rejection {
	return &rejection{
		err: chainquery.Errorf(chainquery.ERATELIMIT,
			"too many requests of this API key at once: at most %d use the database at the same time and %d more may wait; retry after 1 s, or send fewer requests in parallel",
			concurrency, a.queueMax),
		retryAfter: 1, reason: reason,
	}
}

// done gives the ticket's slot back, charges its key the time it held it,
// and hands free slots to waiting requests, a key at a time in turn. It does
// something only once; a ticket of a nil admission does nothing.
func (t *ticket) done() {
	if t.a == nil {
		return
	}
	t.once.Do(func() {
		a := t.a
		now := a.now()
		t.cost = float64(now.Sub(t.start)) / float64(time.Millisecond)
		a.mu.Lock()
		defer a.mu.Unlock()
		ks := t.ks
		ks.inUse--
		a.inUse--
		t.limits = ks.limits
		ks.refill(now)
		if a.othersActive(ks, now) {
			ks.budget -= t.cost
		} else {
			// Alone, a key may use the whole store: its budget is
			// charged, but not below zero, so that it is held to its
			// rate as soon as another key comes, not locked out for the
			// debt of a time when it harmed nobody.
			ks.budget = max(ks.budget-t.cost, min(ks.budget, 0))
		}
		t.left = ks.budget
		a.grant(now)
	})
}

// grant hands free slots to waiting requests: the key at the front of the
// turn gets one if it may hold another, and goes to the back while it still
// waits. A key at its own limit is passed over (it gets a slot back when one
// of its requests ends). a.mu must be held.
func (a *admission) grant(now time.Time) {
	for n := a.turn.Len(); a.inUse < a.slots && n > 0; n-- {
		el := a.turn.Front()
		ks := el.Value.(*keyShare)
		if ks.inUse >= a.limit(ks, now) {
			a.turn.MoveToBack(el)
			continue
		}
		w := ks.waiting.Remove(ks.waiting.Front()).(*waiter)
		a.hold(ks, now)
		close(w.granted)
		if ks.waiting.Len() == 0 {
			a.turn.Remove(el)
			ks.inTurn = nil
		} else {
			a.turn.MoveToBack(el)
		}
		n = a.turn.Len() + 1 // a grant may let every key have another turn
	}
}

// limit is how many slots ks may hold now: its own concurrency when it has
// one; else its default share while another key uses the store (holds a
// slot, waits for one, or was admitted within activeWindow), and every slot
// but one while it is alone. a.mu must be held.
func (a *admission) limit(ks *keyShare, now time.Time) int {
	if ks.capped || a.othersActive(ks, now) {
		return ks.limits.Concurrency
	}
	return max(ks.limits.Concurrency, a.slots-1)
}

// othersActive reports whether a key other than ks uses the store. a.mu
// must be held.
func (a *admission) othersActive(ks *keyShare, now time.Time) bool {
	if a.inUse > ks.inUse || a.turn.Len() > 1 || (a.turn.Len() == 1 && ks.inTurn == nil) {
		return true
	}
	for _, r := range a.recent {
		if r.ks != nil && r.ks != ks && now.Sub(r.at) < activeWindow {
			return true
		}
	}
	return false
}

// admitted records that ks was admitted at now. a.mu must be held.
func (a *admission) admitted(ks *keyShare, now time.Time) {
	if a.recent[0].ks != ks {
		a.recent[1] = a.recent[0]
		a.recent[0].ks = ks
	}
	a.recent[0].at = now
}

// formatUnits writes a number of cost units as the headers and details show
// them: to the microsecond, with no trailing zeros.
func formatUnits(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) }

// Share is fair share as a Config resolves it, defaults filled in: what
// serve logs at start.
type Share struct {
	StoreConcurrency int
	Key              chainquery.KeyLimits // the defaults of a key that sets none
	QueueWait        time.Duration
	QueueMax         int
}

// EffectiveShare returns the fair share cfg sets up; StoreConcurrency 0
// when it is off.
func EffectiveShare(cfg Config) Share {
	a := newAdmissionFor(cfg)
	if a == nil {
		return Share{}
	}
	return Share{StoreConcurrency: a.slots, Key: a.defaults, QueueWait: a.maxWait, QueueMax: a.queueMax}
}

// newAdmissionFor is the admission cfg sets up; nil when fair share is off.
func newAdmissionFor(cfg Config) *admission {
	slots := cmp.Or(cfg.StoreConcurrency, DefaultStoreConcurrency(runtime.GOMAXPROCS(0)))
	return newAdmission(slots, cfg.QueueMax, cfg.QueueWait, cfg.KeyDefaults, time.Now)
}
