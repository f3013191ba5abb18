package evm

import (
	"math/big"
	"math/bits"

	"github.com/chainquery/chainquery"
)

// slab hands out the values decoded from one answer (a block's
// transactions, its receipts' logs, its traces) from a few allocations
// sized up front, rather than one allocation per value: on a Polygon-sized
// block, one per address, byte string, amount and trace address was most
// of the 18,000 objects a block cost the ingester, and garbage collection
// a fifth of its CPU.
//
// Every slice it hands out is capped at its own length (s[i:j:j]), so that
// an append by whoever holds it reallocates rather than writes over the
// next value. A pointer into a slab keeps the whole slab alive: the values
// of a block are stored and dropped together, so that costs nothing.
//
// A nil *slab, or one whose room for a kind of value is used up, allocates
// each value on its own: sizing is an estimate, never a limit. A slab that
// grows takes a new chunk of room instead, as large as the last: for an
// answer decoded as it is read, whose sizes are not known up front.
type slab struct {
	bytes []byte
	addrs []chainquery.Address
	bigs  []big.Int
	words []big.Word // the magnitudes of the bigs that fit in one word
	ints  []int
	grow  bool
}

// room returns xs, or, when xs has no room for n more values and grow is
// set, an empty chunk with room for at least n: what was handed out of xs
// stays where it is.
func room[T any](grow bool, xs []T, n int) []T {
	if !grow || cap(xs)-len(xs) >= n {
		return xs
	}
	return make([]T, 0, max(n, cap(xs), 16))
}

// newSlab returns a slab with room for the given numbers of bytes,
// addresses, amounts and ints.
func newSlab(bytes, addrs, bigs, ints int) *slab {
	return &slab{
		bytes: make([]byte, 0, bytes),
		addrs: make([]chainquery.Address, 0, addrs),
		bigs:  make([]big.Int, 0, bigs),
		words: make([]big.Word, 0, bigs),
		ints:  make([]int, 0, ints),
	}
}

// hexBytes is room for the bytes of a hex data field, judged from its
// JSON text: at least what parseBytes makes of it.
func hexBytes(raw []byte) int { return len(raw) / 2 }

// byteRoom returns the unused room for n bytes, or nil if there is none;
// commitBytes then hands out its first n bytes. Callers fill the room
// first, so that a value that turns out malformed takes nothing.
func (s *slab) byteRoom(n int) []byte {
	if s == nil {
		return nil
	}
	if s.bytes = room(s.grow, s.bytes, n); cap(s.bytes)-len(s.bytes) < n {
		return nil
	}
	return s.bytes[len(s.bytes) : len(s.bytes)+n]
}

func (s *slab) commitBytes(n int) []byte {
	i := len(s.bytes)
	s.bytes = s.bytes[:i+n]
	return s.bytes[i : i+n : i+n]
}

// copyBytes returns a copy of b, as parseBytesIn returns the bytes it
// decodes: an empty, non-nil slice for none.
func (s *slab) copyBytes(b []byte) []byte {
	n := len(b)
	if n == 0 {
		return []byte{}
	}
	if room := s.byteRoom(n); room != nil {
		copy(room, b)
		return s.commitBytes(n)
	}
	return append([]byte(nil), b...)
}

// address returns a pointer to a copy of a.
func (s *slab) address(a chainquery.Address) *chainquery.Address {
	if s != nil {
		s.addrs = room(s.grow, s.addrs, 1)
	}
	if s == nil || len(s.addrs) == cap(s.addrs) {
		p := new(chainquery.Address) // not &a: a would escape, and be allocated, on every call
		*p = a
		return p
	}
	s.addrs = append(s.addrs, a) // within capacity: earlier pointers stay valid
	return &s.addrs[len(s.addrs)-1]
}

// newBig returns a zero big.Int, as new(big.Int) does.
func (s *slab) newBig() *big.Int {
	if s != nil {
		s.bigs = room(s.grow, s.bigs, 1)
	}
	if s == nil || len(s.bigs) == cap(s.bigs) {
		return new(big.Int)
	}
	s.bigs = append(s.bigs, big.Int{})
	return &s.bigs[len(s.bigs)-1]
}

// uintBig returns v as a big.Int, equal to new(big.Int).SetUint64(v). Its
// magnitude is a one-word slice of the slab, capped, so that arithmetic
// on it that needs more words allocates them rather than take a
// neighbour's.
func (s *slab) uintBig(v uint64) *big.Int {
	z := s.newBig()
	if v == 0 {
		return z // zero has no words, as SetUint64(0) leaves it
	}
	if s != nil {
		s.words = room(s.grow, s.words, 1)
	}
	if s == nil || bits.UintSize < 64 || len(s.words) == cap(s.words) {
		return z.SetUint64(v)
	}
	i := len(s.words)
	s.words = append(s.words, big.Word(v))
	return z.SetBits(s.words[i : i+1 : i+1])
}

// takeInts returns n zero ints.
func (s *slab) takeInts(n int) []int {
	if s != nil {
		s.ints = room(s.grow, s.ints, n)
	}
	if s == nil || cap(s.ints)-len(s.ints) < n {
		return make([]int, n)
	}
	i := len(s.ints)
	s.ints = s.ints[:i+n]
	clear(s.ints[i:]) // never written yet; cleared all the same, as make would give
	return s.ints[i : i+n : i+n]
}

// cloneInts returns a copy of src, as slices.Clone does: nil for nil.
func (s *slab) cloneInts(src []int) []int {
	switch {
	case src == nil:
		return nil
	case len(src) == 0:
		return []int{}
	case s != nil:
		s.ints = room(s.grow, s.ints, len(src))
	}
	if s == nil || cap(s.ints)-len(s.ints) < len(src) {
		return append([]int(nil), src...)
	}
	i := len(s.ints)
	s.ints = append(s.ints, src...)
	return s.ints[i:len(s.ints):len(s.ints)]
}
