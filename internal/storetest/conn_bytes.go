package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// CheckConnBytes holds c, a Conn of s, to sqlstore.Conn's word on []byte
// destinations: each row's is a copy the caller keeps, which the rows
// after it leave as it was (the reads of posting lists keep them without
// copying them again).
func CheckConnBytes(t *testing.T, s chainquery.Store, c sqlstore.Conn) {
	ctx := context.Background()
	blocks := Blocks()[chainquery.Polygon]
	if len(blocks) < 2 {
		t.Fatalf("%d Polygon blocks, want two at least", len(blocks))
	}
	must(t, s.WriteBlocks(ctx, chainquery.Polygon, blocks))
	var hash []byte
	var kept [][]byte
	err := c.Query(ctx, `SELECT hash FROM blocks WHERE chain = $1 ORDER BY number`, []any{chainquery.Polygon.ID()}, []any{&hash}, func() error {
		kept = append(kept, hash)
		return nil
	})
	must(t, err)
	if len(kept) != len(blocks) {
		t.Fatalf("%d rows, want %d", len(kept), len(blocks))
	}
	for i, b := range blocks {
		if !bytes.Equal(kept[i], b.Block.Hash[:]) {
			t.Errorf("row %d kept %x, want %x: a later row wrote over it", i, kept[i], b.Block.Hash)
		}
	}
}
