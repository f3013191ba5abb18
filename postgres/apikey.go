package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
)

// CreateAPIKey stores k. It returns ECONFLICT if a key of that name exists.
func (db *DB) CreateAPIKey(ctx context.Context, k *chainquery.APIKey) error {
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now().UTC().Truncate(time.Millisecond)
	}
	names := make([]string, len(k.Endpoints))
	for i, e := range k.Endpoints {
		names[i] = string(e)
	}
	// ON CONFLICT on the name alone: two commands creating one name at once
	// get one success and one ECONFLICT, never a constraint error.
	tag, err := db.wpool.Exec(ctx, `INSERT INTO api_keys (name, hash, endpoints, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO NOTHING`, k.Name, k.Hash[:], strings.Join(names, ","), k.CreatedAt.UnixMilli())
	if err != nil {
		return wrap(err)
	} else if tag.RowsAffected() == 0 {
		return chainquery.Errorf(chainquery.ECONFLICT, "an API key named %q already exists", k.Name)
	}
	return nil
}

// FindAPIKeyByHash returns the key whose hash is hash. It returns ENOTFOUND if
// there is none.
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*chainquery.APIKey, error) {
	k, err := scanAPIKey(db.rpool.QueryRow(ctx, qAPIKeyByHash, hash[:]))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, chainquery.Errorf(chainquery.ENOTFOUND, "API key not found")
	}
	return k, wrap(err)
}

// ListAPIKeys returns every key, ordered by name.
func (db *DB) ListAPIKeys(ctx context.Context) ([]*chainquery.APIKey, error) {
	rows, err := db.rpool.Query(ctx, qAPIKeys)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	out := []*chainquery.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, wrap(err)
		}
		out = append(out, k)
	}
	return out, wrap(rows.Err())
}

// RevokeAPIKey deletes the key called name. It returns ENOTFOUND if there is
// none.
func (db *DB) RevokeAPIKey(ctx context.Context, name string) error {
	tag, err := db.wpool.Exec(ctx, `DELETE FROM api_keys WHERE name = $1`, name)
	if err != nil {
		return wrap(err)
	} else if tag.RowsAffected() == 0 {
		return chainquery.Errorf(chainquery.ENOTFOUND, "no API key is named %q", name)
	}
	return nil
}

func scanAPIKey(row pgx.Row) (*chainquery.APIKey, error) {
	k := &chainquery.APIKey{}
	var endpoints string
	var created int64
	if err := row.Scan(&k.Name, fixedCol(k.Hash[:]), &endpoints, &created); err != nil {
		return nil, err
	}
	k.CreatedAt = time.UnixMilli(created).UTC()
	if endpoints != "" {
		for _, e := range strings.Split(endpoints, ",") {
			k.Endpoints = append(k.Endpoints, chainquery.Endpoint(e))
		}
	}
	return k, nil
}
