package sqlite_test

import (
	"database/sql"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

// TestAPIKeyLimitsUpgrade opens a database made before keys had limits
// (every migration before 0008_api_key_limits.sql applied) that holds a key
// (storetest.CheckAPIKeyUpgrade).
func TestAPIKeyLimitsUpgrade(t *testing.T) {
	db := openOld(t, "migration/0008", func(old *sql.DB) error {
		k := storetest.OldAPIKey
		_, err := old.Exec(`INSERT INTO api_keys (name, hash, endpoints, created_at) VALUES (?, ?, ?, ?)`,
			k.Name, k.Hash[:], storetest.OldAPIKeyEndpoints, k.CreatedAt.UnixMilli())
		return err
	})
	storetest.CheckAPIKeyUpgrade(t, db)
}
