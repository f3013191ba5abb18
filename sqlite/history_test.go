package sqlite_test

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestHistoryLayout: after a freeze the fixture's blocks have no rows left
// in transactions, logs and traces, only segments, posting lists (pages)
// and hash prefixes, and trace_counts only the counts of all traces; the History conformance tests then read them from there, and
// a rewind of the whole fixture leaves neither rows nor history.
func TestHistoryLayout(t *testing.T) {
	db := MustOpenDB(t)
	storetest.Load(t, db)
	storetest.Freeze(t, db)
	count := func(table string) int {
		var n int
		if err := sqlite.ReadPool(db).QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, table := range []string{"transactions", "logs", "traces", "trace_counts WHERE dir != 2"} {
		if n := count(table); n != 0 {
			t.Errorf("%s holds %d rows after the freeze, want 0", table, n)
		}
	}
	for _, table := range []string{"history_segments", "tx_hash_runs", "tx_hash_pages", "blocks", "trace_pages"} {
		if n := count(table); n == 0 {
			t.Errorf("%s is empty after the freeze", table)
		}
	}
	ctx := context.Background()
	if err := db.ReplaceBlocks(ctx, chainquery.Polygon, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.ReplaceBlocks(ctx, chainquery.Ethereum, 0, nil); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"transactions", "logs", "traces", "history_segments", "tx_hash_runs", "tx_hash_pages", "blocks", "trace_pages"} {
		if n := count(table); n != 0 {
			t.Errorf("%s holds %d rows after a rewind of everything, want 0", table, n)
		}
	}
	var n int
	if err := sqlite.ReadPool(db).QueryRow(`SELECT count(*) FROM trace_counts WHERE n != 0 OR list IS NOT NULL`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d trace_counts rows have a count or a list after a rewind of everything (%v)", n, err)
	}
}

// TestHistoryDirect: told of a node head far enough above them, a store
// writes the fixture's Polygon blocks straight into history: no rows, the
// boundary right above the last block, and the reads (the History
// conformance tests) answer from there.
func TestHistoryDirect(t *testing.T) {
	db := MustOpenDB(t)
	db.SetNodeHead(chainquery.Polygon, storetest.PolygonBlock+1000)
	storetest.Load(t, db)
	var rows, segments int
	var below int64
	pool := sqlite.ReadPool(db)
	if err := pool.QueryRow(`SELECT count(*) FROM traces WHERE chain = 137`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(`SELECT count(*) FROM history_segments WHERE chain = 137`).Scan(&segments); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(`SELECT below FROM history WHERE chain = 137`).Scan(&below); err != nil {
		t.Fatal(err)
	}
	head, err := db.HeadBlock(context.Background(), chainquery.Polygon)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 0 || segments == 0 || below != int64(head)+1 {
		t.Fatalf("after a direct write: %d trace rows, %d segments, boundary %d (head %d); want 0, some, head+1", rows, segments, below, head)
	}
}

// TestHistoryDirectGap: a block stored as rows inside the heights of a
// later batch that goes straight into history stays above the boundary,
// and Filter Traces over the whole range finds its traces.
func TestHistoryDirectGap(t *testing.T) {
	ctx := context.Background()
	block := func(n uint64) *chainquery.BlockData {
		d := storetest.Blocks()[chainquery.Polygon][0]
		d.Block.Number = n
		d.Block.Hash[8] = byte(n)
		for _, tx := range d.Transactions {
			tx.BlockNumber = n
			tx.Hash[8] = byte(n)
		}
		return d
	}
	rows, db := MustOpenDB(t), MustOpenDB(t)
	for _, s := range []*sqlite.DB{rows, db} {
		if err := s.WriteBlocks(ctx, chainquery.Polygon, []*chainquery.BlockData{block(105)}); err != nil {
			t.Fatal(err)
		}
	}
	db.SetNodeHead(chainquery.Polygon, 1000)
	var batch []*chainquery.BlockData
	for n := uint64(100); n <= 110; n++ {
		if n != 105 {
			batch = append(batch, block(n))
		}
	}
	for _, s := range []*sqlite.DB{rows, db} {
		if err := s.WriteBlocks(ctx, chainquery.Polygon, batch); err != nil {
			t.Fatal(err)
		}
	}
	var below int64
	if err := sqlite.ReadPool(db).QueryRow(`SELECT below FROM history WHERE chain = 137`).Scan(&below); err != nil {
		t.Fatal(err)
	}
	if below != 105 {
		t.Errorf("boundary %d, want 105: the run of heights below the row at 105", below)
	}
	lo, hi := uint64(100), uint64(110)
	f := chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi,
		ToAddresses: []chainquery.Address{storetest.Router}, Page: chainquery.Page{Limit: 50}}
	want, wantCount, err := rows.FindTraces(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	got, gotCount, err := db.FindTraces(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if gotCount != wantCount || len(got) != len(want) || wantCount != 11 {
		t.Fatalf("count %d, %d traces; rows say %d, %d (want 11)", gotCount, len(got), wantCount, len(want))
	}
}
