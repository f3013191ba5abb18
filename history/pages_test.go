package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// pageTestAddrs returns n distinct random addresses in ascending order. The
// first byte is kept off 0x00 and 0xff so that the all-zero and all-0xff
// addresses are outside every page; some addresses are a neighbour's with
// its last bytes changed, so that a search has to look past long common
// prefixes.
func pageTestAddrs(r *rand.Rand, n int) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	for len(out) < n {
		a := make([]byte, AddrBytes)
		if len(out) > 0 && r.IntN(3) == 0 {
			copy(a, out[r.IntN(len(out))])
			for i := AddrBytes - 1 - r.IntN(2); i < AddrBytes; i++ {
				a[i] = byte(r.Uint32())
			}
		} else {
			for i := range a {
				a[i] = byte(r.Uint32())
			}
			a[0] = 1 + byte(r.IntN(254))
		}
		if !seen[string(a)] {
			seen[string(a)] = true
			out = append(out, a)
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

// pageTestPostings returns n random postings in strictly increasing chain
// order, the first at or after block from.
func pageTestPostings(r *rand.Rand, n int, from uint64) []Posting {
	ps := make([]Posting, 0, n)
	var p Posting
	for i := range n {
		switch {
		case i == 0:
			p = Posting{Block: from + r.Uint64N(1000), Tx: r.Uint32N(50), Pos: r.Uint32N(50)}
		case r.IntN(3) == 0:
			p = Posting{Block: p.Block + 1 + r.Uint64N(100000), Tx: r.Uint32N(300), Pos: r.Uint32N(20)}
		case r.IntN(2) == 0:
			p.Tx, p.Pos = p.Tx+1+r.Uint32N(5), r.Uint32N(20)
		default:
			p.Pos += 1 + r.Uint32N(5)
		}
		ps = append(ps, p)
	}
	return ps
}

// pageTestList returns a real list of 1 to 300 postings from block from
// (more than a run, often), and the postings.
func pageTestList(t *testing.T, r *rand.Rand, from uint64) ([]byte, []Posting) {
	t.Helper()
	ps := pageTestPostings(r, 1+r.IntN(300), from)
	list, err := AppendPostings(nil, ps)
	if err != nil {
		t.Fatal(err)
	}
	return list, ps
}

// pageTestEntries returns a page of the addresses, each with a real list
// from block from, and the postings of each.
func pageTestEntries(t *testing.T, r *rand.Rand, addrs [][]byte, from uint64) ([]PageEntry, [][]Posting) {
	t.Helper()
	entries := make([]PageEntry, len(addrs))
	postings := make([][]Posting, len(addrs))
	for i, a := range addrs {
		list, ps := pageTestList(t, r, from)
		entries[i] = PageEntry{Addr: a, N: int64(len(ps)), List: list}
		postings[i] = ps
	}
	return entries, postings
}

// pageTestEncode returns the two columns of a page of entries.
func pageTestEncode(t *testing.T, entries []PageEntry) ([]byte, []byte) {
	t.Helper()
	keys, lists, err := AppendPage(nil, nil, entries)
	if err != nil {
		t.Fatal(err)
	}
	return keys, lists
}

// samePageEntries reports how got differs from want, "" when it does not.
func samePageEntries(got, want []PageEntry) string {
	if len(got) != len(want) {
		return "a page of " + strconv.Itoa(len(got)) + " entries, want " + strconv.Itoa(len(want))
	}
	for i := range got {
		switch {
		case !bytes.Equal(got[i].Addr, want[i].Addr):
			return "address of entry " + strconv.Itoa(i)
		case got[i].N != want[i].N:
			return "N of entry " + strconv.Itoa(i)
		case !bytes.Equal(got[i].List, want[i].List):
			return "list of entry " + strconv.Itoa(i)
		}
	}
	return ""
}

// pageTestNoPanic calls f, reporting a panic as an error: one corrupt
// input that panics must not hide what the others do.
func pageTestNoPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s panicked: %v", what, p)
		}
	}()
	f()
}

