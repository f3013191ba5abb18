package storetest

import (
	"context"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// testAPIKeyLimits checks the per-key limits (chainquery.KeyLimits): they
// round-trip through CreateAPIKey, FindAPIKeyByHash and ListAPIKeys;
// UpdateAPIKey changes the fields it sets and no others, of that key alone;
// invalid limits are refused (EINVALID) and change nothing; an update of a
// name no key has is ENOTFOUND.
func testAPIKeyLimits(t *testing.T, s chainquery.Store) {
	ctx := context.Background()
	created := time.Date(2026, 3, 1, 12, 0, 0, 123_000_000, time.UTC)
	// Values no default would give, fractions where the limit is a float.
	limits := chainquery.KeyLimits{Rate: 2.5, Burst: 7, CostRate: 250.25, CostBurst: 1500.5, Concurrency: 3}
	_, hash := chainquery.NewAPIKey()
	limited := &chainquery.APIKey{Name: "limited", Hash: hash, Endpoints: []chainquery.Endpoint{chainquery.EndpointGetBlock},
		Limits: limits, CreatedAt: created}
	must(t, s.CreateAPIKey(ctx, limited))
	_, plainHash := chainquery.NewAPIKey()
	plain := &chainquery.APIKey{Name: "plain", Hash: plainHash, Endpoints: chainquery.Endpoints, CreatedAt: created}
	must(t, s.CreateAPIKey(ctx, plain))

	find := func(t *testing.T, hash [32]byte) *chainquery.APIKey {
		t.Helper()
		k, err := s.FindAPIKeyByHash(ctx, hash)
		must(t, err)
		return k
	}
	list := func(t *testing.T) []*chainquery.APIKey {
		t.Helper()
		keys, err := s.ListAPIKeys(ctx)
		must(t, err)
		return keys
	}
	// sameKey fails unless got is want as stored.
	sameKey := func(t *testing.T, what string, got, want *chainquery.APIKey) {
		t.Helper()
		if got.Name != want.Name || got.Hash != want.Hash || !slices.Equal(got.Endpoints, want.Endpoints) ||
			got.Limits != want.Limits || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Fatalf("%s:\ngot  %+v\nwant %+v", what, got, want)
		}
	}

	t.Run("RoundTrip", func(t *testing.T) {
		sameKey(t, "found", find(t, hash), limited)
		sameKey(t, "found without limits", find(t, plainHash), plain)
		keys := list(t)
		if len(keys) != 2 {
			t.Fatalf("listed %d keys, want 2", len(keys))
		}
		sameKey(t, "listed", keys[0], limited)
		sameKey(t, "listed without limits", keys[1], plain)
	})

	t.Run("ErrCreateInvalid", func(t *testing.T) {
		for _, l := range []chainquery.KeyLimits{{Rate: -1}, {Burst: -1}, {CostRate: math.NaN()}, {CostBurst: math.Inf(1)}, {Concurrency: -2}} {
			_, h := chainquery.NewAPIKey()
			wantCode(t, s.CreateAPIKey(ctx, &chainquery.APIKey{Name: "invalid", Hash: h, Endpoints: chainquery.Endpoints, Limits: l}), chainquery.EINVALID)
			_, err := s.FindAPIKeyByHash(ctx, h)
			wantCode(t, err, chainquery.ENOTFOUND)
		}
	})

	t.Run("Update", func(t *testing.T) {
		rate, concurrency := 10.0, 0
		endpoints := []chainquery.Endpoint{chainquery.EndpointFilterTraces, chainquery.EndpointGetBlock}
		got, err := s.UpdateAPIKey(ctx, "limited", chainquery.APIKeyUpdate{Endpoints: &endpoints, Rate: &rate, Concurrency: &concurrency})
		must(t, err)
		want := *limited
		want.Endpoints = endpoints
		want.Limits.Rate, want.Limits.Concurrency = 10, 0 // 0: back to the server's default
		sameKey(t, "returned", got, &want)
		sameKey(t, "found after the update", find(t, hash), &want)
		sameKey(t, "listed after the update", list(t)[0], &want)
		sameKey(t, "the other key", find(t, plainHash), plain)

		costBurst := 99.75
		got, err = s.UpdateAPIKey(ctx, "limited", chainquery.APIKeyUpdate{CostBurst: &costBurst})
		must(t, err)
		want.Limits.CostBurst = costBurst
		sameKey(t, "returned after a second update", got, &want)
		sameKey(t, "found after a second update", find(t, hash), &want)

		// Nothing set: the key as it is.
		got, err = s.UpdateAPIKey(ctx, "limited", chainquery.APIKeyUpdate{})
		must(t, err)
		sameKey(t, "returned by an empty update", got, &want)
		*limited = want
	})

	t.Run("ErrUpdateInvalid", func(t *testing.T) {
		burst, costRate := -1, math.NaN()
		for _, u := range []chainquery.APIKeyUpdate{{Burst: &burst}, {CostRate: &costRate}} {
			endpoints := []chainquery.Endpoint{chainquery.EndpointGetLatestBlock}
			u.Endpoints = &endpoints // refused with the limit
			_, err := s.UpdateAPIKey(ctx, "limited", u)
			wantCode(t, err, chainquery.EINVALID)
		}
		sameKey(t, "after refused updates", find(t, hash), limited)
	})

	t.Run("ErrUpdateNotFound", func(t *testing.T) {
		rate := 1.0
		_, err := s.UpdateAPIKey(ctx, "nobody", chainquery.APIKeyUpdate{Rate: &rate})
		wantCode(t, err, chainquery.ENOTFOUND)
		if keys := list(t); len(keys) != 2 {
			t.Fatalf("listed %d keys after updating a missing one, want 2", len(keys))
		}
	})
}

// OldAPIKey is an API key of a database made before keys had limits (its
// migrations before 0008_api_key_limits.sql), with Hash its hash. A store's
// test makes such a database holding this key, opens the store on it and
// calls CheckAPIKeyUpgrade.
var OldAPIKey = chainquery.APIKey{
	Name:      "old",
	Hash:      chainquery.HashAPIKey("cq_old"),
	Endpoints: []chainquery.Endpoint{chainquery.EndpointFilterTraces, chainquery.EndpointGetBlock},
	CreatedAt: time.Date(2025, 6, 1, 13, 0, 0, 0, time.UTC),
}

// OldAPIKeyEndpoints is OldAPIKey's endpoints column as it was stored.
const OldAPIKeyEndpoints = "filter_traces,get_block"

// CheckAPIKeyUpgrade checks a store opened on a database holding OldAPIKey
// from before the limits: the key is found and listed with zero limits
// (the server's defaults) and the rest as it was, and its limits can be set.
func CheckAPIKeyUpgrade(t *testing.T, s chainquery.APIKeyService) {
	t.Helper()
	ctx := context.Background()
	want := OldAPIKey
	got, err := s.FindAPIKeyByHash(ctx, OldAPIKey.Hash)
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("upgraded key %+v, %v; want %+v", got, err, want)
	}
	if keys, err := s.ListAPIKeys(ctx); err != nil || len(keys) != 1 || !reflect.DeepEqual(*keys[0], want) {
		t.Fatalf("listed %v, %v; want the upgraded key alone", keys, err)
	}
	rate := 5.0
	want.Limits.Rate = rate
	if got, err := s.UpdateAPIKey(ctx, OldAPIKey.Name, chainquery.APIKeyUpdate{Rate: &rate}); err != nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("updated key %+v, %v; want %+v", got, err, want)
	}
}
