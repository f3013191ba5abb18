package chainquery_test

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/chainquery/chainquery"
)

// refBase58Encode and refBase58Decode are the textbook conversions through
// math/big, which the limb arithmetic of base58.go must match exactly.
func refBase58Encode(b []byte) string {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	n, mod, base := new(big.Int).SetBytes(b), new(big.Int), big.NewInt(58)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append([]byte{alphabet[mod.Int64()]}, out...)
	}
	return string(bytes.Repeat([]byte{'1'}, zeros)) + string(out)
}

func refBase58Decode(s string) ([]byte, bool) {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	n := new(big.Int)
	for i := 0; i < len(s); i++ {
		v := bytes.IndexByte([]byte(alphabet), s[i])
		if v < 0 {
			return nil, false
		}
		n.Mul(n, big.NewInt(58)).Add(n, big.NewInt(int64(v)))
	}
	return append(make([]byte, zeros), n.Bytes()...), true
}

func checkBase58(t *testing.T, b []byte) {
	t.Helper()
	s := chainquery.Base58Encode(b)
	if want := refBase58Encode(b); s != want {
		t.Fatalf("Base58Encode(%x) = %q, want %q", b, s, want)
	}
	got, ok := chainquery.Base58Decode(s)
	if !ok || !bytes.Equal(got, b) {
		t.Fatalf("Base58Decode(%q) = %x, %v, want %x", s, got, ok, b)
	}
}

// TestBase58MatchesBig holds both directions to math/big on the edges of
// the limbs (all zeros, all 0xff, leading zero bytes, every length up to
// 70 bytes, longer than the encoder's stack limbs) and on random keys.
func TestBase58MatchesBig(t *testing.T) {
	for n := 0; n <= 70; n++ {
		for _, fill := range []byte{0x00, 0x01, 0x39, 0xff} {
			b := bytes.Repeat([]byte{fill}, n)
			checkBase58(t, b)
			if n > 1 {
				b[0] = 0
				checkBase58(t, b)
				b[n-1] ^= 0x80
				checkBase58(t, b)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, 32)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		b[0] &= byte(r.Uint32()) // now and then a leading zero byte
		checkBase58(t, b)
	}
	// Decoding text no key encodes to: non-canonical lengths, leading '1's,
	// the largest digits, characters outside the alphabet.
	for _, s := range []string{"", "1", "111", "z", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "11z1", "2", "0", "O", "I", "l", "+", "zz\xff"} {
		got, ok := chainquery.Base58Decode(s)
		want, wantOK := refBase58Decode(s)
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Errorf("Base58Decode(%q) = %x, %v, want %x, %v", s, got, ok, want, wantOK)
		}
	}
}

func FuzzBase58(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3}, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		if len(b) > 128 || len(s) > 176 { // math/big's reference is quadratic: keep each run short
			t.Skip()
		}
		checkBase58(t, b)
		got, ok := chainquery.Base58Decode(s)
		want, wantOK := refBase58Decode(s)
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("Base58Decode(%q) = %x, %v, want %x, %v", s, got, ok, want, wantOK)
		}
	})
}
