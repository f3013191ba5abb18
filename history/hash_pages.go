package history

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"sort"
)

// HashEntry is an entry of the transaction hash index: a hash's prefix
// (its first 8 bytes as a signed integer) and the block holding it.
type HashEntry struct {
	Prefix int64
	Block  uint64
}

// Compare orders entries by prefix, then block: the order of a hash page.
func (e HashEntry) Compare(o HashEntry) int {
	return cmp.Or(cmp.Compare(e.Prefix, o.Prefix), cmp.Compare(e.Block, o.Block))
}

// hashEntrySize is the bytes of an entry in a page: the prefix and the
// block's distance from the run's lowest block, fixed widths so that a
// lookup searches the page without decoding it.
const hashEntrySize = 8 + 4

// HashPageEntries is how many entries a page holds, unless more share its
// last prefix: a prefix's entries are never cut between pages, so that a
// lookup reads one page a run, the last that starts at or below the
// prefix. 64 entries are 768 bytes, which a SQLite page of 4 KiB keeps in
// its B-tree cells (five a page, no overflow page) and PostgreSQL keeps
// in its row, nine a page, without TOAST; the page of a prefix shared by
// hundreds of hashes (no chain has one) goes to overflow pages or TOAST.
const HashPageEntries = 64

// MaxHashRunSpan is the most heights a run may cover: a block is stored as
// its distance from the run's lowest one in 32 bits.
const MaxHashRunSpan = 1 << 32

// AppendHashPage appends to dst the page of es, which are sorted (Compare)
// and lie within MaxHashRunSpan of base, the run's lowest block.
func AppendHashPage(dst []byte, base uint64, es []HashEntry) []byte {
	for _, e := range es {
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.Prefix))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.Block-base))
	}
	return dst
}

// HashPageLen returns the number of entries of page, or an error when it
// is not a page.
func HashPageLen(page []byte) (int, error) {
	if len(page)%hashEntrySize != 0 {
		return 0, fmt.Errorf("a hash page of %d bytes", len(page))
	}
	return len(page) / hashEntrySize, nil
}

// hashEntryAt returns the i-th entry of page, in a run whose lowest block
// is base.
func hashEntryAt(page []byte, i int, base uint64) HashEntry {
	b := page[i*hashEntrySize:]
	return HashEntry{Prefix: int64(binary.BigEndian.Uint64(b)), Block: base + uint64(binary.BigEndian.Uint32(b[8:]))}
}

// AppendHashEntries appends the entries of page to dst.
func AppendHashEntries(dst []HashEntry, page []byte, base uint64) ([]HashEntry, error) {
	n, err := HashPageLen(page)
	if err != nil {
		return dst, err
	}
	for i := range n {
		dst = append(dst, hashEntryAt(page, i, base))
	}
	return dst, nil
}

// AppendHashBlocks appends to dst the blocks of the entries of page whose
// prefix is prefix, by binary search.
func AppendHashBlocks(dst []uint64, page []byte, base uint64, prefix int64) ([]uint64, error) {
	n, err := HashPageLen(page)
	if err != nil {
		return dst, err
	}
	i := sort.Search(n, func(i int) bool { return hashEntryAt(page, i, base).Prefix >= prefix })
	for ; i < n; i++ {
		e := hashEntryAt(page, i, base)
		if e.Prefix != prefix {
			break
		}
		dst = append(dst, e.Block)
	}
	return dst, nil
}

// HashPageEnd returns how many of es, sorted, the page that starts with
// es[0] takes: HashPageEntries, or more to keep the last prefix's entries
// together, or all when fewer remain.
func HashPageEnd(es []HashEntry) int {
	if len(es) <= HashPageEntries {
		return len(es)
	}
	n := HashPageEntries
	for n < len(es) && es[n].Prefix == es[n-1].Prefix {
		n++
	}
	return n
}

// MergeHashEntries returns the entries of es, which is sorted (Compare)
// between each of its parts' ends (ascending, the last len(es)), sorted
// as a whole, merging two parts at a time through scratch (one of the two
// is returned; scratch's room may be grown and is the caller's to keep).
// A merge of runs reads each run's entries in order: sorting them again
// was two fifths of the merges' time (docs/benchmarks.md, issue 30,
// session 21).
func MergeHashEntries(es []HashEntry, ends []int, scratch *[]HashEntry) []HashEntry {
	for len(ends) > 1 {
		out := (*scratch)[:0]
		var next []int
		start := 0
		for i := 0; i < len(ends); i += 2 {
			if i+1 == len(ends) {
				out = append(out, es[start:ends[i]]...)
				next = append(next, len(out))
				break
			}
			a, b := es[start:ends[i]], es[ends[i]:ends[i+1]]
			for len(a) > 0 && len(b) > 0 {
				if b[0].Compare(a[0]) < 0 {
					out, b = append(out, b[0]), b[1:]
				} else {
					out, a = append(out, a[0]), a[1:]
				}
			}
			out = append(append(out, a...), b...)
			next = append(next, len(out))
			start = ends[i+1]
		}
		*scratch, es, ends = es[:0], out, next
	}
	return es
}
