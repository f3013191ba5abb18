package http

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// clock is a settable time for the admission's budget.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func testKey(name string, l chainquery.KeyLimits) *chainquery.APIKey {
	return &chainquery.APIKey{Name: name, Limits: l}
}

// mustAdmit admits k at once or fails.
func mustAdmit(t *testing.T, a *admission, k *chainquery.APIKey) *ticket {
	t.Helper()
	tk, rej := a.admit(context.Background(), k)
	if rej != nil {
		t.Fatalf("%s refused: %v", k.Name, rej.err)
	}
	return tk
}

// queued starts an admission of k in the background; its ticket (or nil,
// refused) arrives on the channel. It returns once the request waits.
func queued(t *testing.T, a *admission, k *chainquery.APIKey) <-chan *ticket {
	t.Helper()
	ch := make(chan *ticket, 1)
	before := waiting(a, k.Name)
	go func() {
		tk, _ := a.admit(context.Background(), k)
		ch <- tk
	}()
	for deadline := time.Now().Add(5 * time.Second); waiting(a, k.Name) == before; {
		if time.Now().After(deadline) {
			t.Fatalf("%s's request never queued", k.Name)
		}
		time.Sleep(time.Millisecond)
	}
	return ch
}

func waiting(a *admission, name string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ks, ok := a.keys[name]; ok {
		return ks.waiting.Len()
	}
	return 0
}

// TestAdmission_KeyConcurrency: a key at its own limit queues while another
// key's request takes a free slot at once.
func TestAdmission_KeyConcurrency(t *testing.T) {
	a := newAdmission(4, 4, time.Minute, chainquery.KeyLimits{Concurrency: 1}, time.Now)
	flood, cheap := testKey("flood", chainquery.KeyLimits{Concurrency: 2}), testKey("cheap", chainquery.KeyLimits{})
	t1, t2 := mustAdmit(t, a, flood), mustAdmit(t, a, flood)
	third := queued(t, a, flood)  // its own concurrency is a cap, alone or not
	mustAdmit(t, a, cheap).done() // two slots are free for other keys
	t1.done()
	if tk := <-third; tk == nil || !tk.waited {
		t.Fatal("the flood's third request was not admitted from the queue when its first ended")
	}
	t2.done()
}

// TestAdmission_AloneTakesMore: a key with the default share may hold every
// slot but one while no other key uses the store; once one does, the
// newcomer takes the slot left at once, and the first key is held to its
// share until another key has been idle for activeWindow.
func TestAdmission_AloneTakesMore(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	a := newAdmission(4, 10, time.Minute, chainquery.KeyLimits{Concurrency: 1}, c.now)
	flood, cheap := testKey("flood", chainquery.KeyLimits{}), testKey("cheap", chainquery.KeyLimits{})
	held := []*ticket{mustAdmit(t, a, flood), mustAdmit(t, a, flood), mustAdmit(t, a, flood)}
	fourth := queued(t, a, flood)  // every slot but one
	mine := mustAdmit(t, a, cheap) // the one left
	mine.done()
	held[0].done() // cheap was admitted just now: flood holds 2, over its share of 1
	if n := inUse(a, "flood"); n != 2 {
		t.Fatalf("the flood holds %d slots after one of three ended, want 2: it took the freed slot while another key is active", n)
	}
	held[1].done()
	held[2].done() // flood holds none: its share admits one
	tk := <-fourth
	if tk == nil {
		t.Fatal("the flood's waiting request was refused")
	}
	c.add(2 * activeWindow) // cheap is idle now: the flood is alone again
	more := []*ticket{tk, mustAdmit(t, a, flood), mustAdmit(t, a, flood)}
	for _, tk := range more {
		tk.done()
	}
}

