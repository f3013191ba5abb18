package chainquery

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"slices"
	"time"
)

// APIKey is an API key as stored: only the SHA-256 of the key is kept, so
// that a copy of the database does not give access.
type APIKey struct {
	Name      string
	Hash      [32]byte
	Endpoints []Endpoint
	CreatedAt time.Time
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

// APIKeyService stores API keys.
type APIKeyService interface {
	// CreateAPIKey stores k. It returns ECONFLICT if a key of that name exists.
	CreateAPIKey(ctx context.Context, k *APIKey) error

	// FindAPIKeyByHash returns the key whose hash is hash. It returns
	// ENOTFOUND if there is none (never stored, or revoked).
	FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*APIKey, error)

	// ListAPIKeys returns every key, ordered by name.
	ListAPIKeys(ctx context.Context) ([]*APIKey, error)

	// RevokeAPIKey deletes the key called name. It returns ENOTFOUND if there
	// is none.
	RevokeAPIKey(ctx context.Context, name string) error
}
