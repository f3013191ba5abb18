package evm

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chainquery/chainquery"
)

// randomTree returns the traces of a random call tree, depth first.
func randomTree(r *rand.Rand) []*chainquery.Trace {
	var out []*chainquery.Trace
	var walk func(addr []int, depth int)
	walk = func(addr []int, depth int) {
		t := &chainquery.Trace{TraceAddress: slices.Clone(addr)}
		out = append(out, t)
		if depth < 4 && len(out) < 40 {
			t.Subtraces = r.IntN(4)
		}
		for k := range t.Subtraces {
			walk(append(addr, k), depth+1)
		}
	}
	walk(nil, 0)
	return out
}

// TestPreorderTree: the one-pass check never accepts what treeChecker
// rejects, and accepts every tree listed depth first, whatever mutation
// a damaged or reordered answer makes.
func TestPreorderTree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var stack []preorderFrame
	tc := newTreeChecker(0)
	accepted, fellBack := 0, 0
	for i := range 20000 {
		traces := randomTree(r)
		if i > 0 {
			switch r.IntN(7) {
			case 0: // reordered: still a tree
				r.Shuffle(len(traces), func(a, b int) { traces[a], traces[b] = traces[b], traces[a] })
			case 1:
				traces[r.IntN(len(traces))].Subtraces += r.IntN(3) - 1
			case 2:
				if u := traces[r.IntN(len(traces))]; len(u.TraceAddress) > 0 {
					u.TraceAddress[r.IntN(len(u.TraceAddress))] += r.IntN(3) - 1
				}
			case 3:
				k := r.IntN(len(traces))
				traces = slices.Delete(traces, k, k+1)
			case 4:
				traces = append(traces, &chainquery.Trace{TraceAddress: slices.Clone(traces[r.IntN(len(traces))].TraceAddress)})
			case 5:
				if u := traces[r.IntN(len(traces))]; len(u.TraceAddress) > 0 {
					u.TraceAddress = u.TraceAddress[:len(u.TraceAddress)-1]
				}
			}
		}
		if len(traces) == 0 {
			continue
		}
		var ok bool
		ok, stack = preorderTree(traces, stack)
		err := tc.check(traces, traceKeys(traces))
		switch {
		case ok && err != nil:
			t.Fatalf("accepted what treeChecker rejects (%v): %v", err, addrs(traces))
		case !ok && err == nil && isPreorder(traces):
			t.Fatalf("rejected a tree listed depth first: %v", addrs(traces))
		case ok:
			accepted++
		case err == nil:
			fellBack++
		}
	}
	if accepted < 1000 || fellBack < 100 {
		t.Fatalf("%d accepted, %d trees left to treeChecker: the mutations test too little", accepted, fellBack)
	}
}

// isPreorder reports whether traces are listed depth first, children in
// order: each trace address after the first is the next in that order.
func isPreorder(traces []*chainquery.Trace) bool {
	return slices.IsSortedFunc(traces, func(a, b *chainquery.Trace) int { return slices.Compare(a.TraceAddress, b.TraceAddress) })
}

func addrs(traces []*chainquery.Trace) [][]int {
	var out [][]int
	for _, t := range traces {
		out = append(out, t.TraceAddress)
	}
	return out
}
