package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"slices"
	"sync"

	"github.com/chainquery/chainquery"
	"github.com/klauspost/compress/zstd"
)

// ErrCorrupt is the error of every decode of bytes this package did not
// write, or that were damaged since.
var ErrCorrupt = errors.New("history: corrupt segment")

// corrupt returns ErrCorrupt with what was wrong.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// The encoder and decoder are safe for concurrent use with EncodeAll and
// DecodeAll, and costly to make: one of each per process.
var (
	coderOnce sync.Once
	encoder   *zstd.Encoder
	decoder   *zstd.Decoder
)

// maxDecoded bounds what one segment may decompress to (a Polygon block's
// rows are ~1 MB; a hostile or damaged header must not make the decoder
// allocate gigabytes).
const maxDecoded = 256 << 20

func coders() (*zstd.Encoder, *zstd.Decoder) {
	coderOnce.Do(func() {
		var err error
		// zstd's fastest level: the default level (3) made a
		// Polygon-shaped block's logs and traces 4.4 KB smaller, for 0.9 ms
		// more of the ingester's CPU a block, a sixth of it
		// (docs/benchmarks.md, issue 30, session 28); level 4 and above
		// made real rows hardly smaller, at a multiple of the time ("Disk
		// per block"). As many encoders as CPUs: the segments of a write
		// are compressed side by side (sqlstore.encodeBlocks), and one
		// encoder takes one at a time. Without the Huffman coding of
		// literals: the encoder
		// tried it on every block and kept the raw literals, so that the
		// segments of three recorded mainnet blocks (testdata) and of the
		// Polygon-shaped chain came out byte for byte the same without it,
		// 17-37% faster (docs/benchmarks.md, issue 30): a segment's literals
		// are hashes, addresses and calldata, which it does not shrink.
		encoder, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(min(runtime.GOMAXPROCS(0), 4)), zstd.WithZeroFrames(true),
			zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithNoEntropyCompression(true), zstd.WithWindowSize(encoderWindow))
		if err != nil {
			panic("history: zstd encoder: " + err.Error()) // fixed options: cannot fail
		}
		decoder, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded))
		if err != nil {
			panic("history: zstd decoder: " + err.Error())
		}
	})
	return encoder, decoder
}

// rawBuffers holds the buffers in which a segment's uncompressed bytes are
// put together before compression: hundreds of KB for a Polygon block's
// traces, made and dropped for every block written. Growing them by append
// allocated several times that a block (the ingester's memory profile;
// docs/benchmarks.md, "History in the stores", RSS).
var rawBuffers = sync.Pool{New: func() any { return new([]byte) }}

// finish appends to dst the compressed segment of head followed by cols,
// compressed with d (nil: without a dictionary).
func finish(d *Dict, dst, head []byte, cols ...[]byte) []byte {
	n := len(head)
	for _, c := range cols {
		n += len(c)
	}
	buf := rawBuffers.Get().(*[]byte)
	raw := slices.Grow((*buf)[:0], n)
	raw = append(raw, head...)
	for _, c := range cols {
		raw = append(raw, c...)
	}
	// The frame is made in a pooled buffer and copied to dst: given no
	// room, EncodeAll allocates room for all of src, about four times the
	// frame, and the segment would keep it until written (3.6 times a
	// block's segments allocated, and held by the blocks waiting for the
	// writer; docs/benchmarks.md, issue 30, session 18).
	zbuf := rawBuffers.Get().(*[]byte)
	z := (*zbuf)[:0]
	if d != nil {
		z = d.enc.EncodeAll(raw, z)
	} else {
		z = compress(z, raw)
	}
	dst = append(dst, z...)
	*buf, *zbuf = raw[:0], z[:0]
	rawBuffers.Put(buf)
	rawBuffers.Put(zbuf)
	return dst
}

// lenBytesSize is the room appendLenBytes takes for each of bs.
func lenBytesSize[T any](rows []T, bs func(T) []byte) int {
	n := 0
	for _, r := range rows {
		n += binary.MaxVarintLen32 + len(bs(r))
	}
	return n
}

// compress appends the zstd frame of src to dst.
func compress(dst, src []byte) []byte {
	enc, _ := coders()
	return enc.EncodeAll(src, dst)
}

// decompress returns the content of the zstd frame src, with the
// dictionary its header names (RegisterDict), if any.
func decompress(src []byte) ([]byte, error) {
	_, dec := coders()
	var h zstd.Header
	if err := h.Decode(src); err == nil && h.DictionaryID != 0 {
		d, ok := dictDecoders.Load(h.DictionaryID)
		if !ok {
			return nil, &UnknownDictError{ID: h.DictionaryID}
		}
		dec = d.(*zstd.Decoder)
	}
	out, err := dec.DecodeAll(src, nil)
	if err != nil {
		return nil, corrupt("zstd: %v", err)
	}
	return out, nil
}

