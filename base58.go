package chainquery

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
//
// The number is kept in limbs of base 58^4, least significant first, and
// each byte of b is multiplied in: a 32-byte key takes about 180 limb
// steps, where math/big's repeated division by 58 was a large share of
// Token Balance by Account's CPU under load, three keys per answer
// (docs/benchmarks.md, "What changed, each from a profile").
func Base58Encode(b []byte) string {
	const limbBase = 58 * 58 * 58 * 58 // limb*256 + 255 < 2^32
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	var stack [16]uint32
	limbs := stack[:0]
	if need := (len(b)-zeros)*138/400 + 1; need > len(stack) { // log(256)/log(58^4) < 0.345
		limbs = make([]uint32, 0, need)
	}
	for _, c := range b[zeros:] {
		carry := uint32(c)
		for i := range limbs {
			carry += limbs[i] << 8
			limbs[i], carry = carry%limbBase, carry/limbBase
		}
		for carry > 0 {
			limbs = append(limbs, carry%limbBase)
			carry /= limbBase
		}
	}
	out := make([]byte, zeros, zeros+4*len(limbs))
	for i := range out {
		out[i] = '1'
	}
	for i := len(limbs) - 1; i >= 0; i-- {
		var d [4]byte
		for j, v := 3, limbs[i]; j >= 0; j-- {
			d[j], v = base58Alphabet[v%58], v/58
		}
		if i == len(limbs)-1 { // the top limb without its leading zeros
			k := 0
			for k < 3 && d[k] == '1' {
				k++
			}
			out = append(out, d[k:]...)
			continue
		}
		out = append(out, d[:]...)
	}
	return string(out)
}

// Base58Decode decodes s; ok is false if s has a character outside the
// alphabet. The number is kept in 32-bit limbs, least significant first.
func Base58Decode(s string) (b []byte, ok bool) {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	var stack [12]uint32
	limbs := stack[:0]
	for i := zeros; i < len(s); i++ {
		v := base58Index[s[i]]
		if v < 0 {
			return nil, false
		}
		carry := uint64(v)
		for j := range limbs {
			t := uint64(limbs[j])*58 + carry
			limbs[j], carry = uint32(t), t>>32
		}
		if carry > 0 {
			limbs = append(limbs, uint32(carry))
		}
	}
	out := make([]byte, zeros, zeros+4*len(limbs))
	for i := len(limbs) - 1; i >= 0; i-- {
		v := limbs[i]
		d := [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		if i == len(limbs)-1 { // the top limb without its leading zero bytes
			k := 0
			for k < 3 && d[k] == 0 {
				k++
			}
			out = append(out, d[k:]...)
			continue
		}
		out = append(out, d[:]...)
	}
	return out, true
}
