package sqlstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
)

// CreateAPIKey stores k. It returns ECONFLICT if a key of that name exists
// and EINVALID if a limit is invalid.
func (s *Store) CreateAPIKey(ctx context.Context, k *chainquery.APIKey) error {
	if err := k.Limits.Validate(); err != nil {
		return err
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now().UTC().Truncate(time.Millisecond)
	}
	l := k.Limits
	n, err := s.Write.Exec(ctx, qCreateAPIKey, k.Name, k.Hash[:], joinEndpoints(k.Endpoints), k.CreatedAt.UnixMilli(),
		l.Rate, l.Burst, l.CostRate, l.CostBurst, l.Concurrency)
	if err != nil {
		return err
	} else if n == 0 {
		return chainquery.Errorf(chainquery.ECONFLICT, "an API key named %q already exists", k.Name)
	}
	return nil
}

// FindAPIKeyByHash returns the key whose hash is hash. It returns ENOTFOUND
// if there is none.
func (s *Store) FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*chainquery.APIKey, error) {
	var k *chainquery.APIKey
	if err := s.queryAPIKeys(ctx, s.Read, qAPIKeyByHash, []any{hash[:]}, func(row *chainquery.APIKey) { k = row }); err != nil {
		return nil, err
	} else if k == nil {
		return nil, chainquery.Errorf(chainquery.ENOTFOUND, "API key not found")
	}
	return k, nil
}

// ListAPIKeys returns every key, ordered by name.
func (s *Store) ListAPIKeys(ctx context.Context) ([]*chainquery.APIKey, error) {
	out := []*chainquery.APIKey{}
	if err := s.queryAPIKeys(ctx, s.Read, qAPIKeys, nil, func(k *chainquery.APIKey) { out = append(out, k) }); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *chainquery.APIKey) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// queryAPIKeys runs a statement of API key rows on c and calls keep with
// each.
func (s *Store) queryAPIKeys(ctx context.Context, c Conn, query string, args []any, keep func(*chainquery.APIKey)) error {
	var k chainquery.APIKey
	var endpoints string
	var created int64
	var sc scan
	l := &k.Limits
	sc.to(&k.Name).fixed(k.Hash[:]).to(&endpoints, &created, &l.Rate, &l.Burst, &l.CostRate, &l.CostBurst, &l.Concurrency)
	return c.Query(ctx, query, args, sc.dest, sc.each(func() error {
		row := k
		row.CreatedAt, row.Endpoints = time.UnixMilli(created).UTC(), nil
		if endpoints != "" {
			for _, e := range strings.Split(endpoints, ",") {
				row.Endpoints = append(row.Endpoints, chainquery.Endpoint(e))
			}
		}
		keep(&row)
		return nil
	}))
}

// RevokeAPIKey deletes the key called name. It returns ENOTFOUND if there
// is none.
func (s *Store) RevokeAPIKey(ctx context.Context, name string) error {
	if n, err := s.Write.Exec(ctx, qRevokeAPIKey, name); err != nil {
		return err
	} else if n == 0 {
		return chainquery.Errorf(chainquery.ENOTFOUND, "no API key is named %q", name)
	}
	return nil
}

// UpdateAPIKey changes the fields of the key called name that update sets
// and returns the key as it now is, in one statement on the write side (a
// replica may not have the change yet). It returns ENOTFOUND if there is
// none and EINVALID if a limit set is invalid.
func (s *Store) UpdateAPIKey(ctx context.Context, name string, update chainquery.APIKeyUpdate) (*chainquery.APIKey, error) {
	if err := update.Validate(); err != nil {
		return nil, err
	}
	var endpoints any
	if update.Endpoints != nil {
		endpoints = joinEndpoints(*update.Endpoints)
	}
	args := []any{name, endpoints, nullable(update.Rate), nullable(update.Burst),
		nullable(update.CostRate), nullable(update.CostBurst), nullable(update.Concurrency)}
	var k *chainquery.APIKey
	if err := s.queryAPIKeys(ctx, s.Write, qUpdateAPIKey, args, func(row *chainquery.APIKey) { k = row }); err != nil {
		return nil, err
	} else if k == nil {
		return nil, chainquery.Errorf(chainquery.ENOTFOUND, "no API key is named %q", name)
	}
	return k, nil
}

// joinEndpoints returns endpoints as stored: their names, comma-separated.
func joinEndpoints(endpoints []chainquery.Endpoint) string {
	names := make([]string, len(endpoints))
	for i, e := range endpoints {
		names[i] = string(e)
	}
	return strings.Join(names, ",")
}

// nullable returns *p as an argument, or nil (NULL) for a nil p.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// The statements of API keys. qCreateAPIKey: name, hash, endpoints,
// created_at, rate, burst, cost_rate, cost_burst, concurrency; it inserts
// nothing when a key of that name exists (ON CONFLICT on the name alone:
// two commands creating one name at once get one success and one
// ECONFLICT, never a constraint error). qAPIKeyByHash: hash, and
// qAPIKeys: nothing → qAPIKeyColumns (qAPIKeys in no order: ListAPIKeys
// sorts the names bytewise, whatever the database's collation).
// qRevokeAPIKey: name. qUpdateAPIKey: name, endpoints, rate, burst,
// cost_rate, cost_burst, concurrency, each NULL to keep the key's → the
// updated row, as qAPIKeyByHash's (no row when no key has that name).
const (
	qAPIKeyColumns = `name, hash, endpoints, created_at, rate, burst, cost_rate, cost_burst, concurrency`
	qCreateAPIKey  = `INSERT INTO api_keys (` + qAPIKeyColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (name) DO NOTHING`
	qAPIKeyByHash = `SELECT ` + qAPIKeyColumns + ` FROM api_keys WHERE hash = $1`
	qAPIKeys      = `SELECT ` + qAPIKeyColumns + ` FROM api_keys`
	qRevokeAPIKey = `DELETE FROM api_keys WHERE name = $1`
	qUpdateAPIKey = `UPDATE api_keys SET endpoints = coalesce($2, endpoints),
			rate = coalesce($3, rate), burst = coalesce($4, burst),
			cost_rate = coalesce($5, cost_rate), cost_burst = coalesce($6, cost_burst),
			concurrency = coalesce($7, concurrency)
		WHERE name = $1 RETURNING ` + qAPIKeyColumns
)