// reader reads the varints and byte strings of a decompressed segment,
// keeping the first error: every read after it returns zero values, and
// the caller checks err once at the end of a row.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = corrupt(format, args...)
	}
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	if n > 1 && r.b[n-1] == 0 { // not the shortest form: this package never writes it
		r.fail("varint not in its shortest form")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varint reads a signed varint, in its shortest form.
func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	if n > 1 && r.b[n-1] == 0 {
		r.fail("varint not in its shortest form")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// int reads a uvarint that must fit an int of at most max.
func (r *reader) int(max int) int {
	v := r.uvarint()
	if v > uint64(max) {
		r.fail("value %d over %d", v, max)
		return 0
	}
	return int(v)
}

// bytes reads n bytes, sharing the reader's memory.
func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail("%d bytes wanted, %d left", n, len(r.b))
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

// lenBytes reads a uvarint length and that many bytes.
func (r *reader) lenBytes() []byte { return r.bytes(r.int(len(r.b))) }

// byte_ reads one byte.
func (r *reader) byte_() byte {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func appendLenBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendBig appends a nullable non-negative integer: 0 for nil, else its
// big-endian bytes' length plus one, then the bytes.
func appendBig(dst []byte, v *big.Int) ([]byte, bool) {
	if v == nil {
		return append(dst, 0), true
	}
	if v.Sign() < 0 {
		return dst, false
	}
	b := v.Bytes()
	dst = binary.AppendUvarint(dst, uint64(len(b))+1)
	return append(dst, b...), true
}

// big reads what appendBig wrote.
func (r *reader) big() *big.Int {
	k := r.int(len(r.b) + 1)
	if k == 0 || r.err != nil {
		return nil
	}
	b := r.bytes(k - 1)
	if len(b) > 0 && b[0] == 0 { // not what big.Int.Bytes writes
		r.fail("integer with a leading zero byte")
		return nil
	}
	return new(big.Int).SetBytes(b)
}

// dict numbers the distinct values of a segment's column in first use order.
type dict[T comparable] struct {
	index  map[T]uint64
	values []T
}

// reset empties d, keeping its room.
func (d *dict[T]) reset() {
	clear(d.index)
	d.values = d.values[:0]
}

// scratch is what encoding one segment works in: its column buffers and
// its dictionaries, kept in a pool with their room. A block's columns grew
// from nothing for every segment, several allocations each: most of the
// ingester's allocations after its decoding stopped making a heap object
// per row (docs/benchmarks.md, issue 30).
type scratch struct {
	cols   [16][]byte
	head   []byte // the segment's header: its dictionaries' values
	addrs  dict[chainquery.Address]
	hashes dict[chainquery.Hash]
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// getScratch returns an empty scratch from the pool.
func getScratch() *scratch {
	s := scratches.Get().(*scratch)
	for i := range s.cols {
		s.cols[i] = s.cols[i][:0]
	}
	s.addrs.reset()
	s.hashes.reset()
	return s
}

// col returns column buffer i, empty, with room for n bytes.
func (s *scratch) col(i, n int) []byte { return slices.Grow(s.cols[i][:0], n) }

// header returns the head buffer, holding magic and version.
func (s *scratch) header(magic []byte, version byte) []byte {
	return append(append(s.head[:0], magic...), version)
}

// keep takes the header and the columns back, as grown, for the next
// segment, and puts s back in the pool: the segment's bytes are copied out
// of them by finish.
func (s *scratch) keep(head []byte, cols ...[]byte) {
	s.head = head
	copy(s.cols[:], cols)
	scratches.Put(s)
}

func (d *dict[T]) id(v T) uint64 {
	if d.index == nil {
		d.index = map[T]uint64{}
	}
	i, ok := d.index[v]
	if !ok {
		i = uint64(len(d.values))
		d.index[v] = i
		d.values = append(d.values, v)
	}
	return i
}

// encoderWindow is the encoders' window: the farthest back a match
// reaches. At zstd's default (8 MiB) each encoder keeps a 16 MiB history
// buffer, which the collector counts as live heap: with four encoders,
// room the ingester's memory limit no longer had, and collections more
// often. At 1 MiB the segments of 1,000 Polygon-shaped blocks came out
// the same size, 101.7 MB either way (docs/benchmarks.md, issue 30,
// session 17); a match farther back than that is rare in a segment.
const encoderWindow = 1 << 20
