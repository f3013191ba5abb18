package evm

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// The parsers of hexutil.go read bytes without strconv, encoding/hex or
// big.Int.SetString where they can. These are the versions they replaced,
// which FuzzHexParsers holds them to: same values, same errors.

func refUint64(s string) (uint64, error) {
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

func refBig(s string) (*big.Int, error) {
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

func refBytes(s string) ([]byte, error) {
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

func refFixed(s string, dst []byte) error {
	if !hasHexPrefix(s) || len(s) != 2+2*len(dst) {
		return fmt.Errorf("want 0x and %d hex digits, got %.70q", 2*len(dst), s)
	}
	if _, err := hex.Decode(dst, []byte(s[2:])); err != nil {
		return fmt.Errorf("bad hex in %.70q", s)
	}
	return nil
}

func FuzzHexParsers(f *testing.F) {
	for _, s := range []string{"", "0x", "0X", "0x0", "0x00ff", "0xFFFFFFFFFFFFFFFF", "0x10000000000000000",
		"0x0000000000000000001", "18446744073709551615", "18446744073709551616", "9999999999999999999", "-1", "+1",
		"0x-1", "0x+1", "0xg", "1_000", "0x1_0", "abc", "0xabc", "0x" + strings.Repeat("ab", 20), "0x" + strings.Repeat("0", 70),
		"0x" + strings.Repeat("f", 64), "0x1234567890abcdefABCDEF", "١٢٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		same := func(what string, got, want any, gotErr, wantErr error) {
			t.Helper()
			if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("%s(%q) = %v, %v; want %v, %v", what, s, got, gotErr, want, wantErr)
			}
		}
		u, err := parseUint64([]byte(s))
		ru, rerr := refUint64(s)
		same("parseUint64", u, ru, err, rerr)
		b, err := parseBig([]byte(s))
		rb, rbErr := refBig(s)
		same("parseBig", b, rb, err, rbErr)
		by, err := parseBytes([]byte(s))
		rby, rbyErr := refBytes(s)
		same("parseBytes", by, rby, err, rbyErr)
		if err == nil && by == nil {
			t.Fatalf("parseBytes(%q) is nil", s)
		}
		// The same from a slab, with room and without.
		for _, sl := range []*slab{newSlab(len(s), 1, 1, 0), newSlab(1, 0, 0, 0)} {
			b, err := parseBigIn(sl, []byte(s))
			same("parseBigIn", b, rb, err, rbErr)
			by, err := parseBytesIn(sl, []byte(s))
			same("parseBytesIn", by, rby, err, rbyErr)
			if err == nil && (by == nil || cap(by) != len(by)) {
				t.Fatalf("parseBytesIn(%q) = %v, cap %d: nil or not capped", s, by, cap(by))
			}
		}
		var a, ra [20]byte
		err, rerr = parseFixed([]byte(s), a[:]), refFixed(s, ra[:])
		same("parseFixed", a, ra, err, rerr)
	})
}
