package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// gatedStore is the fixture store whose Get Block reads wait: until the
// request's context ends (stuck, a statement the deadline must interrupt),
// or for hold, or until release is closed. It counts the reads inside at
// once.
type gatedStore struct {
	*sqlite.DB
	stuck   bool
	hold    time.Duration
	release chan struct{}

	in, peak atomic.Int32
}

func (s *gatedStore) FindBlock(ctx context.Context, chain chainquery.Chain, number uint64, full bool) (*chainquery.Block, error) {
	n := s.in.Add(1)
	defer s.in.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	switch {
	case s.stuck:
		<-ctx.Done()
		return nil, fmt.Errorf("find block: %w", ctx.Err()) // as a store wraps its driver's error
	case s.release != nil:
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, fmt.Errorf("find block: %w", ctx.Err())
		}
	case s.hold > 0:
		time.Sleep(s.hold)
	}
	return s.DB.FindBlock(ctx, chain, number, full)
}

// openGatedServer serves gs over the fixture with edit applied, and creates
// a second key, other, enabled for every endpoint.
func openGatedServer(t *testing.T, gs *gatedStore, edit func(*cqhttp.Config)) (s *Server, other string) {
	t.Helper()
	s = MustOpenServer(t, func(c *cqhttp.Config) {
		gs.DB = c.Store.(*sqlite.DB)
		c.Store = gs
		c.Metrics = true
		edit(c)
	})
	return s, MustCreateKey(t, gs.DB, "other", chainquery.Endpoints...)
}

// rawResponse is a response read by get, which any goroutine may call.
type rawResponse struct {
	status int
	header http.Header
	detail string
	err    error
}

func get(url, key string) rawResponse {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return rawResponse{err: err}
	}
	req.Header.Set("apikey", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rawResponse{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	r := rawResponse{status: resp.StatusCode, header: resp.Header, err: err}
	var e struct{ Detail string }
	if resp.StatusCode != http.StatusOK && json.Unmarshal(b, &e) == nil {
		r.detail = e.Detail
	}
	return r
}

var gatedBlock = blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonBlock))

