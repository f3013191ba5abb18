package solana

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chainquery/chainquery"
)

// Token2022Program is the SPL Token-2022 program, owner of Token-2022 mints.
var Token2022Program = mustKey("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb")

// Layout of a Token-2022 account with extensions: the base Mint (82 bytes),
// zero padding up to the length of a base token Account (165 bytes), the
// account type byte, then TLV extensions.
const (
	mintLen               = 82
	accountTypeOffset     = 165
	accountTypeMint       = 1
	extUninitialized      = 0
	extTokenMetadata      = 19
	tlvHeaderLen          = 4
	tokenMetadataFixedLen = 64 // update_authority and mint
)

// TokenMetadata is the part of the Token-2022 TokenMetadata extension the
// registry uses.
type TokenMetadata struct {
	UpdateAuthority chainquery.PublicKey // zero when none (OptionalNonZeroPubkey)
	Mint            chainquery.PublicKey
	Name            string
	Symbol          string
	URI             string
}

// DecodeToken2022Metadata returns the name and symbol of the TokenMetadata
// extension of a Token-2022 mint account, NUL padding and spaces trimmed. ok
// is false when the account has no such extension, as for a classic SPL
// Token mint of 82 bytes. Data that is short or corrupt is an error.
func DecodeToken2022Metadata(data []byte) (name, symbol string, ok bool, err error) {
	m, ok, err := DecodeTokenMetadataExtension(data)
	if err != nil || !ok {
		return "", "", false, err
	}
	return m.Name, m.Symbol, true, nil
}

// DecodeTokenMetadataExtension is DecodeToken2022Metadata returning the whole
// decoded extension.
func DecodeTokenMetadataExtension(data []byte) (*TokenMetadata, bool, error) {
	switch {
	case len(data) == mintLen:
		return nil, false, nil // a mint without extensions
	case len(data) < mintLen:
		return nil, false, fmt.Errorf("mint account of %d bytes is too short", len(data))
	case len(data) <= accountTypeOffset:
		return nil, false, fmt.Errorf("mint account of %d bytes ends before its account type", len(data))
	}
	if t := data[accountTypeOffset]; t != accountTypeMint {
		return nil, false, fmt.Errorf("account type %d is not a mint (%d)", t, accountTypeMint)
	}
	rest := data[accountTypeOffset+1:]
	for len(rest) > 0 {
		if len(rest) < tlvHeaderLen {
			if allZero(rest) {
				break
			}
			return nil, false, fmt.Errorf("extension header truncated: %d bytes left", len(rest))
		}
		typ := binary.LittleEndian.Uint16(rest)
		n := int(binary.LittleEndian.Uint16(rest[2:]))
		if typ == extUninitialized {
			break // the rest is unused space
		}
		if n > len(rest)-tlvHeaderLen {
			return nil, false, fmt.Errorf("extension %d of %d bytes overruns the account (%d bytes left)", typ, n, len(rest)-tlvHeaderLen)
		}
		value := rest[tlvHeaderLen : tlvHeaderLen+n]
		if typ == extTokenMetadata {
			m, err := decodeTokenMetadata(value)
			if err != nil {
				return nil, false, err
			}
			return m, true, nil
		}
		rest = rest[tlvHeaderLen+n:]
	}
	return nil, false, nil
}

// decodeTokenMetadata decodes the Borsh value of a TokenMetadata extension.
// additional_metadata is checked for bounds but not kept.
func decodeTokenMetadata(v []byte) (*TokenMetadata, error) {
	if len(v) < tokenMetadataFixedLen {
		return nil, fmt.Errorf("token metadata of %d bytes is too short", len(v))
	}
	m := &TokenMetadata{}
	copy(m.UpdateAuthority[:], v[:32])
	copy(m.Mint[:], v[32:64])
	r := v[tokenMetadataFixedLen:]
	var err error
	for _, f := range []*string{&m.Name, &m.Symbol, &m.URI} {
		if *f, r, err = borshString(r); err != nil {
			return nil, err
		}
	}
	if len(r) < 4 {
		return nil, errors.New("token metadata ends inside the additional metadata count")
	}
	count := binary.LittleEndian.Uint32(r)
	r = r[4:]
	if uint64(count)*8 > uint64(len(r)) { // each pair holds two lengths at least
		return nil, fmt.Errorf("token metadata claims %d additional pairs in %d bytes", count, len(r))
	}
	for i := uint32(0); i < 2*count; i++ {
		if _, r, err = borshString(r); err != nil {
			return nil, fmt.Errorf("additional metadata: %w", err)
		}
	}
	m.Name, m.Symbol = trimPadding(m.Name), trimPadding(m.Symbol)
	return m, nil
}

// borshString reads a u32-length-prefixed UTF-8 string off the front of b.
func borshString(b []byte) (string, []byte, error) {
	if len(b) < 4 {
		return "", nil, errors.New("token metadata ends inside a string length")
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return "", nil, fmt.Errorf("token metadata string of %d bytes overruns the extension", n)
	}
	s := b[4 : 4+n]
	if !utf8.Valid(s) {
		return "", nil, errors.New("token metadata string is not UTF-8")
	}
	return string(s), b[4+n:], nil
}

func trimPadding(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r == 0 || unicode.IsSpace(r) })
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Account is an account's owner program and data.
type Account struct {
	Owner chainquery.PublicKey
	Data  []byte
}

// OwnedAccounts is Accounts returning each account's owner program too; an
// absent account is nil.
func (c *Client) OwnedAccounts(ctx context.Context, addrs []chainquery.PublicKey) ([]*Account, error) {
	out := make([]*Account, 0, len(addrs))
	for lo := 0; lo < len(addrs); lo += 100 {
		part := addrs[lo:min(lo+100, len(addrs))]
		keys := make([]string, len(part))
		for i, a := range part {
			keys[i] = a.String()
		}
		var res struct {
			Value []*struct {
				Owner string   `json:"owner"`
				Data  []string `json:"data"`
			} `json:"value"`
		}
		err := c.RPC.Call(ctx, &res, "getMultipleAccounts", keys, map[string]any{"encoding": "base64", "commitment": "confirmed"})
		if err != nil {
			return nil, fmt.Errorf("getMultipleAccounts: %w", err)
		}
		if len(res.Value) != len(part) {
			return nil, fmt.Errorf("getMultipleAccounts answered %d accounts for %d", len(res.Value), len(part))
		}
		for _, v := range res.Value {
			if v == nil || len(v.Data) == 0 {
				out = append(out, nil)
				continue
			}
			owner, err := parseKey(v.Owner)
			if err != nil {
				return nil, fmt.Errorf("getMultipleAccounts: account owner: %w", err)
			}
			b, err := base64.StdEncoding.DecodeString(v.Data[0])
			if err != nil {
				return nil, fmt.Errorf("getMultipleAccounts: account data: %w", err)
			}
			out = append(out, &Account{Owner: owner, Data: b})
		}
	}
	return out, nil
}
