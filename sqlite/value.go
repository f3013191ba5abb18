package sqlite

import (
	"fmt"
	"math/big"
)

// bigArg writes an amount as an integer when it fits in 64 bits (most do,
// and they take 1 to 8 bytes), as decimal text otherwise, NULL for nil.
// Amounts (wei, token amounts) are the one value SQLite has no type for: it
// has no 256-bit integer. bigArg and bigCol say once how they are written
// and read back; every other value is one of SQLite's own.
func bigArg(v *big.Int) any {
	if v == nil {
		return nil
	} else if v.IsInt64() {
		return v.Int64()
	}
	return v.String()
}

// u64Arg writes a uint64 amount (Solana token amounts) the way bigArg does.
func u64Arg(v uint64) any { return bigArg(new(big.Int).SetUint64(v)) }

// bigCol reads what bigArg wrote (sqlstore.Store.ScanAmount).
type bigCol struct{ p **big.Int }

func scanAmount(p **big.Int) any { return bigCol{p} }

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
