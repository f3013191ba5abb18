package http

import (
	"encoding/hex"
	"math/big"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chainquery/chainquery"
)

// jsonAppender is a response that appends its own JSON to dst, without
// reflection. Its bytes must be exactly those json.Marshal gives of the
// reflective form of the same answer (field order, null or absent, string
// escapes): TestAppendersMatchMarshal and the Fuzz*JSON targets hold every
// appender to it. Only the large answers have one: at Polygon shape
// encoding/json and the intermediate structs it needed were a large part of
// Get Block's time with full transactions (docs/benchmarks.md, "What
// changed, each from a profile": hand-written encoders).
type jsonAppender interface {
	appendJSON(dst []byte) []byte
}

// maxPooledBuffer is the largest response buffer kept for reuse: a rare
// huge answer (a block of several MB) is left to the collector rather than
// held by the pool for ever.
const maxPooledBuffer = 1 << 20

var bufferPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

// appendQuotedHex appends b as a JSON string of lowercase 0x-prefixed hex,
// as chainquery.Hex formats it.
func appendQuotedHex(dst, b []byte) []byte {
	dst = append(dst, '"', '0', 'x')
	dst = hex.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendAddressOrNull appends a as a quoted hex string, or null when nil.
func appendAddressOrNull(dst []byte, a *chainquery.Address) []byte {
	if a == nil {
		return append(dst, "null"...)
	}
	return appendQuotedHex(dst, a[:])
}

// appendStringOrNull writes s as a JSON string, or null when it is nil.
func appendStringOrNull(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendString(dst, *s)
}

// appendBigOrNull appends v as a JSON number, as (*big.Int).MarshalJSON
// does, or null when nil.
func appendBigOrNull(dst []byte, v *big.Int) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	return appendBig(dst, v)
}

// appendBig appends the decimal digits of v; (*big.Int).Append allocates
// its digits, strconv does not, and nearly every amount and price fits in
// 64 bits.
func appendBig(dst []byte, v *big.Int) []byte {
	switch {
	case v.IsUint64():
		return strconv.AppendUint(dst, v.Uint64(), 10)
	case v.IsInt64():
		return strconv.AppendInt(dst, v.Int64(), 10)
	}
	return v.Append(dst, 10)
}

// appendBigString appends chainquery.BigString(v) as a JSON string: the
// decimal digits of v, "0" for nil.
func appendBigString(dst []byte, v *big.Int) []byte {
	dst = append(dst, '"')
	if v == nil {
		dst = append(dst, '0')
	} else {
		dst = appendBig(dst, v)
	}
	return append(dst, '"')
}

// appendDatetime appends chainquery.FormatDatetime(ts) as a JSON string;
// the layout gives digits, '-', 'T' and ':' only, none of which is escaped.
func appendDatetime(dst []byte, ts int64) []byte {
	dst = append(dst, '"')
	t := time.Unix(ts, 0).UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		dst = t.AppendFormat(dst, chainquery.DatetimeLayout)
		return append(dst, '"')
	}
	// chainquery.DatetimeLayout digit by digit: every row of an answer
	// carries its block's datetime, and AppendFormat reads its layout
	// again each time (docs/benchmarks.md, "The reads that miss": Get
	// Block, full transactions).
	h, mi, s := t.Clock()
	dst = append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	dst = append(dst, byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T')
	dst = append(dst, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':')
	return append(dst, byte('0'+s/10), byte('0'+s%10), '"')
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

func appendInt(dst []byte, v int) []byte { return strconv.AppendInt(dst, int64(v), 10) }

// appendPage appends the members every paged answer ends with, and closes
// its object: "offset", "limit", "result" (each item as item appends it;
// [] when none, never null) and "count".
func appendPage[T any](dst []byte, offset, limit, count int, items []T, item func([]byte, T) []byte) []byte {
	dst = append(dst, `"offset":`...)
	dst = appendInt(dst, offset)
	dst = append(dst, `,"limit":`...)
	dst = appendInt(dst, limit)
	dst = append(dst, `,"result":[`...)
	for i, v := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = item(dst, v)
	}
	dst = append(dst, `],"count":`...)
	dst = appendInt(dst, count)
	return append(dst, '}')
}

// appendTxHead opens the object of a transaction, receipt, log or trace
// with the fields they all start with, in the interface's order:
// block_number, timestamp, datetime, transaction_hash, transaction_index.
func appendTxHead(dst []byte, block uint64, ts int64, hash *chainquery.Hash, index int) []byte {
	dst = append(dst, `{"block_number":`...)
	dst = strconv.AppendUint(dst, block, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	dst = append(dst, `,"datetime":`...)
	dst = appendDatetime(dst, ts)
	dst = append(dst, `,"transaction_hash":`...)
	dst = appendQuotedHex(dst, hash[:])
	dst = append(dst, `,"transaction_index":`...)
	return appendInt(dst, index)
}

// appendString appends s as a JSON string escaped exactly as json.Marshal
// escapes it: '"', '\\' and control characters; '<', '>' and '&' as
// \u003c, \u003e and \u0026 (HTML escaping is on by default); U+2028 and
// U+2029; and each byte of invalid UTF-8 as \ufffd.
func appendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
