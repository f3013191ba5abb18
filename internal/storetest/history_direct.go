package storetest

import (
	"context"
	"testing"

	"github.com/chainquery/chainquery"
)

// NodeHeadSetter is a store that writes blocks far enough below a node's
// head straight into history (sqlstore.Store.SetNodeHead).
type NodeHeadSetter interface {
	SetNodeHead(chain chainquery.Chain, head uint64)
}

// LoadHistoryDirect writes the Polygon-shaped blocks of the history tests
// straight into history, in writes of 20 blocks, as an ingester far behind
// the node's head does.
func LoadHistoryDirect(t *testing.T, s chainquery.Store) {
	t.Helper()
	blocks := polygonHistoryBlocks(t)
	s.(NodeHeadSetter).SetNodeHead(chainquery.Polygon, blocks[len(blocks)-1].Block.Number+1000)
	w := s.(chainquery.BlockWriter)
	for i := 0; i < len(blocks); i += 20 {
		if err := w.WriteBlocks(context.Background(), chainquery.Polygon, blocks[i:min(len(blocks), i+20)]); err != nil {
			t.Fatal(err)
		}
	}
}

// HistoryDirectRange returns the first and last heights LoadHistoryDirect
// writes.
func HistoryDirectRange() (first, last uint64) {
	return historyConfig.Start, historyConfig.Start + uint64(historyConfig.Blocks) - 1
}
