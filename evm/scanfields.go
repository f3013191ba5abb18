package evm

import (
	"encoding/json"
	"math/big"

	"github.com/chainquery/chainquery"
)

// addrField and quantField are an address field and a quantity field that
// the scanner decodes as it reads them, when they are in the form every
// node writes: "0x" and 40 hex digits, "0x" and 1 to 16 hex digits. Read
// as json.RawMessage, each such field was read three times: once to find
// the string's end (a search for the quote, another for a backslash), once
// to trim and unquote it, once to parse it; a third of the trace decoder's
// time went to a Polygon block's 9,000 of them (docs/benchmarks.md, issue
// 30, session 24). Checking each digit as it is decoded also finds the
// closing quote, so one pass does all three. Any other form (null, a
// decimal number, spaces, escapes, more digits) is kept as text for the
// decoders' usual rules, as encoding/json's path keeps every field: the
// values are the same either way, and so are the notes.
type addrField struct {
	raw json.RawMessage
	v   chainquery.Address
	ok  bool
}

// UnmarshalJSON keeps the text, as json.RawMessage does, for the decoders.
func (f *addrField) UnmarshalJSON(b []byte) error {
	*f = addrField{raw: append(f.raw[:0], b...)}
	return nil
}

// quantField is addrField for a quantity.
type quantField struct {
	raw json.RawMessage
	v   uint64
	ok  bool
}

// UnmarshalJSON keeps the text, as json.RawMessage does, for the decoders.
func (f *quantField) UnmarshalJSON(b []byte) error {
	*f = quantField{raw: append(f.raw[:0], b...)}
	return nil
}

// fixed reads a value and, when it is the plain form of len(dst) bytes
// (the quotes, 0x and 2*len(dst) hex digits), decodes it into dst: ok.
// Either way it returns the value's text.
func (s *scanner) fixed(dst []byte) (raw []byte, ok bool) {
	if s.bad {
		return nil, false
	}
	s.ws()
	d, i, n := s.data, s.i, 4+2*len(dst)
	// unhex checks every digit: no quote, escape or control character
	// hides among them.
	if i+n <= len(d) && d[i] == '"' && d[i+1] == '0' && d[i+2] == 'x' && d[i+n-1] == '"' && unhexBytes(dst, d[i+3:i+n-1]) {
		s.i = i + n
		return d[i : i+n], true
	}
	return s.value(), false
}

// addr reads field bit into an addrField.
func (s *scanner) addr(dst *addrField, seen *uint32, bit uint) {
	s.once(seen, bit)
	dst.raw, dst.ok = s.fixed(dst.v[:])
	if !dst.ok {
		dst.v = chainquery.Address{}
	}
}

// quant reads field bit into a quantField.
func (s *scanner) quant(dst *quantField, seen *uint32, bit uint) {
	s.once(seen, bit)
	if s.bad {
		return
	}
	s.ws()
	d, i := s.data, s.i
	if i+4 <= len(d) && d[i] == '"' && d[i+1] == '0' && d[i+2] == 'x' {
		var v uint64
		j, end := i+3, min(i+3+16, len(d))
		for ; j < end; j++ {
			h := hexVal[d[j]]
			if h == 0xff {
				break
			}
			v = v<<4 | uint64(h)
		}
		if j > i+3 && j < len(d) && d[j] == '"' {
			*dst = quantField{raw: d[i : j+1], v: v, ok: true}
			s.i = j + 1
			return
		}
	}
	*dst = quantField{raw: s.value()}
}

// addressOf is fieldReader.address for an addrField.
func (r fieldReader) addressOf(field string, f addrField) *chainquery.Address {
	if f.ok {
		return r.slab.address(f.v)
	}
	return r.address(field, f.raw)
}

// addressOrZeroOf is fieldReader.addressOrZero for an addrField.
func (r fieldReader) addressOrZeroOf(field string, f addrField) chainquery.Address {
	if f.ok {
		return f.v
	}
	return r.addressOrZero(field, f.raw)
}

// uintOf is fieldReader.uint for a quantField.
func (r fieldReader) uintOf(field string, f quantField) uint64 {
	if f.ok {
		return f.v
	}
	return r.uint(field, f.raw)
}

// bigOf is fieldReader.big for a quantField.
func (r fieldReader) bigOf(field string, f quantField) *big.Int {
	if f.ok {
		return r.slab.uintBig(f.v)
	}
	return r.big(field, f.raw)
}

// hashField is addrField for a 32-byte hash: a log's topic.
type hashField struct {
	raw json.RawMessage
	v   chainquery.Hash
	ok  bool
}

// UnmarshalJSON keeps the text, as json.RawMessage does, for the decoders.
func (f *hashField) UnmarshalJSON(b []byte) error {
	*f = hashField{raw: append(f.raw[:0], b...)}
	return nil
}

// hash reads a hashField.
func (s *scanner) hash(dst *hashField) {
	dst.raw, dst.ok = s.fixed(dst.v[:])
	if !dst.ok {
		dst.v = chainquery.Hash{}
	}
}

// hashList reads a []hashField: null is nil, [] is empty.
func (s *scanner) hashList() []hashField {
	if s.null() {
		return nil
	}
	if !s.open('[') {
		return nil
	}
	start := len(s.sc.topics)
	for first := true; s.more(']', &first); {
		s.sc.topics = append(s.sc.topics, hashField{})
		s.hash(&s.sc.topics[len(s.sc.topics)-1])
	}
	if len(s.sc.topics) == start {
		return []hashField{}
	}
	return s.sc.topics[start:len(s.sc.topics):len(s.sc.topics)]
}

// requireHashOf is requireHash for a hashField.
func requireHashOf(field string, f hashField) (chainquery.Hash, error) {
	if f.ok {
		return f.v, nil
	}
	return requireHash(field, f.raw)
}

// present reports whether the field holds a value other than null.
func (f addrField) present() bool { return f.ok || present(f.raw) }

// value is fieldAddressValue for an addrField.
func (f addrField) value() (chainquery.Address, bool, error) {
	if f.ok {
		return f.v, true, nil
	}
	return fieldAddressValue(f.raw)
}
