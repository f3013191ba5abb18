package evm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
)

// scanner reads a node's answer for the decoders' fast paths
// (decode_fast.go): one pass over the bytes, checking the JSON syntax as
// strictly as encoding/json does, and handing out field values as slices of
// the answer rather than copies.
//
// It never judges an answer. Whatever it is unsure of (a syntax error, a
// key with an escape or a non-ASCII byte, a field given twice, a value of a
// type the field cannot take, a null where encoding/json would keep an old
// value) makes it give up: bad is set, every later call does nothing, and
// the caller decodes the answer again with encoding/json, which gives the
// result or the error the decoders always gave. The fast path only has to
// be right when it succeeds; FuzzFastDecoders checks that it is.
type scanner struct {
	data  []byte
	i     int
	bad   bool
	depth int
	kbuf  [24]byte // the lowered key of the member being read
	sc    *scratch // where lists of elements go
}

// maxDepth is encoding/json's nesting limit: deeper answers are its errors.
const maxDepth = 10000

// fail gives up on the answer.
func (s *scanner) fail() {
	s.bad = true
	s.i = len(s.data)
}

// ws skips white space.
//
// Nodes answer compact JSON, so the first byte is almost always a token:
// one comparison rules out every white space byte (all are below '!'),
// where the switch made four; ws is called before every token and was a
// twentieth of the ingester's instructions (docs/benchmarks.md, issue 30,
// session 30).
func (s *scanner) ws() {
	d, i := s.data, s.i
	for i < len(d) && d[i] <= ' ' {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			s.i = i
			return
		}
	}
	s.i = i
}

// peek returns the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// open reads the opening bracket c of an object or array.
func (s *scanner) open(c byte) bool {
	if s.peek() != c {
		s.fail()
		return false
	}
	s.i++
	s.depth++
	if s.depth > maxDepth {
		s.fail()
		return false
	}
	return true
}

// more reports whether the object or array being read (closed by c) has
// another member, reading the comma before it or the closing bracket after
// the last. first is true until the first member.
func (s *scanner) more(c byte, first *bool) bool {
	if s.bad {
		return false
	}
	next := s.peek()
	if *first {
		*first = false
		if next == c {
			s.i++
			s.depth--
			return false
		}
		return true
	}
	switch next {
	case ',':
		s.i++
		return true
	case c:
		s.i++
		s.depth--
		return false
	}
	s.fail()
	return false
}

// key reads a member's key and the colon after it, and returns the key in
// lower case (encoding/json matches field names without regard to case).
// A key too long to name any field comes back empty; a key with an escape
// or a non-ASCII byte, which encoding/json would unescape or fold by
// Unicode rules, makes the scanner give up.
func (s *scanner) key() []byte {
	if s.peek() != '"' {
		s.fail()
		return nil
	}
	// Eight bytes at a time: the key loop, a byte at a time, was a sixth
	// of the instructions of decoding a block (docs/benchmarks.md, issue
	// 30, session 30). keyStops finds the first byte that ends the plain
	// run; every byte before it is plain ASCII, which lowerWord lowers.
	d, i := s.data, s.i+1
	for n := 0; n+8 <= len(s.kbuf); n, i = n+8, i+8 {
		if i+8 > len(d) {
			return s.keySlow()
		}
		x := binary.LittleEndian.Uint64(d[i:])
		binary.LittleEndian.PutUint64(s.kbuf[n:], lowerWord(x))
		if stop := keyStops(x); stop != 0 {
			k := bits.TrailingZeros64(stop) / 8
			if d[i+k] != '"' {
				s.fail() // a control character, an escape or a byte beyond ASCII
				return nil
			}
			s.i = i + k + 1
			if s.peek() != ':' {
				s.fail()
				return nil
			}
			s.i++
			return s.kbuf[:n+k]
		}
	}
	return s.longKey()
}

