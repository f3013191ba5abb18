package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
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
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE name = ?`, k.Name).Scan(&n); err != nil {
		return wrap(err)
	} else if n > 0 {
		return chainquery.Errorf(chainquery.ECONFLICT, "an API key named %q already exists", k.Name)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (name, hash, endpoints, created_at) VALUES (?, ?, ?, ?)`,
		k.Name, k.Hash[:], strings.Join(names, ","), k.CreatedAt.UnixMilli()); err != nil {
		return wrap(err)
	}
	return wrap(tx.Commit())
}

// FindAPIKeyByHash returns the key whose hash is hash. It returns ENOTFOUND if
// there is none.
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*chainquery.APIKey, error) {
	row := db.rdb.QueryRowContext(ctx, qAPIKeyByHash, hash[:])
	k, err := scanAPIKey(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, chainquery.Errorf(chainquery.ENOTFOUND, "API key not found")
	}
	return k, wrap(err)
}

// ListAPIKeys returns every key, ordered by name.
func (db *DB) ListAPIKeys(ctx context.Context) ([]*chainquery.APIKey, error) {
	rows, err := db.rdb.QueryContext(ctx, `SELECT name, hash, endpoints, created_at FROM api_keys ORDER BY name`)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	out := []*chainquery.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows.Scan)
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
	res, err := db.wdb.ExecContext(ctx, `DELETE FROM api_keys WHERE name = ?`, name)
	if err != nil {
		return wrap(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return wrap(err)
	} else if n == 0 {
		return chainquery.Errorf(chainquery.ENOTFOUND, "no API key is named %q", name)
	}
	return nil
}

func scanAPIKey(scan func(...any) error) (*chainquery.APIKey, error) {
	k := &chainquery.APIKey{}
	var endpoints string
	var created int64
	if err := scan(&k.Name, fixedCol(k.Hash[:]), &endpoints, &created); err != nil {
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