// addrStep returns a plus d (±1) as a 20-byte big-endian number: the
// address right after or right before a.
func addrStep(a []byte, d int) []byte {
	b := bytes.Clone(a)
	for i := len(b) - 1; i >= 0; i-- {
		if d > 0 {
			b[i]++
			if b[i] != 0 {
				break
			}
		} else {
			b[i]--
			if b[i] != 0xff {
				break
			}
		}
	}
	return b
}

// TestPageRoundTrip: a page decodes to the entries it was made of, what
// its columns were appended to is kept, and PageFind finds each address
// with its N and list (N alone without lists) and no other address.
func TestPageRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 2, 3, 200}
	for range 20 {
		sizes = append(sizes, r.IntN(201))
	}
	for _, size := range sizes {
		addrs := pageTestAddrs(r, size)
		entries, _ := pageTestEntries(t, r, addrs, 0)
		keys, lists := pageTestEncode(t, entries)

		// Appending keeps what the columns held.
		k2, l2, err := AppendPage([]byte("keys"), []byte("lists"), entries)
		if err != nil || string(k2[:4]) != "keys" || string(l2[:5]) != "lists" ||
			!bytes.Equal(k2[4:], keys) || !bytes.Equal(l2[5:], lists) {
			t.Fatalf("%d entries: appending to columns gave other bytes, or lost what they held (%v)", size, err)
		}

		got, err := DecodePage(keys, lists)
		if err != nil {
			t.Fatalf("%d entries: %v", size, err)
		}
		if d := samePageEntries(got, entries); d != "" {
			t.Fatalf("%d entries: decoded page differs: %s", size, d)
		}
		counts, err := PageCounts(keys)
		if err != nil || len(counts) != len(entries) {
			t.Fatalf("%d entries: PageCounts gave %d, %v", size, len(counts), err)
		}
		for i, c := range counts {
			if !bytes.Equal(c.Key, entries[i].Addr) || c.N != entries[i].N {
				t.Fatalf("%d entries: PageCounts' %d is %x %d, want %x %d", size, i, c.Key, c.N, entries[i].Addr, entries[i].N)
			}
		}
		for cut := range len(keys) {
			if _, err := PageCounts(keys[:cut]); err == nil {
				t.Fatalf("%d entries: PageCounts of keys cut at %d of %d", size, cut, len(keys))
			}
		}

		for i, e := range entries {
			f, ok, err := PageFind(keys, lists, e.Addr)
			if err != nil || !ok || !bytes.Equal(f.Addr, e.Addr) || f.N != e.N || !bytes.Equal(f.List, e.List) {
				t.Fatalf("%d entries: PageFind of entry %d: found %v, N %d, %d list bytes, %v; want N %d, %d list bytes",
					size, i, ok, f.N, len(f.List), err, e.N, len(e.List))
			}
			// A count reads the keys alone.
			f, ok, err = PageFind(keys, nil, e.Addr)
			if err != nil || !ok || f.N != e.N || f.List != nil {
				t.Fatalf("%d entries: PageFind of entry %d without lists: found %v, N %d, list %v, %v; want N %d and no list",
					size, i, ok, f.N, f.List, err, e.N)
			}
		}

		// Addresses outside the page: below and above all, right next to
		// each address on both sides, random ones, and an address's prefix.
		in := map[string]bool{}
		for _, a := range addrs {
			in[string(a)] = true
		}
		absent := [][]byte{make([]byte, AddrBytes), bytes.Repeat([]byte{0xff}, AddrBytes)}
		for _, a := range addrs {
			absent = append(absent, addrStep(a, 1), addrStep(a, -1))
		}
		absent = append(absent, pageTestAddrs(r, 50)...)
		for _, a := range absent {
			if in[string(a)] {
				continue
			}
			for _, l := range [][]byte{lists, nil} {
				if f, ok, err := PageFind(keys, l, a); ok || err != nil {
					t.Fatalf("%d entries: PageFind of %x, not in the page: found %v (N %d), %v", size, a, ok, f.N, err)
				}
			}
		}
		for _, a := range addrs {
			if _, ok, _ := PageFind(keys, lists, a[:AddrBytes-1]); ok {
				t.Fatalf("%d entries: PageFind found %x, a prefix of an address", size, a[:AddrBytes-1])
			}
		}
	}
}

