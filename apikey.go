package chainquery

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"math"
	"slices"
	"time"
)

// APIKey is an API key as stored: only the SHA-256 of the key is kept, so
// that a copy of the database does not give access.
type APIKey struct {
	Name      string
	Hash      [32]byte
	Endpoints []Endpoint
	Limits    KeyLimits
	CreatedAt time.Time
}

// KeyLimits are what one key may take of the service, beyond which endpoints
// it may call. A zero field takes the server's default for every key (serve's
// flags); a set field overrides it for this key alone.
//
// Requests are limited two ways, because counting requests alone lets one
// expensive request a second through as freely as one cheap one: Rate and
// Burst pace the requests, CostRate and CostBurst pace the work they cause.
// A request's cost is the time it held the store, in milliseconds (a cached
// answer costs nothing); a key whose cost budget is spent gets 429 until it
// refills. Concurrency bounds how many of the key's requests use the store
// at once, so that no key holds all of it.
type KeyLimits struct {
	Rate        float64 // requests per second
	Burst       int     // requests at once before Rate paces them
	CostRate    float64 // cost units (ms of store time) refilled per second
	CostBurst   float64 // cost units the budget holds when full
	Concurrency int     // requests in the store at once
}

// Validate returns EINVALID when a limit is negative or not a number.
func (l KeyLimits) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"rate", l.Rate}, {"burst", float64(l.Burst)}, {"cost rate", l.CostRate},
		{"cost burst", l.CostBurst}, {"concurrency", float64(l.Concurrency)},
	} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return Errorf(EINVALID, "the %s limit must be a finite number of at least 0 (0: the server's default)", f.name)
		}
	}
	return nil
}

// Allows reports whether the key is enabled for endpoint e; for
// EndpointAny, whether it is enabled for any endpoint.
func (k *APIKey) Allows(e Endpoint) bool {
	if e == EndpointAny {
		return len(k.Endpoints) > 0
	}
	return slices.Contains(k.Endpoints, e)
}

// EndpointAny is the Endpoint of a route that any key enabled for some
// endpoint may call (the indexing status, which tells what every endpoint
// can serve). It is no endpoint a key can be enabled for: ParseEndpoints
// refuses it and Endpoints does not list it.
const EndpointAny Endpoint = "any"

// APIKeyPrefix starts every key so that leaked keys are easy to find with a
// secret scanner.
const APIKeyPrefix = "cq_"

// NewAPIKey returns a fresh random key (256 bits of entropy) and its hash.
func NewAPIKey() (key string, hash [32]byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	key = APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return key, HashAPIKey(key)
}

// HashAPIKey returns the SHA-256 of key, the only form in which keys are stored.
func HashAPIKey(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// Matches compares the stored hash with the hash of a presented key in
// constant time.
func (k *APIKey) Matches(hash [32]byte) bool {
	return subtle.ConstantTimeCompare(k.Hash[:], hash[:]) == 1
}

// APIKeyUpdate is a change to a stored key: each field that is set (not
// nil) replaces the key's, each nil one leaves it as it is. A limit set to
// 0 gives it back to the server's default.
type APIKeyUpdate struct {
	Endpoints   *[]Endpoint
	Rate        *float64
	Burst       *int
	CostRate    *float64
	CostBurst   *float64
	Concurrency *int
}

// Apply returns l with the limits that u sets replaced.
func (u APIKeyUpdate) Apply(l KeyLimits) KeyLimits {
	setIf(&l.Rate, u.Rate)
	setIf(&l.Burst, u.Burst)
	setIf(&l.CostRate, u.CostRate)
	setIf(&l.CostBurst, u.CostBurst)
	setIf(&l.Concurrency, u.Concurrency)
	return l
}

// Validate returns EINVALID when a limit that u sets is negative or not a
// number (KeyLimits.Validate).
func (u APIKeyUpdate) Validate() error { return u.Apply(KeyLimits{}).Validate() }

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// APIKeyService stores API keys.
type APIKeyService interface {
	// CreateAPIKey stores k. It returns ECONFLICT if a key of that name
	// exists and EINVALID if a limit is invalid (KeyLimits.Validate).
	CreateAPIKey(ctx context.Context, k *APIKey) error

	// FindAPIKeyByHash returns the key whose hash is hash. It returns
	// ENOTFOUND if there is none (never stored, or revoked).
	FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*APIKey, error)

	// ListAPIKeys returns every key, ordered by name.
	ListAPIKeys(ctx context.Context) ([]*APIKey, error)

	// RevokeAPIKey deletes the key called name. It returns ENOTFOUND if there
	// is none.
	RevokeAPIKey(ctx context.Context, name string) error

	// UpdateAPIKey changes the fields of the key called name that update
	// sets, leaving the others, and returns the key as it now is. It
	// returns ENOTFOUND if there is none and EINVALID if a limit set is
	// invalid (KeyLimits.Validate), changing nothing.
	UpdateAPIKey(ctx context.Context, name string, update APIKeyUpdate) (*APIKey, error)
}
