package history

import "container/heap"

// Match returns, in chain order, the traces Filter Traces selects by
// address from posting lists: those in any of the from lists when some are
// given (a trace's sender is one of the from_address values: its lists are
// ORed), and in any of the to lists when some are given (likewise), both
// when both are (the two sides are ANDed). A side with no lists does not
// filter; with neither, Match returns nil: a filter without an address is
// answered from the segments, not from posting lists.
//
// The result holds every match, so that count is its length and a page at
// any offset is a slice of it; its cost grows with the lists, not with the
// blocks they span.
func Match(from, to [][]Posting) []Posting {
	switch {
	case len(from) == 0 && len(to) == 0:
		return nil
	case len(to) == 0:
		return union(from)
	case len(from) == 0:
		return union(to)
	}
	return intersect(union(from), union(to))
}

// Page returns the limit postings of ps after the first offset ones.
func Page(ps []Posting, offset, limit int) []Posting {
	if offset >= len(ps) || limit <= 0 {
		return nil
	}
	return ps[offset:min(len(ps), offset+limit)]
}

// union merges lists, each in chain order, into one in chain order without
// repeats (the same address given twice gives its traces once).
func union(lists [][]Posting) []Posting {
	if len(lists) == 1 {
		return lists[0]
	}
	n := 0
	h := &cursors{}
	for _, l := range lists {
		n += len(l)
		if len(l) > 0 {
			*h = append(*h, l)
		}
	}
	heap.Init(h)
	out := make([]Posting, 0, n)
	for h.Len() > 0 {
		l := (*h)[0]
		p := l[0]
		if len(out) == 0 || out[len(out)-1].Less(p) {
			out = append(out, p)
		}
		if len(l) == 1 {
			heap.Pop(h)
		} else {
			(*h)[0] = l[1:]
			heap.Fix(h, 0)
		}
	}
	return out
}

// intersect returns the postings in both a and b, each in chain order.
func intersect(a, b []Posting) []Posting {
	var out []Posting
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i].Less(b[j]):
			i++
		default:
			j++
		}
	}
	return out
}

// cursors is a heap of the lists being merged, by their first posting.
type cursors [][]Posting

func (h cursors) Len() int           { return len(h) }
func (h cursors) Less(i, j int) bool { return h[i][0].Less(h[j][0]) }
func (h cursors) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)        { *h = append(*h, x.([]Posting)) }
func (h *cursors) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