// TestAppendPageRejects: a page whose addresses are not strictly
// ascending, or not AddrBytes long, is refused: PageFind's search relies
// on both.
func TestAppendPageRejects(t *testing.T) {
	a, b, c := make([]byte, AddrBytes), make([]byte, AddrBytes), make([]byte, AddrBytes)
	a[19], b[0], c[0] = 1, 1, 2 // a < b < c, differing in their first byte or last
	e := func(addr []byte) PageEntry { return PageEntry{Addr: addr, N: 1, List: []byte{1, 3, 0, 0, 0}} }
	for _, c := range []struct {
		name    string
		entries []PageEntry
	}{
		{"descending", []PageEntry{e(b), e(a)}},
		{"descending last", []PageEntry{e(a), e(c), e(b)}},
		{"duplicate", []PageEntry{e(a), e(a)}},
		{"duplicate last", []PageEntry{e(a), e(b), e(c), e(c)}},
		{"short address", []PageEntry{e(a[:AddrBytes-1])}},
		{"long address", []PageEntry{e(append(bytes.Clone(a), 0))}},
		{"no address", []PageEntry{e(nil)}},
		{"short address after good ones", []PageEntry{e(a), e(b), e(c[:AddrBytes-1])}},
		{"32-byte address", []PageEntry{e(a), e(make([]byte, 32))}},
	} {
		if keys, lists, err := AppendPage(nil, nil, c.entries); err == nil {
			t.Errorf("%s: AppendPage gave a page (%d+%d bytes), want an error", c.name, len(keys), len(lists))
		}
	}
	// The same entries in order are a page.
	if _, _, err := AppendPage(nil, nil, []PageEntry{e(a), e(b), e(c)}); err != nil {
		t.Fatal(err)
	}
}

// pageTestRaw returns the keys column of a page with the addresses and
// the numbers given, whatever they are: k is its count.
func pageTestRaw(k uint64, addrs [][]byte, nums ...uint64) []byte {
	keys := binary.AppendUvarint(nil, k)
	for _, a := range addrs {
		keys = append(keys, a...)
	}
	for _, n := range nums {
		keys = binary.AppendUvarint(keys, n)
	}
	return keys
}

