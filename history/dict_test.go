package history_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/polychain"
)

// TestDict: segments compressed with a dictionary made from other blocks'
// segments are smaller and decode to the same rows; a segment whose
// dictionary the process does not have is an UnknownDictError naming it
// until it is registered; a dictionary registered under another content's
// ID is refused.
func TestDict(t *testing.T) {
	blocks := polygonBlocks(t, polychain.Config{Seed: 7, Blocks: 12}, polychain.KindParity)
	var samples [][]byte
	for _, d := range blocks[:history.DictSamples] {
		seg, err := history.AppendTraces(nil, d.Traces)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, seg)
	}
	content, err := history.DictContent(samples)
	if err != nil {
		t.Fatal(err)
	}
	// A content no test registered before: the process-wide registry
	// would otherwise know it.
	content = append(content, "TestDict"...)
	id := history.DictID(content)
	if _, registered := history.SegmentDict(samples[0]); !registered {
		t.Fatal("a segment without a dictionary reads as one needing a dictionary")
	}
	if err := history.RegisterDict(id+1, content); !errors.Is(err, history.ErrCorrupt) {
		t.Fatalf("a dictionary under another ID: %v, want ErrCorrupt", err)
	}
	// Compressed by a dictionary this process has not registered: made
	// with NewDict's encoder options, but the decoder told nothing.
	d, err := history.NewDictUnregistered(content)
	if err != nil {
		t.Fatal(err)
	}
	var plain, with int
	for _, b := range blocks[history.DictSamples:] {
		seg, err := d.AppendTraces(nil, b.Traces)
		if err != nil {
			t.Fatal(err)
		}
		bare, _ := history.AppendTraces(nil, b.Traces)
		plain, with = plain+len(bare), with+len(seg)
		if got, ok := history.SegmentDict(seg); got != id || ok {
			t.Fatalf("segment names dictionary %d (registered %v), want %d, not registered", got, ok, id)
		}
		var u *history.UnknownDictError
		if _, err := history.DecodeTraces(seg, b.Block.Number); !errors.As(err, &u) || u.ID != id {
			t.Fatalf("decoding without the dictionary: %v, want UnknownDictError %d", err, id)
		}
	}
	if err := history.RegisterDict(id, content); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[history.DictSamples:] {
		seg, _ := d.AppendTraces(nil, b.Traces)
		got, err := history.DecodeTraces(seg, b.Block.Number)
		if err != nil {
			t.Fatal(err)
		}
		// The segment's form of the traces (TestTraces_* compare it with
		// the rows): the same with and without the dictionary.
		bare, _ := history.AppendTraces(nil, b.Traces)
		want, err := history.DecodeTraces(bare, b.Block.Number)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("block %d: traces differ with the dictionary", b.Block.Number)
		}
	}
	t.Logf("%d bytes without the dictionary, %d with", plain, with)
	if with >= plain {
		t.Errorf("segments with the dictionary: %d bytes, without: %d", with, plain)
	}
}
