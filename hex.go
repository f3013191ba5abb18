package chainquery

import (
	"encoding/hex"
	"math/big"
	"strings"
)

// Address is a 20-byte EVM account address.
type Address [20]byte

// Hash is a 32-byte EVM hash (block, transaction, topic, root).
type Hash [32]byte

// Hex returns the lowercase 0x-prefixed form of a; responses always carry
// lowercase hex whatever case the request used.
func (a Address) Hex() string { return Hex(a[:]) }

// Hex returns the lowercase 0x-prefixed form of h.
func (h Hash) Hex() string { return Hex(h[:]) }

// String returns a.Hex().
func (a Address) String() string { return a.Hex() }

// String returns h.Hex().
func (h Hash) String() string { return h.Hex() }

// Hex returns b as lowercase 0x-prefixed hex; "0x" for no bytes.
func Hex(b []byte) string {
	out := make([]byte, 2+2*len(b))
	out[0], out[1] = '0', 'x'
	hex.Encode(out[2:], b)
	return string(out)
}

// ParseAddress parses a 0x-prefixed 40-digit hex address in any case. It
// returns EINVALID naming param otherwise.
func ParseAddress(param, s string) (Address, error) {
	var a Address
	if err := parseFixedHex(s, a[:]); err != nil {
		return a, Errorf(EINVALID, "%s must be a 0x-prefixed 20-byte hex address (0x followed by 40 hex digits)", param)
	}
	return a, nil
}

// ParseHash parses a 0x-prefixed 64-digit hex hash in any case. It returns
// EINVALID naming param otherwise.
func ParseHash(param, s string) (Hash, error) {
	var h Hash
	if err := parseFixedHex(s, h[:]); err != nil {
		return h, Errorf(EINVALID, "%s must be a 0x-prefixed 32-byte hex hash (0x followed by 64 hex digits)", param)
	}
	return h, nil
}

// parseFixedHex decodes s, "0x" and then exactly 2*len(dst) hex digits in
// any case, into dst. The prefix is a lowercase "0x" only: the interface's
// patterns (^0x[a-fA-F0-9]{40}$) refuse "0X".
func parseFixedHex(s string, dst []byte) error {
	if len(s) != 2+2*len(dst) || !strings.HasPrefix(s, "0x") {
		return errBadHex
	}
	_, err := hex.Decode(dst, []byte(s[2:]))
	return err
}

var errBadHex = Errorf(EINVALID, "bad hex")

// FunctionSignature returns the first four bytes of input (all of it when
// shorter): the selector the interface reports as function_signature.
func FunctionSignature(input []byte) []byte {
	if len(input) > 4 {
		return input[:4]
	}
	return input
}

// BigString returns the decimal digits of v, "0" for nil.
func BigString(v *big.Int) string {
	if v == nil {
		return "0"
	}
	return v.String()
}