// TestDecodePageCorrupt: a page whose columns do not agree with each
// other or with their own numbers is corrupt, and neither DecodePage nor
// PageFind panics on it.
func TestDecodePageCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	addrs := pageTestAddrs(r, 3)
	entries, _ := pageTestEntries(t, r, addrs, 0)
	keys, lists := pageTestEncode(t, entries)
	ls := []uint64{uint64(len(entries[0].List)), uint64(len(entries[1].List)), uint64(len(entries[2].List))}

	type columns struct {
		name        string
		keys, lists []byte
	}
	var cases []columns
	for cut := range len(keys) {
		cases = append(cases, columns{"keys cut to " + strconv.Itoa(cut) + " bytes", keys[:cut], lists})
	}
	cases = append(cases,
		// The count says more addresses than there are.
		columns{"count 4 of 3", pageTestRaw(4, addrs, 3, ls[0], 3, ls[1], 3, ls[2]), lists},
		columns{"count 4 of 3, enough bytes for a 4th address",
			pageTestRaw(4, addrs, 3, ls[0], 3, ls[1], 3, ls[2], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), lists},
		columns{"count 1 with 19 address bytes", pageTestRaw(1, [][]byte{addrs[0][:19]}), nil},
		columns{"count 1 with 19 address bytes and a number", pageTestRaw(1, [][]byte{addrs[0][:19]}, 0), nil},
		columns{"count 2 with 39 address bytes", append(pageTestRaw(2, addrs[:1]), addrs[1][:19]...), nil},
		columns{"count 2^62", pageTestRaw(1<<62, addrs, 3, ls[0], 3, ls[1], 3, ls[2]), lists},
		columns{"count 2^64-1", pageTestRaw(math.MaxUint64, addrs, 3, ls[0], 3, ls[1], 3, ls[2]), lists},
		columns{"count past 64 bits", append(bytes.Repeat([]byte{0xff}, 10), 0x01), lists},
		// The count says fewer: the rest is left over.
		columns{"count 2 of 3", pageTestRaw(2, addrs, 3, ls[0], 3, ls[1], 3, ls[2]), lists},
		// The numbers.
		columns{"no numbers", pageTestRaw(3, addrs), lists},
		columns{"numbers of 2 entries", pageTestRaw(3, addrs, 3, ls[0], 3, ls[1]), lists[:ls[0]+ls[1]]},
		columns{"a number left over", pageTestRaw(3, addrs, 3, ls[0], 3, ls[1], 3, ls[2], 0), lists},
		columns{"a number past 64 bits", append(pageTestRaw(3, addrs, 3, ls[0], 3, ls[1]), append(bytes.Repeat([]byte{0xff}, 10), 0x01, 0)...), lists},
		// The lists column against the lengths.
		columns{"lists short by a byte", keys, lists[:len(lists)-1]},
		columns{"no lists", keys, nil},
		columns{"lists long by a byte", keys, append(bytes.Clone(lists), 0)},
		columns{"first list long by a byte", pageTestRaw(3, addrs, 3, ls[0]+1, 3, ls[1], 3, ls[2]), lists},
		columns{"last list short by a byte", pageTestRaw(3, addrs, 3, ls[0], 3, ls[1], 3, ls[2]-1), lists},
		columns{"first list of 2^64-1 bytes", pageTestRaw(3, addrs, 3, math.MaxUint64, 3, ls[1], 3, ls[2]), lists},
		// A length that wraps the sum of those before it round to within
		// the column (2^64 - n is -n to a uint64).
		columns{"second list of 2^64-1 bytes", pageTestRaw(3, addrs, 3, ls[0], 3, math.MaxUint64, 3, ls[2]), lists},
		columns{"last list wrapping to the second's start", pageTestRaw(3, addrs, 3, ls[0], 3, ls[1], 3, -ls[1]), lists},
		columns{"first list of 2^63 bytes", pageTestRaw(3, addrs, 3, 1<<63, 3, 1<<63+ls[1], 3, ls[2]), lists},
	)
	for _, c := range cases {
		pageTestNoPanic(t, c.name+": DecodePage", func() {
			if got, err := DecodePage(c.keys, c.lists); err == nil {
				t.Errorf("%s: decoded to %d entries, want an error", c.name, len(got))
			} else if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: %v, not ErrCorrupt", c.name, err)
			}
		})
		for i, a := range addrs {
			pageTestNoPanic(t, c.name+": PageFind of address "+strconv.Itoa(i), func() { PageFind(c.keys, c.lists, a) })
			pageTestNoPanic(t, c.name+": PageFind without lists of address "+strconv.Itoa(i), func() { PageFind(c.keys, nil, a) })
		}
	}
}

