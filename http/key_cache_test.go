package http_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/sqlite"
)

// countingStore counts the key lookups that reach the store.
type countingStore struct {
	*sqlite.DB
	lookups atomic.Int64
}

func (s *countingStore) FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*chainquery.APIKey, error) {
	s.lookups.Add(1)
	return s.DB.FindAPIKeyByHash(ctx, hash)
}

// TestKeyCache: a known key is looked up once per KeyCacheTTL, not once per
// request (the lookup was a large part of the CPU of a Get Block under load), an
// unknown key goes to the store every time, and a revoked key stops working
// within the TTL.
func TestKeyCache(t *testing.T) {
	cs := &countingStore{}
	s := MustOpenServer(t, func(c *cqhttp.Config) {
		cs.DB = c.Store.(*sqlite.DB)
		c.Store = cs
		c.KeyCacheTTL = time.Hour
	})
	for i := 0; i < 10; i++ {
		MustOK(t, s.Get(t, latestPath("polygon")))
	}
	if n := cs.lookups.Load(); n != 1 {
		t.Errorf("10 requests with one key made %d store lookups, want 1", n)
	}
	for i := 0; i < 3; i++ {
		MustErrorDetail(t, s.Do(t, http.MethodGet, latestPath("polygon"), "cq_unknown", nil), http.StatusUnauthorized)
	}
	if n := cs.lookups.Load(); n != 4 {
		t.Errorf("3 requests with an unknown key made %d store lookups, want 3 (unknown keys are never cached)", n-1)
	}

	t.Run("RevokeTakesEffectWithinTTL", func(t *testing.T) {
		const ttl = 200 * time.Millisecond
		s := MustOpenServer(t, func(c *cqhttp.Config) { c.KeyCacheTTL = ttl })
		key := MustCreateKey(t, s.DB, "soon-revoked", chainquery.Endpoints...)
		if got := s.Do(t, http.MethodGet, latestPath("polygon"), key, nil); got.Status != http.StatusOK {
			t.Fatalf("status %d before revocation", got.Status)
		}
		if err := s.DB.RevokeAPIKey(context.Background(), "soon-revoked"); err != nil {
			t.Fatal(err)
		}
		// The key was cached before the revocation, so by one TTL later
		// the cache has let go of it.
		time.Sleep(ttl)
		MustErrorDetail(t, s.Do(t, http.MethodGet, latestPath("polygon"), key, nil), http.StatusUnauthorized)
	})
}
