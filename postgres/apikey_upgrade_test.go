package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestAPIKeyLimitsUpgrade opens a database made before keys had limits
// (every migration before 0008_api_key_limits.sql applied) that holds a key
// (storetest.CheckAPIKeyUpgrade).
func TestAPIKeyLimitsUpgrade(t *testing.T) {
	db := openOld(t, "migration/0008", func(ctx context.Context, conn *pgx.Conn) error {
		k := storetest.OldAPIKey
		_, err := conn.Exec(ctx, `INSERT INTO api_keys (name, hash, endpoints, created_at) VALUES ($1, $2, $3, $4)`,
			k.Name, k.Hash[:], storetest.OldAPIKeyEndpoints, k.CreatedAt.UnixMilli())
		return err
	})
	storetest.CheckAPIKeyUpgrade(t, db)
}
