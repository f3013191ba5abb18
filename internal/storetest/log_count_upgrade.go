package storetest

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery/sqlstore"
)

// OldLogCounts are the blocks of a database made before migration 0024
// (chain 137, the boundary of history at OldLogCountsBelow) and their
// numbers of logs, rows of the logs table for the rows above the boundary.
var OldLogCounts = map[int64]int{100: 0, 199: 0, 200: 3, 201: 0, 202: 1}

const OldLogCountsBelow = 200

// CheckLogCountUpgrade checks what migration 0024 made of OldLogCounts'
// database, through conn: the rows have their log_count from the logs
// table, 0 where they have none, the history blocks none, and
// log_counts_from is the boundary, for IndexLogHistory and the writes to
// count them (CheckLogIndexBackfill).
func CheckLogCountUpgrade(t *testing.T, conn sqlstore.Conn) {
	t.Helper()
	ctx := context.Background()
	var n int64
	var c *int64
	got := map[int64]*int64{}
	err := conn.Query(ctx, `SELECT number, log_count FROM blocks`, nil, []any{&n, &c}, func() error {
		got[n] = nil
		if c != nil {
			v := *c
			got[n] = &v
		}
		return nil
	})
	must(t, err)
	for n, k := range OldLogCounts {
		switch {
		case n < OldLogCountsBelow && got[n] != nil:
			t.Errorf("history block %d: log_count %d, want none before it is counted", n, *got[n])
		case n >= OldLogCountsBelow && (got[n] == nil || *got[n] != int64(k)):
			t.Errorf("block %d: log_count %v, want %d", n, got[n], k)
		}
	}
	var from int64
	if _, err := queryOne(ctx, conn, `SELECT log_counts_from FROM history`, &from); err != nil || from != OldLogCountsBelow {
		t.Errorf("log_counts_from %d (%v), want %d", from, err, OldLogCountsBelow)
	}
}