// FuzzDecodePage: neither DecodePage nor PageFind panics on any columns,
// and where DecodePage takes a page, PageFind finds each of its
// addresses with the same N and list.
func FuzzDecodePage(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	f.Add([]byte{0}, []byte{})
	for _, size := range []int{1, 2, 5} {
		var entries []PageEntry
		for _, a := range pageTestAddrs(r, size) {
			ps := pageTestPostings(r, 1+r.IntN(4), 0) // small lists: the fuzzer's inputs stay small
			list, err := AppendPostings(nil, ps)
			if err != nil {
				f.Fatal(err)
			}
			entries = append(entries, PageEntry{Addr: a, N: int64(len(ps)), List: list})
		}
		keys, lists, err := AppendPage(nil, nil, entries)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(keys, lists)
	}
	f.Fuzz(func(t *testing.T, keys, lists []byte) {
		got, err := DecodePage(keys, lists)
		if err != nil {
			// The addresses where the page would hold them, to take
			// PageFind past its search.
			_, w := binary.Uvarint(keys)
			for i := max(w, 0); i+AddrBytes <= len(keys) && i < 8*AddrBytes; i += AddrBytes {
				PageFind(keys, lists, keys[i:i+AddrBytes])
				PageFind(keys, nil, keys[i:i+AddrBytes])
			}
			PageFind(keys, lists, make([]byte, AddrBytes))
			return
		}
		for i, e := range got {
			if len(e.Addr) != AddrBytes {
				t.Fatalf("entry %d: address of %d bytes", i, len(e.Addr))
			}
			found, ok, err := PageFind(keys, lists, e.Addr)
			if err != nil || !ok || found.N != e.N || !bytes.Equal(found.List, e.List) {
				t.Fatalf("entry %d (%x): PageFind found %v, N %d, list %x, %v; DecodePage: N %d, list %x",
					i, e.Addr, ok, found.N, found.List, err, e.N, e.List)
			}
			found, ok, err = PageFind(keys, nil, e.Addr)
			if err != nil || !ok || found.N != e.N || found.List != nil {
				t.Fatalf("entry %d (%x): PageFind without lists found %v, N %d, list %x, %v; DecodePage: N %d",
					i, e.Addr, ok, found.N, found.List, err, e.N)
			}
		}
	})
}

