package solana_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/solana"
)

// tlv encodes one Token-2022 extension: type and length as u16 LE, then value.
func tlv(typ uint16, value []byte) []byte {
	b := binary.LittleEndian.AppendUint16(nil, typ)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(value)))
	return append(b, value...)
}

func borshStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// tokenMetadataValue encodes a TokenMetadata extension value.
func tokenMetadataValue(name, symbol, uri string, extra ...[2]string) []byte {
	b := make([]byte, 64)
	for i := range 32 {
		b[i] = 0xAA    // update authority
		b[32+i] = 0xBB // mint
	}
	b = borshStr(b, name)
	b = borshStr(b, symbol)
	b = borshStr(b, uri)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(extra)))
	for _, kv := range extra {
		b = borshStr(b, kv[0])
		b = borshStr(b, kv[1])
	}
	return b
}

// mintAccount is a Token-2022 mint account: base mint, padding, account type
// Mint, then the extensions.
func mintAccount(exts ...[]byte) []byte {
	b := make([]byte, 165)
	b[44] = 6 // decimals
	b[45] = 1 // initialized
	b = append(b, 1)
	for _, e := range exts {
		b = append(b, e...)
	}
	return b
}

func TestDecodeToken2022Metadata(t *testing.T) {
	meta := tlv(19, tokenMetadataValue("  Paypal USD\x00\x00", "PYUSD \x00", "https://example.com/pyusd.json", [2]string{"k", "v"}))
	present := mintAccount(tlv(1, make([]byte, 108)), tlv(18, make([]byte, 64)), meta)
	name, symbol, ok, err := solana.DecodeToken2022Metadata(present)
	if err != nil || !ok || name != "Paypal USD" || symbol != "PYUSD" {
		t.Fatalf("present: %q %q %v %v", name, symbol, ok, err)
	}
	m, ok, err := solana.DecodeTokenMetadataExtension(present)
	if err != nil || !ok || m.Mint[0] != 0xBB || m.UpdateAuthority[31] != 0xAA || m.URI != "https://example.com/pyusd.json" {
		t.Fatalf("extension: %+v %v %v", m, ok, err)
	}

	for _, c := range []struct {
		name string
		data []byte
	}{
		{"no extensions after the type", mintAccount()},
		{"other extensions only", mintAccount(tlv(1, make([]byte, 108)), tlv(18, make([]byte, 64)))},
		{"classic mint", make([]byte, 82)},
		{"unused space", append(mintAccount(tlv(18, make([]byte, 64))), 0, 0, 0, 0, 0, 0)},
	} {
		if _, _, ok, err := solana.DecodeToken2022Metadata(c.data); ok || err != nil {
			t.Errorf("%s: ok %v err %v", c.name, ok, err)
		}
	}

	pastEnd := mintAccount(tlv(18, make([]byte, 64)))
	binary.LittleEndian.PutUint16(pastEnd[166+2:], 200)
	shortMeta := mintAccount(tlv(19, tokenMetadataValue("Name", "SYM", "uri")[:70]))
	countless := tokenMetadataValue("Name", "SYM", "uri")
	badCount := mintAccount(tlv(19, append(countless[:len(countless)-4], 0xFF, 0xFF, 0xFF, 0xFF)))
	badUTF8 := mintAccount(tlv(19, tokenMetadataValue("\xff\xfe", "SYM", "uri")))
	notMint := mintAccount(meta)
	notMint[165] = 2
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"short", "too short", make([]byte, 40)},
		{"before the type", "account type", make([]byte, 120)},
		{"not a mint", "not a mint", notMint},
		{"truncated TLV header", "truncated", append(mintAccount(tlv(1, make([]byte, 108))), 19, 0)},
		{"truncated TLV value", "overruns", present[:len(present)-5]},
		{"length past the end", "overruns", pastEnd},
		{"metadata too short", "too short", mintAccount(tlv(19, make([]byte, 40)))},
		{"string past the value", "overruns", shortMeta},
		{"pair count past the value", "additional", badCount},
		{"not UTF-8", "UTF-8", badUTF8},
	} {
		_, _, ok, err := solana.DecodeToken2022Metadata(c.data)
		if ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ok %v err %v, want an error with %q", c.name, ok, err, c.want)
		}
	}
}

func FuzzDecodeToken2022Metadata(f *testing.F) {
	f.Add(mintAccount(tlv(1, make([]byte, 108)), tlv(19, tokenMetadataValue("Name", "SYM", "uri", [2]string{"a", "b"}))))
	f.Add(mintAccount())
	f.Add(make([]byte, 82))
	f.Add(mintAccount(tlv(19, make([]byte, 64))))
	f.Fuzz(func(t *testing.T, data []byte) {
		name, symbol, ok, err := solana.DecodeToken2022Metadata(data)
		if err != nil && ok {
			t.Fatal("ok with an error")
		}
		if !ok && (name != "" || symbol != "") {
			t.Fatal("a name without ok")
		}
	})
}
