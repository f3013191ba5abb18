package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestMigrate: a database whose 700 blocks are all rows, as an earlier
// release wrote them, is converted by migrate: the blocks more than 256
// below the head become history, the answers stay the same, and a second
// run has nothing left to do.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	db.RowBlocks = -1 // as an earlier release: rows only
	var blocks []*chainquery.BlockData
	for n := uint64(0); n < 700; n++ {
		d := storetest.Blocks()[chainquery.Polygon][0]
		d.Block.Number = n
		d.Block.Hash[8], d.Block.Hash[9] = byte(n), byte(n>>8)
		for _, tx := range d.Transactions {
			tx.BlockNumber = n
			tx.Hash[8], tx.Hash[9] = byte(n), byte(n>>8)
		}
		blocks = append(blocks, d)
	}
	if err := db.WriteBlocks(ctx, chainquery.Polygon, blocks); err != nil {
		t.Fatal(err)
	}
	read := func(s chainquery.Store) any {
		lo, hi := uint64(250), uint64(549)
		traces, count, err := s.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi,
			ToAddresses: []chainquery.Address{storetest.Router}, Page: chainquery.Page{Offset: 30, Limit: 50}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.FindBlock(ctx, chainquery.Polygon, 123, true)
		if err != nil {
			t.Fatal(err)
		}
		return []any{traces, count, b}
	}
	before := read(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	out := mustExecute(t, nil, "migrate", "--db", "sqlite:"+path)
	contains(t, "migrate", out, "polygon: converting blocks 0 to 399 into history", "polygon: history below block 400, rows above")
	again := mustExecute(t, nil, "migrate", "--db", "sqlite:"+path)
	if strings.Contains(again, "converting") {
		t.Errorf("a second migrate converted again:\n%s", again)
	}

	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, segments int
	pool, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.QueryRow(`SELECT count(*) FROM traces WHERE block_number < 400`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(`SELECT count(DISTINCT number) FROM history_segments`).Scan(&segments); err != nil {
		t.Fatal(err)
	}
	if rows != 0 || segments != 400 {
		t.Errorf("after migrate: %d trace rows below 400, %d blocks of segments; want 0 and 400", rows, segments)
	}
	if after := read(db); !reflect.DeepEqual(after, before) {
		t.Errorf("answers changed by migrate")
	}
}
