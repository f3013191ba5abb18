package postgres

import (
	"fmt"
	"math/big"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5/pgtype"
)

// Column codecs: how domain values are written to and read from the
// schema's types, said once. The scan targets implement pgtype's scanner
// interfaces, so that pgx decodes straight into the domain values.

// bigArg writes a wei amount as numeric, NULL for nil.
func bigArg(v *big.Int) any {
	if v == nil {
		return nil
	}
	return pgtype.Numeric{Int: v, Valid: true}
}

// bigOrZero writes an amount that the schema never leaves NULL.
func bigOrZero(v *big.Int) pgtype.Numeric {
	if v == nil {
		v = new(big.Int)
	}
	return pgtype.Numeric{Int: v, Valid: true}
}

// bigCol reads a numeric(78,0) into a *big.Int, nil for NULL.
type bigCol struct{ p **big.Int }

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

// u64Arg writes a uint64 amount (Solana token amounts) as numeric: bigint
// would hold it only bit for bit, and amounts are compared by people.
func u64Arg(v uint64) pgtype.Numeric {
	return pgtype.Numeric{Int: new(big.Int).SetUint64(v), Valid: true}
}

// u64Col reads what u64Arg wrote.
type u64Col struct{ p *uint64 }

func (c u64Col) ScanNumeric(n pgtype.Numeric) error {
	if !n.Valid {
		return fmt.Errorf("postgres: amount is NULL")
	}
	v, err := numericInt(n)
	if err != nil {
		return err
	}
	if !v.IsUint64() {
		return fmt.Errorf("postgres: amount %s is not a uint64", v)
	}
	*c.p = v.Uint64()
	return nil
}

// gasArg stores a uint64 counter (gas, nonce, size, block number) as a
// signed 64-bit integer bit for bit, as the SQLite store does.
func gasArg(v uint64) int64 { return int64(v) }

// gasCol reads what gasArg wrote.
type gasCol struct{ p *uint64 }

func (c gasCol) ScanInt64(v pgtype.Int8) error {
	if !v.Valid {
		return fmt.Errorf("postgres: counter is NULL")
	}
	*c.p = uint64(v.Int64)
	return nil
}

// fixedCol reads a bytea of fixed size (hash, address, key) into dst.
type fixedCol []byte

func (c fixedCol) ScanBytes(b []byte) error {
	if b == nil || len(b) != len(c) {
		return fmt.Errorf("postgres: want %d bytes, got %d", len(c), len(b))
	}
	copy(c, b)
	return nil
}

// addrPtrCol reads a nullable address.
type addrPtrCol struct{ p **chainquery.Address }

func (c addrPtrCol) ScanBytes(b []byte) error {
	if b == nil {
		*c.p = nil
		return nil
	}
	a := new(chainquery.Address)
	if err := fixedCol(a[:]).ScanBytes(b); err != nil {
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

// bytesCol reads a bytea that is never NULL; the API says "0x" for no
// bytes, so an empty value comes back as an empty, non-nil slice.
type bytesCol struct{ p *[]byte }

func (c bytesCol) ScanBytes(b []byte) error {
	*c.p = append([]byte{}, b...)
	return nil
}

// blobArg writes bytes so that an empty slice stays an empty bytea rather
// than NULL.
func blobArg(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Trace types and call types are stored as small integers, the codes of
// the SQLite store.
var (
	traceTypes = map[string]int16{chainquery.TraceCall: 0, chainquery.TraceCreate: 1, chainquery.TraceSuicide: 2}
	callTypes  = map[string]int16{
		chainquery.CallTypeCall: 0, chainquery.CallTypeDelegateCall: 1,
		chainquery.CallTypeStaticCall: 2, chainquery.CallTypeCreate: 3,
	}
	traceTypeNames = []string{chainquery.TraceCall, chainquery.TraceCreate, chainquery.TraceSuicide}
	callTypeNames  = []string{chainquery.CallTypeCall, chainquery.CallTypeDelegateCall, chainquery.CallTypeStaticCall, chainquery.CallTypeCreate}
)
