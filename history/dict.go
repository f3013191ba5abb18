package history

import (
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A Dict is a zstd dictionary of raw content for one kind of segment of one
// chain: the beginnings of a few of the chain's own segments, which hold
// the addresses, topics and call data its blocks repeat. Compressed with
// it (at zstd's fastest level), a Polygon-shaped block's segments were 14%
// (transactions), 20% (logs) and 9% (traces) smaller than without one at
// the default level (docs/benchmarks.md, issue 30). A segment's
// zstd frame names its dictionary by ID; decoding needs the dictionary
// registered (RegisterDict) in the process.
type Dict struct {
	ID      uint32
	Content []byte
	enc     *zstd.Encoder
}

// DictSamples is how many segments a dictionary's content is made of, and
// DictSampleBytes how much of the beginning of each it takes: 4 × 28 KB
// did best of 1, 4 and 16 samples of 32, 64 and 112 KB in all.
const (
	DictSamples     = 4
	DictSampleBytes = 28 << 10
)

// DictContent returns the content of a dictionary made of the beginnings
// of samples, segments as Append* write them (compressed).
func DictContent(samples [][]byte) ([]byte, error) {
	var content []byte
	for _, s := range samples {
		raw, err := decompress(s)
		if err != nil {
			return nil, err
		}
		content = append(content, raw[:min(len(raw), DictSampleBytes)]...)
	}
	return content, nil
}

// DictID returns the ID of the dictionary of content: a hash of it, so
// that the same ID is the same content in every database one process
// opens. zstd leaves IDs below 32,768 and from 2^31 up to others.
func DictID(content []byte) uint32 {
	h := fnv.New32a()
	h.Write(content)
	return 32768 + h.Sum32()%(1<<31-32768)
}

// NewDict returns the dictionary of content, registered for decoding.
func NewDict(content []byte) (*Dict, error) {
	d, err := NewDictUnregistered(content)
	if err != nil {
		return nil, err
	}
	if err := RegisterDict(d.ID, content); err != nil {
		return nil, err
	}
	return d, nil
}

// NewDictUnregistered is NewDict without the registration: the segments it
// compresses decode once RegisterDict is given it (another process's
// dictionary, as a test makes one).
func NewDictUnregistered(content []byte) (*Dict, error) {
	id := DictID(content)
	// zstd's fastest level: with a dictionary, the default level copies
	// its larger match tables from the dictionary's for every frame, 1.09
	// against 0.63 ms for a Polygon-shaped block's three segments, for 5%
	// fewer bytes; the fastest level with a dictionary is 13% smaller than
	// the default without one, and faster (docs/benchmarks.md, issue 30).
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true),
		zstd.WithNoEntropyCompression(true), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderDictRaw(id, content),
		zstd.WithWindowSize(encoderWindow))
	if err != nil {
		return nil, fmt.Errorf("history: dictionary %d: %w", id, err)
	}
	return &Dict{ID: id, Content: content, enc: enc}, nil
}

// Recompress returns segment seg compressed with d: tests make with it the
// log and trace segments that releases before issue 30's session 28 wrote
// with dictionaries (sqlstore/history_dicts.go).
func (d *Dict) Recompress(seg []byte) ([]byte, error) {
	raw, err := decompress(seg)
	if err != nil {
		return nil, err
	}
	return d.enc.EncodeAll(raw, nil), nil
}

// dictDecoders holds a decoder per registered dictionary, by ID.
var (
	dictDecoders sync.Map // uint32 → *zstd.Decoder
	dictMu       sync.Mutex
)

// RegisterDict makes segments compressed with the dictionary id of content
// decodable in this process. An ID whose content is not its hash is
// refused: it is not one this package made.
func RegisterDict(id uint32, content []byte) error {
	if DictID(content) != id {
		return corrupt("dictionary %d: content of another ID", id)
	}
	dictMu.Lock()
	defer dictMu.Unlock()
	if _, ok := dictDecoders.Load(id); ok {
		return nil
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded),
		zstd.WithDecoderDictRaw(id, content))
	if err != nil {
		return fmt.Errorf("history: dictionary %d: %w", id, err)
	}
	dictDecoders.Store(id, dec)
	return nil
}

// UnknownDictError is the error of a decode of a segment whose dictionary
// is not registered: the caller registers it from where it keeps it and
// decodes again.
type UnknownDictError struct{ ID uint32 }

func (e *UnknownDictError) Error() string {
	return fmt.Sprintf("history: segment compressed with dictionary %d, not registered", e.ID)
}

// Unwrap makes it an ErrCorrupt to those who do not register dictionaries:
// to them, the segment cannot be read.
func (e *UnknownDictError) Unwrap() error { return ErrCorrupt }

// SegmentDict returns the ID of the dictionary a segment is compressed
// with (0: none) and whether this process has it registered.
func SegmentDict(seg []byte) (id uint32, registered bool) {
	var h zstd.Header
	if err := h.Decode(seg); err != nil || h.DictionaryID == 0 {
		return 0, true
	}
	_, ok := dictDecoders.Load(h.DictionaryID)
	return h.DictionaryID, ok
}