// TestRequestDeadline: a request whose store statement runs past the
// deadline is answered 503 at the deadline, with Retry-After and a detail
// that says how to narrow it, and the store's call ends with it.
func TestRequestDeadline(t *testing.T) {
	gs := &gatedStore{stuck: true}
	s, _ := openGatedServer(t, gs, func(c *cqhttp.Config) { c.RequestTimeout = 100 * time.Millisecond })
	resp := s.Do(t, http.MethodGet, gatedBlock, s.Key, nil)
	detail := MustErrorDetail(t, resp, http.StatusServiceUnavailable)
	if want := "the request was too expensive: it did not finish within the 100ms this server allows a request; "; !strings.HasPrefix(detail, want) {
		t.Errorf("detail %q, want it to start %q", detail, want)
	}
	if resp.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q, want 1", resp.Header.Get("Retry-After"))
	}
	if gs.in.Load() != 0 {
		t.Error("the store's call outlived the request")
	}
	// Filter Traces says how to narrow a trace filter.
	if got := cqhttp.NarrowHint(chainquery.EndpointFilterTraces); !strings.Contains(got, "shorter block or datetime range") {
		t.Errorf("Filter Traces hint %q", got)
	}
	metrics := string(s.Do(t, http.MethodGet, "/metrics", NoKey, nil).Body)
	if want := `chainquery_http_request_timeouts_total{route="/api/v1/customer/{chain}/block"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("metrics lack %s", want)
	}

	// A negative timeout sets none: the same request is not cut short.
	gs2 := &gatedStore{hold: 150 * time.Millisecond}
	s2, _ := openGatedServer(t, gs2, func(c *cqhttp.Config) { c.RequestTimeout = -1 })
	MustOK(t, s2.Do(t, http.MethodGet, gatedBlock, s2.Key, nil))
}

// TestFairShare_KeyShare: one key's requests hold at most its share of the
// store; the rest of its flood waits a short while and is refused with 429,
// Retry-After and a detail (no hung connection), while another key's
// request is admitted at once, not behind the flood's queue.
func TestFairShare_KeyShare(t *testing.T) {
	gs := &gatedStore{release: make(chan struct{})}
	s, other := openGatedServer(t, gs, func(c *cqhttp.Config) {
		c.StoreConcurrency = 4
		c.QueueWait = 300 * time.Millisecond
		c.QueueMax = 3
	})
	// The key's own concurrency is a cap even while it is alone.
	if _, err := gs.DB.UpdateAPIKey(context.Background(), "all", chainquery.APIKeyUpdate{Concurrency: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	const flood = 8
	results := make(chan rawResponse, flood)
	for range flood {
		go func() { results <- get(s.HTTP.URL+gatedBlock, s.Key) }()
	}
	// Wait for the flood to hold its share.
	for deadline := time.Now().Add(5 * time.Second); gs.in.Load() < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the flood never reached the store")
		}
		time.Sleep(time.Millisecond)
	}
	// The other key's request is admitted (not queued) while the flood
	// holds its two slots and three more of its requests wait.
	done := make(chan rawResponse, 1)
	go func() { done <- get(s.HTTP.URL+gatedBlock, other) }()
	for deadline := time.Now().Add(5 * time.Second); gs.in.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the other key's request did not reach the store while the flood held its share")
		}
		time.Sleep(time.Millisecond)
	}
	var refused []rawResponse
	for len(refused) < flood-2-3 { // over the queue: refused at once
		r := <-results
		if r.status != http.StatusTooManyRequests {
			t.Fatalf("a flood request over the queue got %d %q, want 429", r.status, r.detail)
		}
		refused = append(refused, r)
	}
	for range 3 { // the queue: refused after QueueWait
		refused = append(refused, <-results)
	}
	close(gs.release)
	for range 2 {
		if r := <-results; r.status != http.StatusOK {
			t.Errorf("a request holding a slot got %d %q", r.status, r.detail)
		}
	}
	if r := <-done; r.status != http.StatusOK {
		t.Fatalf("the other key got %d %q", r.status, r.detail)
	}
	for _, r := range refused {
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" ||
			!strings.HasPrefix(r.detail, "too many requests of this API key at once: at most 2 use the database at the same time") {
			t.Errorf("refusal %d, Retry-After %q, detail %q", r.status, r.header.Get("Retry-After"), r.detail)
		}
	}
	if p := gs.peak.Load(); p != 3 {
		t.Errorf("peak %d reads in the store, want the flood's 2 and the other key's 1", p)
	}
	metrics := string(s.Do(t, http.MethodGet, "/metrics", NoKey, nil).Body)
	for _, want := range []string{
		`chainquery_http_admissions_total{result="queue_full",route="/api/v1/customer/{chain}/block"} 3`,
		`chainquery_http_admissions_total{result="queue_timeout",route="/api/v1/customer/{chain}/block"} 3`,
		`chainquery_http_admissions_total{result="admitted",route="/api/v1/customer/{chain}/block"} 3`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestFairShare_CostBudget: a request is charged the time it used the
// store, in the headers; a key that spent its budget gets 429 with the
// seconds until it refills, another key does not, and a key's own budget
// overrides the server's.
func TestFairShare_CostBudget(t *testing.T) {
	gs := &gatedStore{hold: 30 * time.Millisecond}
	s, other := openGatedServer(t, gs, func(c *cqhttp.Config) {
		c.KeyDefaults = chainquery.KeyLimits{CostRate: 1, CostBurst: 10} // 10 ms, then 1 ms a second
	})
	// Alone, a key is charged but not refused, nor taken below zero.
	for range 2 {
		resp := s.Do(t, http.MethodGet, gatedBlock, s.Key, nil)
		MustOK(t, resp)
		if got := resp.Header.Get("X-Cost-Remaining"); got != "0" {
			t.Fatalf("alone: X-Cost-Remaining %q, want 0", got)
		}
	}
	// Another key uses the store (it was admitted within the last second):
	// from now on the first key is held to its budget: the refill since
	// admits one more request, charged into debt, and the next is refused.
	MustOK(t, s.Do(t, http.MethodGet, latestPath("polygon"), other, nil))
	MustOK(t, s.Do(t, http.MethodGet, gatedBlock, s.Key, nil))
	if detail := MustErrorDetail(t, s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil), http.StatusTooManyRequests); !strings.Contains(detail, "cost budget is spent") {
		t.Fatalf("detail %q", detail)
	}
	time.Sleep(cqhttp.ActiveWindow + 50*time.Millisecond) // the other key is idle again
	ok := s.Do(t, http.MethodGet, latestPath("polygon"), s.Key, nil)
	MustOK(t, ok)

	// A fresh key, with another in the store: charged into debt.
	fresh := MustCreateKey(t, gs.DB, "fresh", chainquery.Endpoints...)
	MustOK(t, s.Do(t, http.MethodGet, latestPath("polygon"), other, nil))
	resp := s.Do(t, http.MethodGet, gatedBlock, fresh, nil)
	MustOK(t, resp)
	cost, err := strconv.ParseFloat(resp.Header.Get("X-Request-Cost"), 64)
	if err != nil || cost < 30 {
		t.Fatalf("X-Request-Cost %q, want at least the 30 ms the store took", resp.Header.Get("X-Request-Cost"))
	}
	left, err := strconv.ParseFloat(resp.Header.Get("X-Cost-Remaining"), 64)
	if err != nil || left > 10-30+1 {
		t.Fatalf("X-Cost-Remaining %q, want the burst 10 less the cost", resp.Header.Get("X-Cost-Remaining"))
	}
	if got := resp.Header.Get("X-Cost-Limit"); got != "1/s, burst 10" {
		t.Errorf("X-Cost-Limit %q", got)
	}

	resp = s.Do(t, http.MethodGet, latestPath("polygon"), fresh, nil)
	detail := MustErrorDetail(t, resp, http.StatusTooManyRequests)
	if !strings.HasPrefix(detail, "this API key's cost budget is spent: it may use 1 ms of database time per second (up to 10 at once)") {
		t.Errorf("detail %q", detail)
	}
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 19 {
		t.Errorf("Retry-After %q, want the 20 s or so until the budget is positive", resp.Header.Get("Retry-After"))
	}
	MustOK(t, s.Do(t, http.MethodGet, latestPath("polygon"), other, nil)) // a budget of its own

	// A key's own cost rate: DefaultCostBurstSecs of it as its burst,
	// whatever the server's.
	_, err = gs.DB.UpdateAPIKey(context.Background(), "other", chainquery.APIKeyUpdate{CostRate: ptr(1000.0)})
	if err != nil {
		t.Fatal(err)
	}
	// The keys are trusted for a second: wait it out rather than race it.
	time.Sleep(cqhttp.DefaultKeyCacheTTL + 50*time.Millisecond)
	for range 3 {
		resp := get(s.HTTP.URL+gatedBlock, other)
		if resp.status != http.StatusOK {
			t.Fatalf("a key with a budget of its own got %d %q", resp.status, resp.detail)
		}
		if got := resp.header.Get("X-Cost-Limit"); got != "1000/s, burst 2000" {
			t.Fatalf("X-Cost-Limit %q, want the key's own", got)
		}
	}
}

// TestFairShare_Off: with fair share off, no request is refused for its
// share and no cost header is sent.
func TestFairShare_Off(t *testing.T) {
	gs := &gatedStore{release: make(chan struct{})}
	s, _ := openGatedServer(t, gs, func(c *cqhttp.Config) { c.StoreConcurrency = -1 })
	var wg sync.WaitGroup
	results := make(chan rawResponse, 12)
	for range 12 {
		wg.Go(func() { results <- get(s.HTTP.URL+gatedBlock, s.Key) })
	}
	for deadline := time.Now().Add(5 * time.Second); gs.in.Load() < 12; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 12 requests reached the store", gs.in.Load())
		}
		time.Sleep(time.Millisecond)
	}
	close(gs.release)
	wg.Wait()
	close(results)
	for r := range results {
		if r.status != http.StatusOK || r.header.Get("X-Request-Cost") != "" {
			t.Errorf("status %d, X-Request-Cost %q", r.status, r.header.Get("X-Request-Cost"))
		}
	}
}

func ptr[T any](v T) *T { return &v }
