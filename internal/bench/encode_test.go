package bench_test

import (
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/bench"
	"github.com/chainquery/chainquery/internal/polychain"
)

// TestEncode runs the history encoding measure on a few blocks: one result
// a span, every kind of bytes counted, longer spans fewer lists. It checks
// no size: docs/benchmarks.md has the measured figures.
func TestEncode(t *testing.T) {
	c, err := polychain.New(polychain.Config{Seed: 1, Blocks: 4, TxPerBlock: 20})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := bench.Encode(c, []uint64{1, 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, r := range rs {
		if r.Blocks != 4 || r.Transactions == 0 || r.Traces == 0 || r.Logs == 0 || r.Postings == 0 || r.TraceRows == 0 {
			t.Errorf("span %d: %+v", r.Bucket, r)
		}
	}
	if rs[0].PostingEntries != rs[1].PostingEntries || rs[1].Lists >= rs[0].Lists {
		t.Errorf("a longer span holds the same entries in fewer lists: %+v, %+v", rs[0], rs[1])
	}
	if table := bench.EncodeTable(rs); strings.Count(table, "\n| 4 |") != 2 {
		t.Errorf("table:\n%s", table)
	}
}
