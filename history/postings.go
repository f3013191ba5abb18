package history

import (
	"encoding/binary"
	"math"
)

// A posting list is the places of one address's traces (as sender, or as
// recipient) within a range of blocks, in chain order: what Filter Traces
// walks for from_address or to_address, and counts for `count`, instead of
// an index entry of ~75 bytes a trace. Entries are delta-coded varints:
// the block as a difference from the previous entry's, then the
// transaction index and position as differences within the same block
// (absolute at a new block), after the count of entries. A hot contract's
// consecutive traces take 3 bytes each. A list a store appends to by
// concatenating bytes is a sequence of such lists (runs; DecodePostings).
// Posting lists are not compressed: they are mostly small numbers already,
// and a page must not decompress more than the lists it walks.

// Posting is the place of one trace.
type Posting struct {
	Block uint64
	Tx    uint32 // transaction index in the block
	Pos   uint32 // position of the trace in the transaction
}

// Less orders postings in chain order.
func (p Posting) Less(q Posting) bool {
	if p.Block != q.Block {
		return p.Block < q.Block
	}
	if p.Tx != q.Tx {
		return p.Tx < q.Tx
	}
	return p.Pos < q.Pos
}

// AppendPostings appends the list of ps, which must be in strictly
// increasing chain order, to dst.
func AppendPostings(dst []byte, ps []Posting) ([]byte, error) {
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
	var prev Posting
	for i, p := range ps {
		if i > 0 && !prev.Less(p) {
			return nil, corrupt("posting %d %+v not after %+v", i, p, prev)
		}
		dst = binary.AppendUvarint(dst, p.Block-prev.Block)
		if i > 0 && p.Block == prev.Block {
			dst = binary.AppendUvarint(dst, uint64(p.Tx-prev.Tx))
			if p.Tx == prev.Tx {
				dst = binary.AppendUvarint(dst, uint64(p.Pos-prev.Pos))
			} else {
				dst = binary.AppendUvarint(dst, uint64(p.Pos))
			}
		} else {
			dst = binary.AppendUvarint(dst, uint64(p.Tx))
			dst = binary.AppendUvarint(dst, uint64(p.Pos))
		}
		prev = p
	}
	return dst, nil
}

// DecodePostings returns the entries of the list src. A list may be the
// concatenation of lists that AppendPostings made (runs), each of entries
// after those of the run before: a store appends the postings of blocks
// written later to a list by concatenating bytes, without decoding it.
func DecodePostings(src []byte) ([]Posting, error) {
	out := []Posting{}
	r := NewPostingReader(src)
	for p, ok := r.Next(); ok; p, ok = r.Next() {
		out = append(out, p)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// PostingReader reads the entries of a list (DecodePostings) one at a
// time, allocating nothing: a count or a page that needs a few entries of
// a hot contract's list of thousands reads only those, or counts them
// without keeping them.
type PostingReader struct {
	r     reader
	left  int // entries left in the current run
	runs  int // runs begun
	done  int // entries read
	prev  Posting
	inRun int // entries read of the current run
}

// NewPostingReader returns a reader of the list src.
func NewPostingReader(src []byte) *PostingReader {
	return &PostingReader{r: reader{b: src}}
}

// Next returns the next entry, or false at the end of the list or at an
// error (Err).
func (pr *PostingReader) Next() (Posting, bool) {
	r := &pr.r
	for pr.left == 0 {
		if r.err != nil || (pr.runs > 0 && len(r.b) == 0) {
			return Posting{}, false
		}
		n := r.int(len(r.b) / 3) // an entry takes at least 3 bytes
		if r.err != nil {
			return Posting{}, false
		}
		if n == 0 && !(pr.runs == 0 && len(r.b) == 0) {
			r.fail("an empty run in a list of more")
			return Posting{}, false
		}
		pr.runs++
		pr.left, pr.inRun = n, 0
		if n == 0 {
			return Posting{}, false
		}
	}
	var prev Posting
	if pr.inRun > 0 {
		prev = pr.prev
	}
	p := Posting{Block: prev.Block + r.uvarint()}
	if p.Block < prev.Block {
		r.fail("block overflow")
	}
	tx, pos := r.int(math.MaxUint32), r.int(math.MaxUint32)
	if pr.inRun > 0 && p.Block == prev.Block {
		if uint64(prev.Tx)+uint64(tx) > math.MaxUint32 {
			r.fail("transaction index overflow")
		}
		p.Tx = prev.Tx + uint32(tx)
		if tx == 0 {
			if uint64(prev.Pos)+uint64(pos) > math.MaxUint32 {
				r.fail("position overflow")
			}
			p.Pos = prev.Pos + uint32(pos)
		} else {
			p.Pos = uint32(pos)
		}
	} else {
		p.Tx, p.Pos = uint32(tx), uint32(pos)
	}
	if pr.done > 0 && !pr.prev.Less(p) && r.err == nil {
		r.fail("posting %d not after the one before", pr.done)
	}
	if r.err != nil {
		return Posting{}, false
	}
	pr.left--
	pr.inRun++
	pr.done++
	pr.prev = p
	return p, true
}

// Err returns the error that ended the reading, nil at the list's end.
func (pr *PostingReader) Err() error { return pr.r.err }
