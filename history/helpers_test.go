package history_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/polyrows"
)

// blockCache holds the decoded blocks of each generated chain the tests
// ask for: making a block's rows from the node's answers is most of these
// tests' time, and several tests read the same blocks.
var blockCache sync.Map // key: fmt of the config and kind -> []*chainquery.BlockData

// polygonBlocks returns the rows of every block of the Polygon-shaped chain
// of cfg, with traces from the answer of kind, made by the ingester's own
// decoders.
func polygonBlocks(tb testing.TB, cfg polychain.Config, kind polychain.Kind) []*chainquery.BlockData {
	tb.Helper()
	key := fmt.Sprintf("%+v/%d", cfg, kind)
	if v, ok := blockCache.Load(key); ok {
		return v.([]*chainquery.BlockData)
	}
	c, err := polychain.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var blocks []*chainquery.BlockData
	for n := c.First(); n <= c.Last(); n++ {
		d, err := polyrows.Decode(c, n, kind)
		if err != nil {
			tb.Fatal(err)
		}
		blocks = append(blocks, d)
	}
	blockCache.Store(key, blocks)
	return blocks
}

// segmentRoundTrip encodes rows (twice: the bytes must be the same, and
// what dst held kept), decodes them as block's, and compares each row back
// with same, which says which field differs ("" when none). It returns the
// segment.
func segmentRoundTrip[T any](t *testing.T, block uint64, rows []*T,
	encode func(dst []byte, rows []*T) ([]byte, error),
	decode func(src []byte, block uint64) ([]*T, error),
	same func(got, want *T) string,
) []byte {
	t.Helper()
	seg, err := encode(nil, rows)
	if err != nil {
		t.Fatal(err)
	}
	again, err := encode([]byte("prefix"), rows)
	if err != nil || !bytes.Equal(again[6:], seg) || string(again[:6]) != "prefix" {
		t.Fatal("encoding the same rows twice gave other bytes, or lost what dst held")
	}
	got, err := decode(seg, block)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows back, want %d", len(got), len(rows))
	}
	for i := range got {
		if d := same(got[i], rows[i]); d != "" {
			t.Fatalf("row %d: %s differs:\ngot  %+v\nwant %+v", i, d, got[i], rows[i])
		}
	}
	return seg
}
