package polychain_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/jsonrpc"
)

// TestFetcherKeepsNoAnswer fetches the same blocks with a client that
// overwrites every answer buffer it releases (jsonrpc.Client.PoisonAnswers),
// twice, so that the second fetch reads into the first's buffers, and
// requires the first fetch's blocks to equal those of a client that never
// reuses a buffer: a decoded value that pointed into an answer would show
// the poison or the second fetch's bytes.
func TestFetcherKeepsNoAnswer(t *testing.T) {
	c := tinyChain(t)
	url := serve(t, &polychain.Node{Chain: c})
	ctx := context.Background()
	for _, traces := range []string{evm.TracesParity, evm.TracesCallTracer} {
		fetch := func(poison bool) []*chainquery.BlockData {
			rpc := jsonrpc.NewClient(url)
			rpc.PoisonAnswers = poison
			plan, err := evm.Probe(ctx, rpc, traces)
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := evm.NewFetcher(rpc, chainquery.Polygon, plan, nil).Blocks(ctx, c.First(), c.Last())
			if err != nil {
				t.Fatal(err)
			}
			return blocks
		}
		first := fetch(true)
		fetch(true)
		if want := fetch(false); !reflect.DeepEqual(first, want) {
			t.Fatalf("%s: blocks decoded from released answers changed after the release", traces)
		}
	}
}
