package evm

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

func TestFieldUint(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want uint64
		err  bool
	}{
		{``, 0, false},      // absent
		{`null`, 0, false},  // null
		{`"0x0"`, 0, false}, // canonical zero
		{`"0x"`, 0, false},  // empty quantity some nodes send
		{`"0x00ff"`, 255, false},
		{`"0X1A"`, 26, false}, // upper-case prefix and digits
		{`"0xffffffffffffffff"`, 1<<64 - 1, false},
		{`"0x0000000000000000001"`, 1, false}, // leading zeros beyond 16 digits
		{`1000000`, 1000000, false},           // JSON number (Parity blockNumber)
		{`"21000"`, 21000, false},             // decimal string (legacy tracers)
		{`" 0x10 "`, 16, false},
		{`"0x10000000000000000"`, 0, true}, // 2^64
		{`"0xzz"`, 0, true},
		{`"-1"`, 0, true},
		{`true`, 0, true},
		{`{}`, 0, true},
	} {
		got, err := fieldUint(json.RawMessage(tc.raw))
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("fieldUint(%s) = %d, %v; want %d, error %v", tc.raw, got, err, tc.want, tc.err)
		}
	}
}

func TestFieldBig(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string // "nil" for a nil result
		err  bool
	}{
		{``, "nil", false},
		{`null`, "nil", false},
		{`"0x0"`, "0", false},
		{`"0x"`, "0", false},
		{`"0x56bc75e2d63100000"`, "100000000000000000000", false},
		{`"0x00000000000000000000000000000000000000000000000000000000000000ff"`, "255", false},
		{`"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"`, "115792089237316195423570985008687907853269984665640564039457584007913129639935", false},
		{`12`, "12", false},
		{`"-0x1"`, "nil", true},
		{`"0x-1"`, "nil", true},
		{`"0xg"`, "nil", true},
		{`""`, "nil", true},
	} {
		got, err := fieldBig(json.RawMessage(tc.raw))
		s := "nil"
		if got != nil {
			s = got.String()
		}
		if s != tc.want || (err != nil) != tc.err {
			t.Errorf("fieldBig(%s) = %s, %v; want %s, error %v", tc.raw, s, err, tc.want, tc.err)
		}
	}
}

func TestFieldBytes(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want []byte // nil for absent
		err  bool
	}{
		{``, nil, false},
		{`null`, nil, false},
		{`"0x"`, []byte{}, false},
		{`"0x0102"`, []byte{1, 2}, false},
		{`"0xABcd"`, []byte{0xab, 0xcd}, false},
		{`"0x102"`, []byte{1, 2}, false}, // odd digit count: leading zero nibble
		{`"0102"`, []byte{1, 2}, false},  // no prefix
		{`"0xzz"`, nil, true},
		{`5`, nil, true},
	} {
		got, err := fieldBytes(json.RawMessage(tc.raw))
		if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) || (err != nil) != tc.err {
			t.Errorf("fieldBytes(%s) = %x (nil %v), %v; want %x (nil %v), error %v", tc.raw, got, got == nil, err, tc.want, tc.want == nil, tc.err)
		}
	}
}

func TestFieldAddress(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string // "" for nil
		err  bool
	}{
		{``, "", false},
		{`null`, "", false},
		{`""`, "", false},
		{`"0x"`, "", false},
		{`"0xBB1a241DCBd6A3894cB61F659034874Dc9CF65D4"`, "0xbb1a241dcbd6a3894cb61f659034874dc9cf65d4", false}, // checksummed (Arbitrum transfers)
		{`"0x0000000000000000000000000000000000000000"`, "0x0000000000000000000000000000000000000000", false},
		{`"0x12"`, "", true}, // an address must be 20 bytes
		{`"0x00000000000000000000000000000000000000000a"`, "", true},
		{`"0x000000000000000000000000000000000000000g"`, "", true},
	} {
		got, err := fieldAddress(json.RawMessage(tc.raw))
		s := ""
		if got != nil {
			s = got.Hex()
		}
		if s != tc.want || (err != nil) != tc.err {
			t.Errorf("fieldAddress(%s) = %s, %v; want %q, error %v", tc.raw, s, err, tc.want, tc.err)
		}
	}
}

func TestFieldHash(t *testing.T) {
	full := "0x" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		raw     string
		present bool
		err     bool
	}{
		{``, false, false},
		{`null`, false, false},
		{`"` + full + `"`, true, false},
		{`"` + strings.ToUpper(full[2:]) + `"`, true, true},  // the prefix is required
		{`"` + full[:65] + `"`, true, true},                  // 31.5 bytes
		{`"` + full + `00"`, true, true},                     // 33 bytes
		{`"0x` + strings.Repeat("zz", 32) + `"`, true, true}, // not hex
	} {
		h, ok, err := fieldHash(json.RawMessage(tc.raw))
		if ok != tc.present || (err != nil) != tc.err {
			t.Errorf("fieldHash(%s) = %s, %v, %v; want present %v, error %v", tc.raw, h, ok, err, tc.present, tc.err)
		}
		if ok && err == nil && h.Hex() != full {
			t.Errorf("fieldHash(%s) = %s", tc.raw, h)
		}
	}
}

// TestDecodeNotes checks that lenient decoding reports what it left empty,
// for the fetcher to log.
func TestDecodeNotes(t *testing.T) {
	var notes decodeNotes
	raw := json.RawMessage(`{"number":"0x1","hash":"0x` + strings.Repeat("11", 32) + `","parentHash":"0x` + strings.Repeat("22", 32) +
		`","timestamp":"0x1","gasLimit":"lots","transactions":[{"hash":"0x` + strings.Repeat("33", 32) + `","value":"0xzz"}]}`)
	d, err := decodeBlockWithNotes("ethereum", raw, &notes)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "gasLimit") || !strings.Contains(notes[1], "value") {
		t.Errorf("notes %q", notes)
	}
	if d.Block.GasLimit != 0 || d.Transactions[0].Value.Sign() != 0 {
		t.Errorf("fields not left empty")
	}
	// Without a collector nothing is recorded and nothing breaks.
	if _, err := DecodeBlock("ethereum", raw); err != nil {
		t.Fatal(err)
	}
}

// TestUnhexBytes: the scanner's decoder, sixteen digits at a time, agrees
// with encoding/hex on every length and with a bad byte at every place.
func TestUnhexBytes(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for n := 0; n <= 80; n++ {
		raw := make([]byte, n)
		r.Read(raw)
		digits := []byte(hex.EncodeToString(raw))
		if n%3 == 0 {
			digits = bytes.ToUpper(digits)
		}
		dst := make([]byte, n)
		if !unhexBytes(dst, digits) || !bytes.Equal(dst, raw) {
			t.Fatalf("%d bytes: %x, want %x", n, dst, raw)
		}
		for i := range digits {
			for _, c := range []byte{'g', 'G', '"', 'x', '/', ':', '@', 0, 0x80, 0xff} {
				bad := bytes.Clone(digits)
				bad[i] = c
				if unhexBytes(dst, bad) {
					t.Fatalf("%q at %d of %d digits: decoded", c, i, len(bad))
				}
			}
		}
	}
}
