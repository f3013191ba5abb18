package ingest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// panickySolana panics when asked for blocks, on the fetcher goroutine the
// loop starts, as a decoder bug would.
type panickySolana struct{ *solana.Source }

func (p panickySolana) Blocks(ctx context.Context, slots []uint64) ([]*chainquery.SolanaBlock, error) {
	var m map[string]int
	m["x"]++ // assignment to entry in nil map
	return nil, nil
}

func TestSolanaPanicIsError(t *testing.T) {
	node := solanatest.NewServer(t)
	node.AddBlock(7, synBlock(1_700_000_000))
	from, to := uint64(7), uint64(7)
	e := &ingest.SolanaLoop{Store: openSQLite(t), Source: panickySolana{quickSource(node)}, From: &from, To: &to}
	err := e.Run(context.Background())
	var pe *ingest.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "nil map") || !strings.Contains(err.Error(), "panickySolana.Blocks") {
		t.Fatalf("err = %v, want a PanicError naming the cause and place", err)
	}
}
