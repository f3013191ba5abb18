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
// (absolute at a new block). A hot contract's consecutive traces take 3
// bytes each; the list's length is in its header, so a count reads one
// varint. Posting lists are not compressed: they are mostly small numbers
// already, and a count or a page must not decompress the whole list.

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

// CountPostings returns the number of entries of the list src from its
// header alone.
func CountPostings(src []byte) (int, error) {
	r := &reader{b: src}
	n := r.int(len(src) / 3) // an entry takes at least 3 bytes
	return n, r.err
}

// DecodePostings returns the entries of the list src.
func DecodePostings(src []byte) ([]Posting, error) {
	r := &reader{b: src}
	n := r.int(len(src) / 3)
	if r.err != nil {
		return nil, r.err
	}
	ps := make([]Posting, n)
	var prev Posting
	for i := range ps {
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
		if i > 0 && !prev.Less(p) && r.err == nil {
			r.fail("posting %d not after the one before", i)
		}
		if r.err != nil {
			return nil, r.err
		}
		ps[i], prev = p, p
	}
	if len(r.b) != 0 {
		return nil, corrupt("%d bytes after the last posting", len(r.b))
	}
	return ps, nil
}