// TestAdmission_FairTurns: when slots are scarce, freed slots go to the
// waiting keys in turn, so one key's request waits behind at most one of
// each other key's, however many that key has queued.
func TestAdmission_FairTurns(t *testing.T) {
	a := newAdmission(1, 10, time.Minute, chainquery.KeyLimits{Concurrency: 1}, time.Now)
	flood, cheap := testKey("flood", chainquery.KeyLimits{}), testKey("cheap", chainquery.KeyLimits{})
	holder := mustAdmit(t, a, flood)
	var floods []<-chan *ticket
	for range 5 {
		floods = append(floods, queued(t, a, flood))
	}
	mine := queued(t, a, cheap)

	holder.done() // the flood's turn came first: its oldest waiter
	next := <-floods[0]
	if n := inUse(a, "cheap"); n != 0 {
		t.Fatal("cheap admitted while the flood holds the only slot")
	}
	next.done() // now the cheap key's turn, ahead of four more of the flood
	if n := inUse(a, "cheap"); n != 1 || inUse(a, "flood") != 0 {
		t.Fatalf("after the flood's turn: cheap holds %d slots, the flood %d; want the one slot to be cheap's", n, inUse(a, "flood"))
	}
	tk := <-mine
	if tk == nil {
		t.Fatal("cheap refused")
	}
	tk.done()
	for _, ch := range floods[1:] {
		(<-ch).done()
	}
	if a.inUse != 0 {
		t.Fatalf("%d slots still held", a.inUse)
	}
}

