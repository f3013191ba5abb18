package evm

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery"
)

// The hex helpers below read the values of JSON-RPC answers. They are lenient
// where real nodes differ from the letter of the spec (quantities with
// leading zeros, "0x" for zero, decimal JSON numbers in Parity traces, odd
// digit counts in data, absent or null fields) and strict where a wrong value
// would file a record under the wrong key: hashes must be 32 bytes and
// addresses 20.

var errHexSyntax = errors.New("not a hex value")

// jsonText returns the text of a JSON scalar: the content of a string, or the
// literal of a number. present is false for an absent field and for null,
// which nodes use interchangeably.
func jsonText(raw json.RawMessage) (s string, present bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	// Hex strings never carry escapes: skip the decoder, which is most of
	// the cost of reading a large block.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 {
		return strings.TrimSpace(string(raw[1 : n-1])), true, nil
	}
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, err
		}
		return strings.TrimSpace(s), true, nil
	}
	if raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
		return string(raw), true, nil
	}
	return "", false, fmt.Errorf("want a string or a number, got %.20s", raw)
}

// hasHexPrefix reports whether s starts with 0x or 0X.
func hasHexPrefix(s string) bool {
	return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

// parseUint64 parses a quantity: 0x-prefixed hex (any number of leading
// zeros; a bare "0x" is zero) or, without the prefix, decimal digits as
// Parity traces and old JS tracers write them.
func parseUint64(s string) (uint64, error) {
	if hasHexPrefix(s) {
		digits := s[2:]
		if digits == "" {
			return 0, nil
		}
		if len(strings.TrimLeft(digits, "0")) > 16 {
			return 0, fmt.Errorf("quantity %.24s overflows 64 bits", s)
		}
		return strconv.ParseUint(digits, 16, 64)
	}
	return strconv.ParseUint(s, 10, 64)
}

// parseBig parses a quantity of any size with the rules of parseUint64.
// Negative values are refused: no EVM amount is negative.
func parseBig(s string) (*big.Int, error) {
	v := new(big.Int)
	digits, base := s, 10
	if hasHexPrefix(s) {
		digits, base = s[2:], 16
		if digits == "" {
			return v, nil
		}
	}
	if digits == "" || digits[0] == '-' || digits[0] == '+' {
		return nil, fmt.Errorf("bad quantity %.24q", s)
	}
	if _, ok := v.SetString(digits, base); !ok {
		return nil, fmt.Errorf("bad quantity %.24q", s)
	}
	return v, nil
}

// parseBytes parses 0x-prefixed hex data. An odd number of digits gets a
// leading zero nibble rather than an error, because a record that is
// slightly off must still be stored (one Avalanche fixture has such an
// input); the prefix is optional for the same reason.
func parseBytes(s string) ([]byte, error) {
	if hasHexPrefix(s) {
		s = s[2:]
	}
	if len(s)%2 == 1 {
		s = "0" + s
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, errHexSyntax
	}
	return b, nil
}

// parseFixed parses hex data that must be exactly len(dst) bytes long.
func parseFixed(s string, dst []byte) error {
	if !hasHexPrefix(s) || len(s) != 2+2*len(dst) {
		return fmt.Errorf("want 0x and %d hex digits, got %.70q", 2*len(dst), s)
	}
	if _, err := hex.Decode(dst, []byte(s[2:])); err != nil {
		return fmt.Errorf("bad hex in %.70q", s)
	}
	return nil
}

// fieldUint decodes an optional quantity field; absent or null is 0.
func fieldUint(raw json.RawMessage) (uint64, error) {
	s, ok, err := jsonText(raw)
	if err != nil || !ok {
		return 0, err
	}
	return parseUint64(s)
}

// fieldBig decodes an optional quantity field; absent or null is nil.
func fieldBig(raw json.RawMessage) (*big.Int, error) {
	s, ok, err := jsonText(raw)
	if err != nil || !ok {
		return nil, err
	}
	return parseBig(s)
}

// fieldBytes decodes an optional data field; absent or null is nil, "0x" is
// an empty, non-nil slice.
func fieldBytes(raw json.RawMessage) ([]byte, error) {
	s, ok, err := jsonText(raw)
	if err != nil || !ok {
		return nil, err
	}
	if bytes.TrimSpace(raw)[0] != '"' {
		return nil, errHexSyntax // a number is never data
	}
	return parseBytes(s)
}

// fieldAddress decodes an optional address field; absent, null, "" and "0x"
// are nil (nodes write all four for "no address").
func fieldAddress(raw json.RawMessage) (*chainquery.Address, error) {
	s, ok, err := jsonText(raw)
	if err != nil || !ok || s == "" || s == "0x" {
		return nil, err
	}
	var a chainquery.Address
	if err := parseFixed(s, a[:]); err != nil {
		return nil, err
	}
	return &a, nil
}

// fieldHash decodes an optional 32-byte hash field; present is false when
// the field is absent or null.
func fieldHash(raw json.RawMessage) (h chainquery.Hash, present bool, err error) {
	s, ok, err := jsonText(raw)
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
	v, err := fieldBig(raw)
	r.note(field, err)
	return v
}

func (r fieldReader) bytes(field string, raw json.RawMessage) []byte {
	v, err := fieldBytes(raw)
	r.note(field, err)
	return v
}

func (r fieldReader) address(field string, raw json.RawMessage) *chainquery.Address {
	v, err := fieldAddress(raw)
	r.note(field, err)
	return v
}

// addressOrZero is address for fields the schema never leaves empty.
func (r fieldReader) addressOrZero(field string, raw json.RawMessage) chainquery.Address {
	if a := r.address(field, raw); a != nil {
		return *a
	}
	return chainquery.Address{}
}

// present reports whether a field holds a value other than null.
func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}
