package history_test

import (
	"slices"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/polychain"
)

// TestMatch holds Match to a plain scan of the traces of Polygon-shaped
// blocks, for the filters Filter Traces takes: senders, recipients, both,
// several of each, a hot address and cold ones, an address given twice, an
// address with no trace; and checks pages at offsets.
func TestMatch(t *testing.T) {
	c, err := polychain.New(polychain.Config{Seed: 2, Blocks: 3, TxPerBlock: 60})
	if err != nil {
		t.Fatal(err)
	}
	type place struct {
		p    history.Posting
		from chainquery.Address
		to   *chainquery.Address
	}
	var all []place
	fromLists := map[chainquery.Address][]history.Posting{}
	toLists := map[chainquery.Address][]history.Posting{}
	for _, d := range polygonBlocks(t, polychain.Config{Seed: 2, Blocks: 3, TxPerBlock: 60}, polychain.KindParity) {
		n := d.Block.Number
		pos := map[int]uint32{}
		for _, tr := range d.Traces {
			p := history.Posting{Block: n, Tx: uint32(tr.TransactionIndex), Pos: pos[tr.TransactionIndex]}
			pos[tr.TransactionIndex]++
			all = append(all, place{p, tr.From, tr.To})
			fromLists[tr.From] = append(fromLists[tr.From], p)
			if tr.To != nil {
				toLists[*tr.To] = append(toLists[*tr.To], p)
			}
		}
	}
	// Round-trip every list through its encoding, as a store would keep it.
	for _, m := range []map[chainquery.Address][]history.Posting{fromLists, toLists} {
		for a, ps := range m {
			b, err := history.AppendPostings(nil, ps)
			if err != nil {
				t.Fatal(err)
			}
			if m[a], err = history.DecodePostings(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	hot := polychainAddr(t, c.Callee(1))
	cold := polychainAddr(t, c.Callee(5))
	sender := polychainAddr(t, c.Sender(1))
	nobody := chainquery.Address{0xee}
	for _, tc := range []struct {
		name     string
		from, to []chainquery.Address
	}{
		{"hot recipient", nil, []chainquery.Address{hot}},
		{"hot sender", []chainquery.Address{hot}, nil},
		{"less busy recipient", nil, []chainquery.Address{cold}},
		{"sender and recipient", []chainquery.Address{sender}, []chainquery.Address{hot}},
		{"several of each", []chainquery.Address{sender, hot, cold}, []chainquery.Address{hot, cold, sender}},
		{"given twice", nil, []chainquery.Address{hot, hot}},
		{"nobody", []chainquery.Address{nobody}, nil},
		{"nobody and hot", []chainquery.Address{nobody}, []chainquery.Address{hot}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []history.Posting
			for _, pl := range all {
				if (len(tc.from) == 0 || slices.Contains(tc.from, pl.from)) &&
					(len(tc.to) == 0 || pl.to != nil && slices.Contains(tc.to, *pl.to)) {
					want = append(want, pl.p)
				}
			}
			var from, to [][]history.Posting
			for _, a := range tc.from {
				from = append(from, fromLists[a])
			}
			for _, a := range tc.to {
				to = append(to, toLists[a])
			}
			got := history.Match(from, to)
			if !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Fatalf("%d matches, want %d", len(got), len(want))
			}
			for _, off := range []int{0, 1, len(want) / 2, len(want) - 1, len(want), len(want) + 5} {
				if off < 0 {
					continue
				}
				page := history.Page(got, off, 50)
				var wantPage []history.Posting
				if off < len(want) {
					wantPage = want[off:min(len(want), off+50)]
				}
				if !slices.Equal(page, wantPage) && len(page)+len(wantPage) > 0 {
					t.Fatalf("page at %d: %d postings, want %d", off, len(page), len(wantPage))
				}
			}
			t.Logf("%d matches", len(want))
		})
	}
	if history.Match(nil, nil) != nil {
		t.Error("no address: want nil")
	}
}

func polychainAddr(t *testing.T, hex string) chainquery.Address {
	t.Helper()
	a, err := chainquery.ParseAddress("address", hex)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
