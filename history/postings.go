package history

import (
	"encoding/binary"
	"math"
	"slices"
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
	r := &reader{b: src}
	var out []Posting
	for first := true; first || len(r.b) > 0; first = false {
		n := r.int(len(r.b) / 3) // an entry takes at least 3 bytes
		if r.err != nil {
			return nil, r.err
		}
		if n == 0 && !(first && len(r.b) == 0) {
			return nil, corrupt("an empty run in a list of more")
		}
		out = slices.Grow(out, n)
		var prev Posting
		for i := 0; i < n; i++ {
			p := Posting{Block: prev.Block + r.uvarint()}
			if p.Block < prev.Block {
				r.fail("block overflow")
			}
			tx, pos := r.int(math.MaxUint32), r.int(math.MaxUint32)
			if i > 0 && p.Block == prev.Block {
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
			if len(out) > 0 && !out[len(out)-1].Less(p) && r.err == nil {
				r.fail("posting %d not after the one before", len(out))
			}
			if r.err != nil {
				return nil, r.err
			}
			out = append(out, p)
			prev = p
		}
	}
	if out == nil {
		out = []Posting{}
	}
	return out, nil
}