// The word tricks of "Bit Twiddling Hacks", on eight bytes of an answer
// read as one little-endian word: each sets the high bit of the first
// byte that matches, and of none before it (bytes after it may be set or
// not), so bits.TrailingZeros64/8 is that byte's place.
const wordOnes, wordHighs = 0x0101010101010101, 0x8080808080808080

// controlBytes marks the bytes of x below 0x20.
func controlBytes(x uint64) uint64 { return (x - wordOnes*0x20) &^ x & wordHighs }

// zeroBytes marks the zero bytes of x.
func zeroBytes(x uint64) uint64 { return (x - wordOnes) &^ x & wordHighs }

// keyStops marks the first byte of x that ends a key's plain run: a quote,
// a backslash, a control character or a byte beyond ASCII.
func keyStops(x uint64) uint64 {
	return controlBytes(x) | zeroBytes(x^wordOnes*'"') | zeroBytes(x^wordOnes*'\\') | x&wordHighs
}

// lowerWord lowers the ASCII capitals of x up to its first byte beyond
// ASCII (a byte from 0x80 may carry into the bytes after it).
func lowerWord(x uint64) uint64 {
	upper := (x + wordOnes*(0x80-'A')) &^ (x + wordOnes*(0x80-'Z'-1)) & wordHighs
	return x | upper>>2
}

// keySlow is key a byte at a time, near the end of the answer.
func (s *scanner) keySlow() []byte {
	if s.peek() != '"' {
		s.fail()
		return nil
	}
	// Keys are short and plain: read and lowered in one loop, a table
	// lookup a byte (keyByte). A byte that is not plain ASCII makes the
	// scanner give up, as below.
	d, n := s.data, 0
	for i := s.i + 1; i < len(d) && n < len(s.kbuf); i++ {
		c := keyByte[d[i]]
		if c == 0 {
			if d[i] != '"' {
				s.fail() // a control character, an escape or a byte beyond ASCII
				return nil
			}
			s.i = i + 1
			if s.peek() != ':' {
				s.fail()
				return nil
			}
			s.i++
			return s.kbuf[:n]
		}
		s.kbuf[n] = c
		n++
	}
	return s.longKey()
}

// keyByte is each byte as key reads it: lowered, or 0 for the quote and
// the bytes that make the scanner give up.
var keyByte = func() (t [256]byte) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] += 'a' - 'A'
		}
	}
	t['"'], t['\\'] = 0, 0
	return t
}()

