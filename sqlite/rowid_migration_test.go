package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chainquery/chainquery/internal/sqltest"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestRowidMigration: migration 0005, which rebuilds traces and transactions
// as rowid tables, keeps every row and every column of them. It runs again
// on rows the store wrote, so a column moved to the wrong place changes the
// rows.
func TestRowidMigration(t *testing.T) {
	body, err := os.ReadFile("migration/0005_rowid_traces_transactions.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chainquery.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Load(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	before := dumpTables(t, conn)
	if len(before["traces"]) == 0 || len(before["transactions"]) == 0 {
		t.Fatalf("fixture wrote %d traces, %d transactions", len(before["traces"]), len(before["transactions"]))
	}
	if _, err := conn.ExecContext(ctx, string(body)); err != nil {
		t.Fatal(err)
	}
	after := dumpTables(t, conn)
	for _, table := range []string{"traces", "transactions"} {
		if !slices.Equal(before[table], after[table]) {
			t.Errorf("%s differ after the migration:\nbefore %q\nafter  %q", table, before[table], after[table])
		}
	}
}

// dumpTables renders every row of traces and transactions, columns by name
// in the original schema's order.
func dumpTables(t *testing.T, conn *sql.DB) map[string][]string {
	t.Helper()
	queries := map[string]string{
		"traces": `SELECT chain, block_number, tx_index, trace_pos, trace_address, type, call_type, from_addr, to_addr,
			gas, gas_used, value, subtraces, input, output, error FROM traces ORDER BY chain, block_number, tx_index, trace_pos`,
		"transactions": `SELECT chain, block_number, tx_index, hash, from_addr, to_addr, value, gas_limit, gas_price,
			effective_gas_price, max_fee_per_gas, max_priority_fee_per_gas, gas_used, cumulative_gas_used, nonce,
			input, type, contract_address, status, log_count FROM transactions ORDER BY chain, block_number, tx_index`,
	}
	out := map[string][]string{}
	for table, q := range queries {
		for _, vals := range sqltest.Rows(t, conn, q) {
			out[table] = append(out[table], fmt.Sprintf("%T%v", vals, vals))
		}
	}
	return out
}
