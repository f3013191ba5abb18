package postgres

import (
	"fmt"
	"math/big"

	"github.com/jackc/pgx/v5/pgtype"
)

// bigArg writes a wei amount as numeric, NULL for nil. Amounts (wei, token
// amounts) are numeric(78,0), which pgx reads and writes as pgtype.Numeric:
// bigArg and bigCol say once how they are written and read back. Every
// other value has a Go type pgx takes as it is.
func bigArg(v *big.Int) any {
	if v == nil {
		return nil
	}
	return pgtype.Numeric{Int: v, Valid: true}
}

// bigCol reads a numeric(78,0) into a *big.Int, nil for NULL
// (sqlstore.Store.ScanAmount). It implements pgtype's NumericScanner,
// so that pgx decodes straight into the domain value.
type bigCol struct{ p **big.Int }

func scanAmount(p **big.Int) any { return bigCol{p} }

func (c bigCol) ScanNumeric(n pgtype.Numeric) error {
	if !n.Valid {
		*c.p = nil
		return nil
	}
	v, err := numericInt(n)
	if err != nil {
		return err
	}
	*c.p = v
	return nil
}

// numericInt returns the integer a numeric holds. pgx gives a value such as
// 25000000000000000000 as 25 × 10^18, so the exponent is applied here.
func numericInt(n pgtype.Numeric) (*big.Int, error) {
	if n.NaN || n.InfinityModifier != pgtype.Finite || n.Int == nil {
		return nil, fmt.Errorf("postgres: amount is not a finite number")
	}
	v := new(big.Int).Set(n.Int)
	if n.Exp == 0 {
		return v, nil
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n.Exp))), nil)
	if n.Exp > 0 {
		return v.Mul(v, scale), nil
	}
	if q, r := new(big.Int).QuoRem(v, scale, new(big.Int)); r.Sign() == 0 {
		return q, nil
	}
	return nil, fmt.Errorf("postgres: amount is not an integer")
}

func abs(n int32) int32 {
	if n < 0 {
		return -n
	}
	return n
}