// longKey is key for a key longer than any field's name, or unclosed.
func (s *scanner) longKey() []byte {
	start := s.i + 1
	if s.skipString() || s.bad {
		s.fail()
		return nil
	}
	k := s.data[start : s.i-1]
	if s.peek() != ':' {
		s.fail()
		return nil
	}
	s.i++
	if len(k) > len(s.kbuf) {
		for _, c := range k {
			if c >= 0x80 {
				s.fail()
			}
		}
		return nil
	}
	out := s.kbuf[:len(k)]
	for i, c := range k {
		switch {
		case c >= 0x80:
			s.fail()
			return nil
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// once marks field bit of an object as read, giving up if it was read
// before: encoding/json's rules for a field given twice are not worth
// copying for answers no node sends.
func (s *scanner) once(seen *uint32, bit uint) {
	if *seen&(1<<bit) != 0 {
		s.fail()
	}
	*seen |= 1 << bit
}

// value reads any value and returns its bytes.
func (s *scanner) value() []byte {
	if s.bad {
		return nil
	}
	s.ws()
	start := s.i
	if s.i >= len(s.data) {
		s.fail()
		return nil
	}
	switch s.data[s.i] {
	case '"':
		s.skipString()
	case '{':
		s.open('{')
		for first := true; s.more('}', &first); {
			s.key()
			s.value()
		}
	case '[':
		s.open('[')
		for first := true; s.more(']', &first); {
			s.value()
		}
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.number()
	}
	if s.bad {
		return nil
	}
	return s.data[start:s.i]
}

// null reads a null if one comes next.
func (s *scanner) null() bool {
	if s.peek() == 'n' {
		s.literal("null")
		return !s.bad
	}
	return false
}

func (s *scanner) literal(lit string) {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		s.fail()
		return
	}
	s.i += len(lit)
}

// number reads a number as JSON spells it.
func (s *scanner) number() {
	d, i := s.data, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	ok := true
	if i < len(d) && d[i] == '0' {
		i++
	} else {
		i, ok = digits(d, i)
	}
	if ok && i < len(d) && d[i] == '.' {
		i, ok = digits(d, i+1)
	}
	if ok && i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		i, ok = digits(d, i)
	}
	if !ok {
		s.fail()
		return
	}
	s.i = i
}

// digits returns the end of the run of decimal digits at d[i:], and false
// if there is none.
func digits(d []byte, i int) (int, bool) {
	start := i
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i, i > start
}

// plainByte marks the bytes a string holds as they are: not the quote, the
// backslash, or a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun returns the length of the run of plain bytes (plainByte) that b
// starts with. Strings are mostly long hex strings: the quote and the
// backslash are found by bytes.IndexByte (vector instructions), and only
// the bytes before the first of them are looked at for a control
// character, eight at a time with the word trick of "Bit Twiddling Hacks"
// (a byte less than n), byte by byte only in the word that ends the run.
// Three tests a word in one pass took twice the time.
func plainRun(b []byte) int {
	end := len(b)
	if q := bytes.IndexByte(b, '"'); q >= 0 {
		end = q
	}
	if e := bytes.IndexByte(b[:end], '\\'); e >= 0 {
		end = e
	}
	i := 0
	for ; i+8 <= end; i += 8 {
		if controlBytes(binary.LittleEndian.Uint64(b[i:])) != 0 {
			break
		}
	}
	for i < end && b[i] >= 0x20 {
		i++
	}
	return i
}

// skipString reads the string at the cursor and reports whether it holds
// an escape.
func (s *scanner) skipString() (escaped bool) {
	d, i := s.data, s.i+1
	for {
		i += plainRun(d[i:])
		if i >= len(d) {
			s.fail()
			return false
		}
		switch d[i] {
		case '"':
			s.i = i + 1
			return escaped
		case '\\':
			escaped = true
			if i+1 >= len(d) {
				s.fail()
				return false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					s.fail()
					return false
				}
				i += 6
			default:
				s.fail()
				return false
			}
		default: // a control character
			s.fail()
			return false
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// end checks that nothing but white space follows the answer's value.
func (s *scanner) end() {
	if s.peek() != 0 || s.i != len(s.data) {
		s.fail()
	}
}

// raw reads field bit of an object into a json.RawMessage field.
func (s *scanner) raw(dst *json.RawMessage, seen *uint32, bit uint) {
	s.once(seen, bit)
	*dst = s.value()
}

// hexField is a data field (a trace's input, output, init or code): its
// JSON text, and, when the scanner decoded it as it read it, its bytes (in
// the scratch's data, to be copied out). Every node writes data as a plain
// "0x" string of whole bytes: the scanner finds its end and decodes it in
// one pass (unhex checks every digit, so no quote, escape or control
// character hides inside), where reading it as a string first and decoding
// it later read each byte three times (docs/benchmarks.md, issue 30,
// session 19). Anything else is left as text, for the decoders' rules.
type hexField struct {
	raw     json.RawMessage
	decoded []byte
	ok      bool
}

// UnmarshalJSON keeps the text, as json.RawMessage does, for the decoders.
func (f *hexField) UnmarshalJSON(b []byte) error {
	f.raw, f.decoded, f.ok = append(f.raw[:0], b...), nil, false
	return nil
}

// bytesIn is fieldBytesIn for a hexField: the bytes the scanner decoded,
// copied to sl, or else its text decoded.
func (f hexField) bytesIn(sl *slab) ([]byte, error) {
	if f.ok {
		return sl.copyBytes(f.decoded), nil
	}
	return fieldBytesIn(sl, f.raw)
}

// hex reads field bit into a hexField.
func (s *scanner) hex(dst *hexField, seen *uint32, bit uint) {
	s.once(seen, bit)
	if s.bad {
		return
	}
	s.ws()
	d, i := s.data, s.i
	if i+3 <= len(d) && d[i] == '"' && d[i+1] == '0' && d[i+2] == 'x' {
		if q := bytes.IndexByte(d[i+3:], '"'); q >= 0 && q%2 == 0 {
			buf := slices.Grow(s.sc.data, q/2)
			out := buf[len(buf) : len(buf)+q/2 : len(buf)+q/2]
			if unhexBytes(out, d[i+3:i+3+q]) {
				s.sc.data = buf[:len(buf)+q/2]
				end := i + 4 + q
				*dst = hexField{raw: d[i:end], decoded: out, ok: true}
				s.i = end
				return
			}
		}
	}
	*dst = hexField{raw: s.value()}
}

// str reads field bit into a string field: null leaves it as it is, as
// encoding/json does, and a string with escapes or bytes beyond ASCII is
// decoded by encoding/json (which replaces invalid UTF-8).
func (s *scanner) str(dst *string, seen *uint32, bit uint) {
	s.once(seen, bit)
	if s.null() {
		return
	}
	if s.peek() != '"' {
		s.fail() // encoding/json: a type error
		return
	}
	start := s.i
	escaped := s.skipString()
	if s.bad {
		return
	}
	v := s.data[start+1 : s.i-1]
	if !escaped && ascii(v) {
		*dst = internString(v)
		return
	}
	if err := json.Unmarshal(s.data[start:s.i], dst); err != nil {
		s.fail()
	}
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// internString returns b as a string, without a copy for the words that
// trace and frame types are made of and the most common errors.
func internString(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "call":
		return "call"
	case "create":
		return "create"
	case "suicide":
		return "suicide"
	case "reward":
		return "reward"
	case "staticcall":
		return "staticcall"
	case "delegatecall":
		return "delegatecall"
	case "CALL":
		return "CALL"
	case "STATICCALL":
		return "STATICCALL"
	case "DELEGATECALL":
		return "DELEGATECALL"
	case "CREATE":
		return "CREATE"
	case "CREATE2":
		return "CREATE2"
	case "SELFDESTRUCT":
		return "SELFDESTRUCT"
	case "Reverted":
		return "Reverted"
	case "execution reverted":
		return "execution reverted"
	case "out of gas":
		return "out of gas"
	case "Out of gas":
		return "Out of gas"
	}
	return string(b)
}

// int reads field bit into an int field the way encoding/json does for
// plain integers; anything else (a fraction, an exponent, a string, an
// overflow, null) makes the scanner give up.
func (s *scanner) int(dst *int, seen *uint32, bit uint) {
	s.once(seen, bit)
	*dst = s.intValue()
}

func (s *scanner) intValue() int {
	if s.bad {
		return 0
	}
	s.ws()
	start := s.i
	s.number()
	if s.bad {
		return 0
	}
	b := s.data[start:s.i]
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 18 {
		s.fail()
		return 0
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			s.fail() // a fraction or an exponent: encoding/json's type error
			return 0
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// ints reads field bit into an []int field: null is nil, [] is empty.
func (s *scanner) ints(dst *[]int, seen *uint32, bit uint) {
	s.once(seen, bit)
	if s.null() {
		*dst = nil
		return
	}
	if !s.open('[') {
		return
	}
	start := len(s.sc.ints)
	for first := true; s.more(']', &first); {
		if s.peek() == 'n' {
			s.fail() // encoding/json keeps the element's old value
			return
		}
		s.sc.ints = append(s.sc.ints, s.intValue())
	}
	if len(s.sc.ints) == start {
		*dst = []int{}
		return
	}
	*dst = s.sc.ints[start:len(s.sc.ints):len(s.sc.ints)]
}