// TestAdmission_Refusals: a full queue and a wait past QueueWait are 429
// with Retry-After, and neither leaves a slot or a waiter behind.
func TestAdmission_Refusals(t *testing.T) {
	a := newAdmission(1, 1, 20*time.Millisecond, chainquery.KeyLimits{Concurrency: 1}, time.Now)
	k := testKey("k", chainquery.KeyLimits{})
	holder := mustAdmit(t, a, k)
	first := queued(t, a, k)
	if _, rej := a.admit(context.Background(), k); rej == nil || rej.reason != "queue_full" || rej.retryAfter < 1 ||
		chainquery.ErrorCode(rej.err) != chainquery.ERATELIMIT {
		t.Fatalf("full queue: %+v", rej)
	}
	if tk := <-first; tk != nil {
		t.Fatal("a request waited past QueueWait and was admitted")
	}
	if n := waiting(a, "k"); n != 0 {
		t.Fatalf("%d waiters left behind", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, rej := a.admit(ctx, k); rej == nil || rej.reason != "canceled" {
		t.Fatalf("canceled wait: %+v", rej)
	}
	holder.done()
	mustAdmit(t, a, k).done()
	if a.inUse != 0 {
		t.Fatalf("%d slots still held", a.inUse)
	}
}

// TestAdmission_CostBudget: a request is charged the time it held its slot;
// while another key uses the store, a key whose budget is spent is refused
// with the seconds until it is positive again, and admitted once it has
// refilled. Another key's budget is its own.
func TestAdmission_CostBudget(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	a := newAdmission(4, 4, 10*time.Millisecond, chainquery.KeyLimits{CostRate: 100, CostBurst: 300}, c.now)
	k, other := testKey("k", chainquery.KeyLimits{}), testKey("other", chainquery.KeyLimits{})
	bystander := mustAdmit(t, a, testKey("bystander", chainquery.KeyLimits{})) // holds a slot throughout
	defer bystander.done()

	tk := mustAdmit(t, a, k)
	c.add(550 * time.Millisecond) // a request that holds its slot 550 ms costs 550 units
	tk.done()
	if tk.cost != 550 || tk.left != 300-550 {
		t.Fatalf("cost %v, left %v; want 550 and -250", tk.cost, tk.left)
	}
	_, rej := a.admit(context.Background(), k)
	if rej == nil || rej.reason != "cost" || rej.retryAfter != 3 { // 250 units at 100/s
		t.Fatalf("spent budget: %+v", rej)
	}
	mustAdmit(t, a, other).done() // not another key's budget

	c.add(2 * time.Second) // -250 + 200: still spent
	if _, rej := a.admit(context.Background(), k); rej == nil || rej.retryAfter != 1 {
		t.Fatalf("after 2 s: %+v", rej)
	}
	c.add(time.Second)
	mustAdmit(t, a, k).done()

	c.add(time.Hour) // refills up to the burst, never beyond
	tk = mustAdmit(t, a, k)
	tk.done()
	if tk.left != 300 {
		t.Fatalf("left %v after an hour, want the burst 300", tk.left)
	}
}

// TestAdmission_CostWait: a debt shorter than the queue wait is waited out
// and the request admitted; a longer one is refused only after the wait, so
// that a client ignoring Retry-After is answered once per wait at most.
func TestAdmission_CostWait(t *testing.T) {
	a := newAdmission(4, 4, 200*time.Millisecond, chainquery.KeyLimits{CostRate: 1000, CostBurst: 1}, time.Now)
	k := testKey("k", chainquery.KeyLimits{})
	bystander := mustAdmit(t, a, testKey("bystander", chainquery.KeyLimits{}))
	defer bystander.done()
	tk := mustAdmit(t, a, k)
	time.Sleep(30 * time.Millisecond) // about 30 units at 1 a millisecond: 30 ms of debt
	tk.done()
	start := time.Now()
	mustAdmit(t, a, k).done() // waited out
	if d := time.Since(start); d < 10*time.Millisecond {
		t.Errorf("admitted after %s, with ~30 ms of debt", d)
	}
	tk = mustAdmit(t, a, k)
	time.Sleep(400 * time.Millisecond) // 400 ms of debt: more than the 200 ms wait
	tk.done()
	start = time.Now()
	if _, rej := a.admit(context.Background(), k); rej == nil || rej.reason != "cost" {
		t.Fatalf("a long debt: %+v", rej)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("refused after %s, not after the wait", d)
	}
}

// TestAdmission_CostAlone: a key alone is charged but never refused for
// cost, nor taken below zero; as soon as another key uses the store, it is
// held to its budget.
func TestAdmission_CostAlone(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	a := newAdmission(4, 4, 10*time.Millisecond, chainquery.KeyLimits{CostRate: 100, CostBurst: 300}, c.now)
	k := testKey("k", chainquery.KeyLimits{})
	for range 3 {
		tk := mustAdmit(t, a, k)
		c.add(time.Second) // 1000 units, more than the budget holds
		tk.done()
		if tk.cost != 1000 || tk.left != 0 {
			t.Fatalf("alone: cost %v, left %v; want 1000 and 0", tk.cost, tk.left)
		}
	}
	other := mustAdmit(t, a, testKey("other", chainquery.KeyLimits{}))
	if _, rej := a.admit(context.Background(), k); rej == nil || rej.reason != "cost" {
		t.Fatalf("with another key in the store, a spent budget: %+v", rej)
	}
	other.done()
}

// TestAdmission_KeyLimits: a key's own limits override the defaults, and a
// change of them reaches the admission on the key's next request.
func TestAdmission_KeyLimits(t *testing.T) {
	a := newAdmission(8, 8, time.Minute, chainquery.KeyLimits{Concurrency: 1, CostRate: 100, CostBurst: 1000}, time.Now)
	k := testKey("k", chainquery.KeyLimits{Concurrency: 3, CostRate: 50})
	var held []*ticket
	for range 3 {
		held = append(held, mustAdmit(t, a, k))
	}
	if got := a.keys["k"].limits; got.Concurrency != 3 || got.CostRate != 50 || got.CostBurst != 50*DefaultCostBurstSecs {
		t.Fatalf("limits %+v: want the key's concurrency and rate, and %d s of its rate as burst", got, DefaultCostBurstSecs)
	}
	k2 := testKey("k", chainquery.KeyLimits{Concurrency: 4})
	held = append(held, mustAdmit(t, a, k2)) // the raised limit applies at once
	for _, tk := range held {
		tk.done()
	}
	if got := a.keys["k"].limits; got.CostRate != 100 || got.CostBurst != 1000 {
		t.Fatalf("limits %+v: want the defaults' budget back", got)
	}
}

// TestAdmission_NilAdmitsAll: with fair share off, admission is a no-op.
func TestAdmission_NilAdmitsAll(t *testing.T) {
	var a *admission
	tk, rej := a.admit(context.Background(), testKey("k", chainquery.KeyLimits{}))
	if rej != nil || tk == nil {
		t.Fatal("a nil admission refused")
	}
	tk.done()
}

// inUse is how many slots the key name holds.
func inUse(a *admission, name string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.keys[name].inUse
}
