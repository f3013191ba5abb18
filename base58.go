package chainquery

import "math/big"

// PublicKey is a 32-byte Solana address (account, owner or mint).
type PublicKey [32]byte

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Index = func() (idx [256]int8) {
	for i := range idx {
		idx[i] = -1
	}
	for i := 0; i < len(base58Alphabet); i++ {
		idx[base58Alphabet[i]] = int8(i)
	}
	return idx
}()

// String returns the base58 form of k.
func (k PublicKey) String() string { return Base58Encode(k[:]) }

// ParsePublicKey parses a base58 address of 32 to 44 characters that decodes
// to 32 bytes. It returns EINVALID naming param otherwise.
func ParsePublicKey(param, s string) (PublicKey, error) {
	var k PublicKey
	if len(s) < 32 || len(s) > 44 {
		return k, Errorf(EINVALID, "%s must be a base58-encoded address of 32 to 44 characters", param)
	}
	b, ok := Base58Decode(s)
	if !ok {
		return k, Errorf(EINVALID, "%s must be base58-encoded (characters 1-9, A-Z and a-z without 0, O, I and l)", param)
	}
	if len(b) != len(k) {
		return k, Errorf(EINVALID, "%s must decode to a 32-byte address", param)
	}
	copy(k[:], b)
	return k, nil
}

// Base58Encode encodes b in the Bitcoin alphabet that Solana uses.
func Base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	n := new(big.Int).SetBytes(b)
	var out []byte
	mod, base := new(big.Int), big.NewInt(58)
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for i := 0; i < zeros; i++ {
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// Base58Decode decodes s; ok is false if s has a character outside the alphabet.
func Base58Decode(s string) (b []byte, ok bool) {
	n, base := new(big.Int), big.NewInt(58)
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	for i := 0; i < len(s); i++ {
		v := base58Index[s[i]]
		if v < 0 {
			return nil, false
		}
		n.Mul(n, base)
		n.Add(n, big.NewInt(int64(v)))
	}
	return append(make([]byte, zeros), n.Bytes()...), true
}