// TestMergePage: merging a page with one of later blocks gives the page
// of their union, an address in both with its N summed and its lists one
// after the other, which read as the old postings and then the new; and
// the merge leaves the columns the old page was decoded from as they were.
func TestMergePage(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const later = 1 << 40 // every added posting is after every old one
	for round := range 60 {
		pool := pageTestAddrs(r, 1+r.IntN(120))
		var oldAddrs, addAddrs [][]byte
		pOld, pAdd := r.Float64(), r.Float64()
		switch round {
		case 0: // both empty
			pOld, pAdd = 0, 0
		case 1: // nothing added
			pAdd = 0
		case 2: // nothing old
			pOld = 0
		case 3: // the same addresses
			pOld, pAdd = 1, 1
		}
		for _, a := range pool {
			if r.Float64() < pOld {
				oldAddrs = append(oldAddrs, a)
			}
			if r.Float64() < pAdd {
				addAddrs = append(addAddrs, a)
			}
		}
		oldEntries, oldPostings := pageTestEntries(t, r, oldAddrs, 0)
		addEntries, addPostings := pageTestEntries(t, r, addAddrs, later)

		// Old and add as a reader of the stored pages has them: decoded,
		// their lists sharing one buffer each.
		oldKeys, oldLists := pageTestEncode(t, oldEntries)
		addKeys, addLists := pageTestEncode(t, addEntries)
		oldKeys0, oldLists0 := bytes.Clone(oldKeys), bytes.Clone(oldLists)
		addKeys0, addLists0 := bytes.Clone(addKeys), bytes.Clone(addLists)
		old, err := DecodePage(oldKeys, oldLists)
		if err != nil {
			t.Fatal(err)
		}
		add, err := DecodePage(addKeys, addLists)
		if err != nil {
			t.Fatal(err)
		}

		// The union, built apart.
		type union struct {
			e        PageEntry
			postings []Posting
		}
		byAddr := map[string]*union{}
		for i, e := range oldEntries {
			byAddr[string(e.Addr)] = &union{PageEntry{Addr: e.Addr, N: e.N, List: bytes.Clone(e.List)}, oldPostings[i]}
		}
		for i, e := range addEntries {
			u := byAddr[string(e.Addr)]
			if u == nil {
				u = &union{PageEntry{Addr: e.Addr}, nil}
				byAddr[string(e.Addr)] = u
			}
			u.e.N += e.N
			u.e.List = append(u.e.List, e.List...)
			u.postings = append(u.postings, addPostings[i]...)
		}
		var want []PageEntry
		for _, a := range pool {
			if u := byAddr[string(a)]; u != nil {
				want = append(want, u.e)
			}
		}

		merged := MergePage(old, add)
		if d := samePageEntries(merged, want); d != "" {
			t.Fatalf("round %d (%d old, %d added): merged page differs from the union: %s", round, len(old), len(add), d)
		}
		mk, ml := pageTestEncode(t, merged)
		wk, wl := pageTestEncode(t, want)
		if !bytes.Equal(mk, wk) || !bytes.Equal(ml, wl) {
			t.Fatalf("round %d: merged page's columns differ from the union's", round)
		}
		for _, e := range merged {
			ps, err := DecodePostings(e.List)
			if err != nil {
				t.Fatalf("round %d: merged list of %x: %v", round, e.Addr, err)
			}
			if want := byAddr[string(e.Addr)].postings; !slices.Equal(ps, want) || int64(len(ps)) != e.N {
				t.Fatalf("round %d: merged list of %x reads %d postings (N %d), want the %d old then added ones",
					round, e.Addr, len(ps), e.N, len(want))
			}
			if n, err := CountPostings(e.List, 0, math.MaxUint64); err != nil || int64(n) != e.N {
				t.Fatalf("round %d: merged list of %x counts %d, %v; want %d", round, e.Addr, n, err, e.N)
			}
		}

		// The columns the pages were decoded from are as they were: an
		// old list's spare capacity is the next address's list.
		if !bytes.Equal(oldKeys, oldKeys0) || !bytes.Equal(oldLists, oldLists0) {
			t.Fatalf("round %d: merging wrote into the old page's columns", round)
		}
		if !bytes.Equal(addKeys, addKeys0) || !bytes.Equal(addLists, addLists0) {
			t.Fatalf("round %d: merging wrote into the added page's columns", round)
		}
		if d := samePageEntries(old, oldEntries); d != "" {
			t.Fatalf("round %d: merging changed the old entries: %s", round, d)
		}
	}
}

// TestPagePartSpread: PagePart is a page of the PageParts, and spreads
// random addresses and vanity ones (16 leading zero bytes) evenly enough
// that no page holds less than half or more than twice the mean.
func TestPagePartSpread(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const random, vanity = 100_000, 10_000
	var counts [PageParts]int
	a := make([]byte, AddrBytes)
	for i := range random + vanity {
		for j := range a {
			a[j] = byte(r.Uint32())
		}
		if i >= random {
			clear(a[:16])
		}
		p := PagePart(a)
		if p < 0 || p >= PageParts {
			t.Fatalf("PagePart(%x) = %d, not in [0, %d)", a, p, PageParts)
		}
		counts[p]++
	}
	mean := float64(random+vanity) / PageParts
	for p, n := range counts {
		if float64(n) < mean/2 || float64(n) > 2*mean {
			t.Errorf("page %d holds %d addresses, mean %.0f", p, n, mean)
		}
	}
}

// TestEpochPart: an address's part of an epoch's counts lies in its page
// part (sqlstore/trace_epochs.go reads a page part's pages for the epoch
// parts it holds), and the epoch parts are all used.
func TestEpochPart(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seen := make([]bool, EpochParts)
	for range 40 * EpochParts {
		a := make([]byte, AddrBytes)
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		e := EpochPart(a)
		if e%PageParts != PagePart(a) {
			t.Fatalf("%x: epoch part %d is not in page part %d", a, e, PagePart(a))
		}
		seen[e] = true
	}
	for e, ok := range seen {
		if !ok {
			t.Fatalf("epoch part %d never drawn in %d addresses", e, 40*EpochParts)
		}
	}
}
