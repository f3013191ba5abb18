package solana

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/chainquery/chainquery"
)

// MetadataProgram is the Metaplex Token Metadata program, owner of the
// metadata accounts.
var MetadataProgram = mustKey("metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s")

func mustKey(s string) chainquery.PublicKey {
	k, err := parseKey(s)
	if err != nil {
		panic(err)
	}
	return k
}

// Metadata is the part of a Metaplex Metadata account the registry uses.
type Metadata struct {
	Key             byte
	UpdateAuthority chainquery.PublicKey
	Mint            chainquery.PublicKey
	Name            string
	Symbol          string
	URI             string
}

// DecodeMetadata decodes the Borsh layout of a Metadata account (key u8,
// update_authority, mint, then name, symbol and uri as u32-length-prefixed
// strings). The program pads the strings with NUL bytes to their maximum
// length, so trailing NULs are trimmed. The fields after uri are not read:
// their layout changed across program versions and the registry needs none.
func DecodeMetadata(data []byte) (*Metadata, error) {
	if len(data) < 65 {
		return nil, fmt.Errorf("metadata account of %d bytes is too short", len(data))
	}
	m := &Metadata{Key: data[0]}
	if m.Key != 4 { // MetadataV1; other keys are editions, records and the like
		return nil, fmt.Errorf("account key %d is not MetadataV1 (4)", m.Key)
	}
	copy(m.UpdateAuthority[:], data[1:33])
	copy(m.Mint[:], data[33:65])
	rest := data[65:]
	for _, f := range []*string{&m.Name, &m.Symbol, &m.URI} {
		if len(rest) < 4 {
			return nil, errors.New("metadata account ends inside a string length")
		}
		n := binary.LittleEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return nil, fmt.Errorf("metadata string of %d bytes overruns the account", n)
		}
		*f = strings.TrimRight(string(rest[4:4+n]), "\x00")
		rest = rest[4+n:]
	}
	return m, nil
}

// MetadataAddress returns the metadata account of mint: the program address
// derived from the seeds "metadata", the program id and the mint.
func MetadataAddress(mint chainquery.PublicKey) (chainquery.PublicKey, uint8, error) {
	return FindProgramAddress([][]byte{[]byte("metadata"), MetadataProgram[:], mint[:]}, MetadataProgram)
}

// FindProgramAddress is Solana's find_program_address: the first bump from
// 255 down whose sha256(seeds || bump || program || "ProgramDerivedAddress")
// is not a point of ed25519, so that no private key can sign for it.
func FindProgramAddress(seeds [][]byte, program chainquery.PublicKey) (chainquery.PublicKey, uint8, error) {
	for bump := 255; bump >= 0; bump-- {
		h := sha256.New()
		for _, s := range seeds {
			h.Write(s)
		}
		h.Write([]byte{byte(bump)})
		h.Write(program[:])
		h.Write([]byte("ProgramDerivedAddress"))
		var k chainquery.PublicKey
		h.Sum(k[:0])
		if !OnCurve(k) {
			return k, uint8(bump), nil
		}
	}
	return chainquery.PublicKey{}, 0, errors.New("no program address off the curve")
}

var (
	fieldP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	// edD is the curve constant d = -121665/121666 mod p.
	edD = func() *big.Int {
		inv := new(big.Int).ModInverse(big.NewInt(121666), fieldP)
		d := new(big.Int).Mul(big.NewInt(-121665), inv)
		return d.Mod(d, fieldP)
	}()
	legendreExp = new(big.Int).Rsh(new(big.Int).Sub(fieldP, big.NewInt(1)), 1)
)

// OnCurve reports whether k decompresses to a point of edwards25519, as
// curve25519-dalek's CompressedEdwardsY::decompress decides it: y is the
// little-endian value with the sign bit cleared, reduced mod p, and the
// point exists iff x^2 = (y^2-1)/(d*y^2+1) has a square root. math/big keeps
// this free of dependencies; it runs at most a few times per mint.
func OnCurve(k chainquery.PublicKey) bool {
	var be [32]byte
	for i := range k {
		be[31-i] = k[i]
	}
	be[0] &= 0x7f
	y := new(big.Int).SetBytes(be[:])
	y.Mod(y, fieldP)
	y2 := new(big.Int).Mul(y, y)
	y2.Mod(y2, fieldP)
	u := new(big.Int).Sub(y2, big.NewInt(1))
	u.Mod(u, fieldP)
	v := new(big.Int).Mul(edD, y2)
	v.Add(v, big.NewInt(1))
	v.Mod(v, fieldP)
	if v.Sign() == 0 {
		return false
	}
	x2 := new(big.Int).ModInverse(v, fieldP)
	x2.Mul(x2, u)
	x2.Mod(x2, fieldP)
	if x2.Sign() == 0 {
		return true
	}
	// Euler's criterion: x2 is a square iff x2^((p-1)/2) == 1.
	return new(big.Int).Exp(x2, legendreExp, fieldP).Cmp(big.NewInt(1)) == 0
}
