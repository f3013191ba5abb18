// Package polyrows makes the rows of a block of the Polygon-shaped chain
// (internal/polychain) with the ingester's own decoders, from the answers
// the chain's node gives: what tests and benchmarks store without running a
// node. It is a package of its own because package evm's tests use
// polychain, which therefore cannot import evm.
package polyrows

import (
	"encoding/json"
	"fmt"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/polychain"
)

// Decode returns the rows of block n of c, with its traces from the answer
// of the given kind (polychain.KindParity or polychain.KindCallTracer),
// checked complete as the ingester checks them.
func Decode(c *polychain.Chain, n uint64, traces polychain.Kind) (*chainquery.BlockData, error) {
	b := c.Block(n)
	d, err := evm.DecodeBlock(chainquery.Polygon, polychain.Render(b, polychain.KindBlockFull))
	if err != nil {
		return nil, fmt.Errorf("block %d: %w", n, err)
	}
	var receipts []json.RawMessage
	if err := json.Unmarshal(polychain.Render(b, polychain.KindReceipts), &receipts); err != nil {
		return nil, fmt.Errorf("block %d receipts: %w", n, err)
	}
	if err := evm.ApplyReceipts(d, receipts); err != nil {
		return nil, fmt.Errorf("block %d receipts: %w", n, err)
	}
	switch traces {
	case polychain.KindParity:
		err = evm.DecodeParityTraces(d, polychain.Render(b, traces))
	case polychain.KindCallTracer:
		err = evm.DecodeCallTraces(d, polychain.Render(b, traces))
	default:
		err = fmt.Errorf("kind %v is not a trace answer", traces)
	}
	if err != nil {
		return nil, fmt.Errorf("block %d traces: %w", n, err)
	}
	if err := evm.CheckComplete(d, true); err != nil {
		return nil, fmt.Errorf("block %d: %w", n, err)
	}
	return d, nil
}
