package sqlite

import (
	"fmt"
	"math/big"

	"github.com/chainquery/chainquery"
)

// Column codecs. SQLite has no 256-bit integer or fixed-size blob type, so
// these types say once how domain values are written and read back.

// bigArg writes a wei amount as an integer when it fits in 64 bits (most do,
// and they take 1 to 8 bytes), as decimal text otherwise, NULL for nil.
func bigArg(v *big.Int) any {
	if v == nil {
		return nil
	} else if v.IsInt64() {
		return v.Int64()
	}
	return v.String()
}

// bigCol reads what bigArg wrote.
type bigCol struct{ p **big.Int }

func (c bigCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.p = nil
	case int64:
		*c.p = big.NewInt(v)
	case string:
		return c.setString(v)
	case []byte:
		return c.setString(string(v))
	default:
		return fmt.Errorf("sqlite: cannot read %T as an amount", src)
	}
	return nil
}

func (c bigCol) setString(s string) error {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return fmt.Errorf("sqlite: bad amount %q", s)
	}
	*c.p = v
	return nil
}

// u64Arg writes a uint64 amount (Solana token amounts) the way bigArg does.
func u64Arg(v uint64) any { return bigArg(new(big.Int).SetUint64(v)) }

// u64Col reads what u64Arg wrote.
type u64Col struct{ p *uint64 }

func (c u64Col) Scan(src any) error {
	var b *big.Int
	if err := (bigCol{&b}).Scan(src); err != nil {
		return err
	}
	if b == nil || !b.IsUint64() {
		return fmt.Errorf("sqlite: amount %v is not a uint64", src)
	}
	*c.p = b.Uint64()
	return nil
}

// gasArg stores a uint64 counter (gas, nonce, size) as a signed 64-bit
// integer bit for bit; nothing sorts or sums on these columns.
func gasArg(v uint64) int64 { return int64(v) }

// gasCol reads what gasArg wrote.
type gasCol struct{ p *uint64 }

func (c gasCol) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("sqlite: cannot read %T as a counter", src)
	}
	*c.p = uint64(v)
	return nil
}

// fixedCol reads a fixed-size blob (hash, address, key) into dst.
type fixedCol []byte

func (c fixedCol) Scan(src any) error {
	b, ok := src.([]byte)
	if !ok || len(b) != len(c) {
		return fmt.Errorf("sqlite: want a %d-byte blob, got %T of length %d", len(c), src, len(b))
	}
	copy(c, b)
	return nil
}

// addrPtrCol reads a nullable address.
type addrPtrCol struct{ p **chainquery.Address }

func (c addrPtrCol) Scan(src any) error {
	if src == nil {
		*c.p = nil
		return nil
	}
	a := new(chainquery.Address)
	if err := fixedCol(a[:]).Scan(src); err != nil {
		return err
	}
	*c.p = a
	return nil
}

// addrPtrArg writes a nullable address.
func addrPtrArg(a *chainquery.Address) any {
	if a == nil {
		return nil
	}
	return a[:]
}

// bytesCol reads a blob that is never NULL; an empty blob may come back as
// nil from the driver, and the API must still say "0x".
type bytesCol struct{ p *[]byte }

func (c bytesCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.p = []byte{}
	case []byte:
		*c.p = append([]byte{}, v...)
	case string:
		*c.p = []byte(v)
	default:
		return fmt.Errorf("sqlite: cannot read %T as bytes", src)
	}
	return nil
}

// blobArg writes bytes so that an empty slice stays an empty blob rather
// than NULL.
func blobArg(b []byte) any {
	if b == nil {
		return []byte{}
	}
	return b
}
