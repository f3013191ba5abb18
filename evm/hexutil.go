package evm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery"
)

var errHexSyntax = errors.New("not a hex value")

// jsonText returns the text of a JSON scalar: the content of a string, or the
// literal of a number. present is false for an absent field and for null,
// which nodes use interchangeably.
func jsonText(raw json.RawMessage) (s string, present bool, err error) {
	b, present, err := jsonBytes(raw)
	return string(b), present, err
}

// jsonBytes is jsonText without a copy: the text is a slice of raw unless
// the string holds escapes.
func jsonBytes(raw json.RawMessage) (b []byte, present bool, err error) {
	raw = trimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	// Hex strings never carry escapes: skip the decoder, which is most of
	// the cost of reading a large block.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 {
		return trimSpace(raw[1 : n-1]), true, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		return []byte(strings.TrimSpace(s)), true, nil
	}
	if raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
		return raw, true, nil
	}
	return nil, false, fmt.Errorf("want a string or a number, got %.20s", raw)
}

// text is what the parsers read: a string, or the bytes of an answer.
type text interface{ ~string | ~[]byte }

// hasHexPrefix reports whether s starts with 0x or 0X.
func hasHexPrefix[T text](s T) bool {
	return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

// hexVal is the value of each hex digit, 0xff for other bytes.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()

// hexPairs is the byte of each pair of hex digits, indexed by the first
// digit plus the second times 256; badPair is set for any other pair. It
// takes 128 KB, of which decoding touches the 22 × 22 pairs of digits.
var hexPairs = func() (t [1 << 16]uint16) {
	for i := range t {
		hi, lo := hexVal[byte(i)], hexVal[byte(i>>8)]
		if hi == 0xff || lo == 0xff {
			t[i] = badPair
		} else {
			t[i] = uint16(hi<<4 | lo)
		}
	}
	return t
}()

const badPair = 0x100

// hexUint64 parses at most 16 hex digits; ok is false for any other byte.
func hexUint64[T text](digits T) (v uint64, ok bool) {
	for i := 0; i < len(digits); i++ {
		d := hexVal[digits[i]]
		if d == 0xff {
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// decUint64 parses at most 19 decimal digits; ok is false for any other
// byte and for no digits.
func decUint64[T text](digits T) (v uint64, ok bool) {
	if len(digits) == 0 || len(digits) > 19 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// trimZeros drops leading '0' digits.
func trimZeros[T text](digits T) T {
	i := 0
	for i < len(digits) && digits[i] == '0' {
		i++
	}
	return digits[i:]
}

// parseUint64 parses a quantity: 0x-prefixed hex (any number of leading
// zeros; a bare "0x" is zero) or, without the prefix, decimal digits as
// Parity traces and old JS tracers write them. Values the quick paths do
// not take go through strconv, whose errors these are.
func parseUint64[T text](s T) (uint64, error) {
	if hasHexPrefix(s) {
		digits := s[2:]
		if len(digits) == 0 {
			return 0, nil
		}
		if len(trimZeros(digits)) > 16 {
			return 0, fmt.Errorf("quantity %.24s overflows 64 bits", s)
		}
		if v, ok := hexUint64(trimZeros(digits)); ok {
			return v, nil
		}
		return strconv.ParseUint(string(digits), 16, 64)
	}
	if v, ok := decUint64(s); ok {
		return v, nil
	}
	return strconv.ParseUint(string(s), 10, 64)
}

// parseBig parses a quantity of any size with the rules of parseUint64.
// Negative values are refused: no EVM amount is negative.
func parseBig[T text](s T) (*big.Int, error) { return parseBigIn(nil, s) }

// parseBigIn is parseBig with the value taken from sl.
func parseBigIn[T text](sl *slab, s T) (*big.Int, error) {
	digits, base := s, 10
	if hasHexPrefix(s) {
		digits, base = s[2:], 16
		if len(digits) == 0 {
			return sl.newBig(), nil
		}
		if sig := trimZeros(digits); len(sig) <= 16 {
			if v, ok := hexUint64(sig); ok {
				return sl.uintBig(v), nil
			}
		}
	} else if v, ok := decUint64(s); ok {
		return sl.uintBig(v), nil
	}
	if len(digits) == 0 || digits[0] == '-' || digits[0] == '+' {
		return nil, fmt.Errorf("bad quantity %.24q", s)
	}
	v, ok := sl.newBig().SetString(string(digits), base)
	if !ok {
		return nil, fmt.Errorf("bad quantity %.24q", s)
	}
	return v, nil
}

// parseBytes parses 0x-prefixed hex data. An odd number of digits gets a
// leading zero nibble rather than an error, because a record that is
// slightly off must still be stored (one Avalanche fixture has such an
// input); the prefix is optional for the same reason. "" and "0x" are an
// empty, non-nil slice.
func parseBytes[T text](s T) ([]byte, error) { return parseBytesIn(nil, s) }

// parseBytesIn is parseBytes with the bytes taken from sl.
func parseBytesIn[T text](sl *slab, s T) ([]byte, error) {
	if hasHexPrefix(s) {
		s = s[2:]
	}
	n := (len(s) + 1) / 2
	if n == 0 {
		return []byte{}, nil
	}
	if room := sl.byteRoom(n); room != nil {
		if !unhex(room, s) {
			return nil, errHexSyntax
		}
		return sl.commitBytes(n), nil
	}
	out := make([]byte, n)
	if !unhex(out, s) {
		return nil, errHexSyntax
	}
	return out, nil
}

// unhex decodes the hex digits s (an odd count has a leading zero nibble)
// into dst, which is exactly long enough, and reports whether they were all
// hex digits.
func unhex[T text](dst []byte, s T) bool {
	if len(s)%2 == 1 {
		d := hexVal[s[0]]
		if d == 0xff || len(dst) == 0 {
			return false
		}
		dst[0] = d
		dst, s = dst[1:], s[1:]
	}
	if len(s) != 2*len(dst) {
		return false
	}
	// Two digits a lookup (hexPairs), and one test at the end rather than
	// two a byte: the digits are mostly calldata, the largest part of a
	// block's answers, and the loop of one digit a lookup was a fifth of
	// the instructions of decoding one (docs/benchmarks.md, issue 30,
	// session 30).
	var bad uint16
	for j := range dst {
		v := hexPairs[uint16(s[2*j])|uint16(s[2*j+1])<<8]
		bad |= v
		dst[j] = byte(v)
	}
	return bad&badPair == 0
}

// unhexBytes is unhex for the scanner's digits, which are an answer's
// bytes: sixteen digits at a time, two loads of a word and eight lookups
// of a pair, where unhex makes two bounds checks and two loads a pair
// (about 13 instructions a byte decoded, and unhex was a tenth of the
// ingester's instructions; docs/benchmarks.md, issue 30, session 30).
func unhexBytes(dst, s []byte) bool {
	if len(s) != 2*len(dst) {
		return unhex(dst, s)
	}
	var bad uint16
	for len(s) >= 16 && len(dst) >= 8 {
		x, y := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
		a, b, c, d := hexPairs[uint16(x)], hexPairs[uint16(x>>16)], hexPairs[uint16(x>>32)], hexPairs[uint16(x>>48)]
		e, f, g, h := hexPairs[uint16(y)], hexPairs[uint16(y>>16)], hexPairs[uint16(y>>32)], hexPairs[uint16(y>>48)]
		bad |= a | b | c | d | e | f | g | h
		_ = dst[7]
		dst[0], dst[1], dst[2], dst[3] = byte(a), byte(b), byte(c), byte(d)
		dst[4], dst[5], dst[6], dst[7] = byte(e), byte(f), byte(g), byte(h)
		s, dst = s[16:], dst[8:]
	}
	return unhex(dst, s) && bad&badPair == 0
}

// parseFixed parses hex data that must be exactly len(dst) bytes long.
func parseFixed[T text](s T, dst []byte) error {
	if !hasHexPrefix(s) || len(s) != 2+2*len(dst) {
		return fmt.Errorf("want 0x and %d hex digits, got %.70q", 2*len(dst), s)
	}
	// A digit at a time, stopping at the first bad one as encoding/hex
	// does: dst then holds what hex.Decode would have left.
	for j, i := 0, 2; j < len(dst); i, j = i+2, j+1 {
		hi, lo := hexVal[s[i]], hexVal[s[i+1]]
		if hi == 0xff || lo == 0xff {
			return fmt.Errorf("bad hex in %.70q", s)
		}
		dst[j] = hi<<4 | lo
	}
	return nil
}

// fieldUint decodes an optional quantity field; absent or null is 0.
func fieldUint(raw json.RawMessage) (uint64, error) {
	s, ok, err := jsonBytes(raw)
	if err != nil || !ok {
		return 0, err
	}
	return parseUint64(s)
}

// fieldBig decodes an optional quantity field; absent or null is nil.
func fieldBig(raw json.RawMessage) (*big.Int, error) { return fieldBigIn(nil, raw) }

// fieldBigIn is fieldBig with the value taken from sl.
func fieldBigIn(sl *slab, raw json.RawMessage) (*big.Int, error) {
	s, ok, err := jsonBytes(raw)
	if err != nil || !ok {
		return nil, err
	}
	return parseBigIn(sl, s)
}

// fieldBytes decodes an optional data field; absent or null is nil, "0x" is
// an empty, non-nil slice.
func fieldBytes(raw json.RawMessage) ([]byte, error) { return fieldBytesIn(nil, raw) }

// fieldBytesIn is fieldBytes with the bytes taken from sl.
func fieldBytesIn(sl *slab, raw json.RawMessage) ([]byte, error) {
	s, ok, err := jsonBytes(raw)
	if err != nil || !ok {
		return nil, err
	}
	if bytes.TrimSpace(raw)[0] != '"' {
		return nil, errHexSyntax // a number is never data
	}
	return parseBytesIn(sl, s)
}

// fieldAddress decodes an optional address field; absent, null, "" and "0x"
// are nil (nodes write all four for "no address").
func fieldAddress(raw json.RawMessage) (*chainquery.Address, error) { return fieldAddressIn(nil, raw) }

// fieldAddressIn is fieldAddress with the address taken from sl.
func fieldAddressIn(sl *slab, raw json.RawMessage) (*chainquery.Address, error) {
	a, ok, err := fieldAddressValue(raw)
	if !ok {
		return nil, err
	}
	return sl.address(a), nil
}

// fieldAddressValue is fieldAddress for callers that want the address
// itself, not a pointer to a copy: ok is false where fieldAddress gives
// nil, and a is then the zero address.
func fieldAddressValue(raw json.RawMessage) (a chainquery.Address, ok bool, err error) {
	s, ok, err := jsonBytes(raw)
	if err != nil || !ok || len(s) == 0 || string(s) == "0x" {
		return a, false, err
	}
	if err := parseFixed(s, a[:]); err != nil {
		return chainquery.Address{}, false, err // parseFixed may have written some bytes
	}
	return a, true, nil
}

// fieldHash decodes an optional 32-byte hash field; present is false when
// the field is absent or null.
func fieldHash(raw json.RawMessage) (h chainquery.Hash, present bool, err error) {
	s, ok, err := jsonBytes(raw)
	if err != nil || !ok {
		return h, false, err
	}
	return h, true, parseFixed(s, h[:])
}

// decodeNotes collects what lenient decoding had to paper over (a field that
// could not be parsed and was left zero). DecodeBlock and ApplyReceipts drop
// the notes; the fetcher in this package can use the *WithNotes variants to
// log them, so one odd transaction is stored and reported, never fatal.
type decodeNotes []string

// len and truncate mark the notes so far and drop those added since.
func (n *decodeNotes) len() int {
	if n == nil {
		return 0
	}
	return len(*n)
}

func (n *decodeNotes) truncate(mark int) {
	if n != nil {
		*n = (*n)[:mark]
	}
}

func (n *decodeNotes) add(format string, args ...any) {
	if n != nil {
		*n = append(*n, fmt.Sprintf(format, args...))
	}
}

// fieldReader decodes the fields of one record leniently: each failure is
// noted with the record's name and the field is left at its zero value.
type fieldReader struct {
	notes  *decodeNotes
	record func() string // names the record, e.g. "transaction 0xab...": built only for a note
	slab   *slab         // where amounts, data and address pointers come from; nil: allocate each
}

func (r fieldReader) note(field string, err error) {
	if err != nil {
		r.notes.add("%s: field %s left empty: %v", r.record(), field, err)
	}
}

func (r fieldReader) uint(field string, raw json.RawMessage) uint64 {
	v, err := fieldUint(raw)
	r.note(field, err)
	return v
}

func (r fieldReader) big(field string, raw json.RawMessage) *big.Int {
	v, err := fieldBigIn(r.slab, raw)
	r.note(field, err)
	return v
}

func (r fieldReader) bytes(field string, raw json.RawMessage) []byte {
	v, err := fieldBytesIn(r.slab, raw)
	r.note(field, err)
	return v
}

// data is bytes for a hexField.
func (r fieldReader) data(field string, f hexField) []byte {
	v, err := f.bytesIn(r.slab)
	r.note(field, err)
	return v
}

func (r fieldReader) address(field string, raw json.RawMessage) *chainquery.Address {
	v, err := fieldAddressIn(r.slab, raw)
	r.note(field, err)
	return v
}

// addressOrZero is address for fields the schema never leaves empty; it
// needs no pointer, so it takes nothing from the slab.
func (r fieldReader) addressOrZero(field string, raw json.RawMessage) chainquery.Address {
	a, _, err := fieldAddressValue(raw)
	r.note(field, err)
	return a
}

// present reports whether a field holds a value other than null.
func present(raw json.RawMessage) bool {
	raw = trimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// trimSpace is bytes.TrimSpace, called only when an end of b may be space:
// an ASCII byte up to ' ', or any byte of a multi-byte character. Most
// values are hex strings with nothing to trim, and jsonBytes reads every
// field of every trace: bytes.TrimSpace was a twentieth of decoding.
func trimSpace(b []byte) []byte {
	if n := len(b); n == 0 || b[0] > ' ' && b[0] < 0x80 && b[n-1] > ' ' && b[n-1] < 0x80 {
		return b
	}
	return bytes.TrimSpace(b)
}
