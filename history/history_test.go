package history_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/big"
	"slices"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/polychain"
)

// sameTrace reports how a and b differ in the fields a segment holds ("" if
// they do not); nil and empty byte strings and trace addresses are the same,
// as the API writes them the same.
func sameTrace(a, b *chainquery.Trace) string {
	switch {
	case a.BlockNumber != b.BlockNumber, a.TransactionIndex != b.TransactionIndex:
		return "place"
	case !slices.Equal(a.TraceAddress, b.TraceAddress) && len(a.TraceAddress)+len(b.TraceAddress) > 0:
		return "trace address"
	case a.Type != b.Type, a.CallType != b.CallType:
		return "type"
	case a.From != b.From, (a.To == nil) != (b.To == nil), a.To != nil && *a.To != *b.To:
		return "addresses"
	case a.Gas != b.Gas, a.GasUsed != b.GasUsed, a.Subtraces != b.Subtraces:
		return "numbers"
	case (a.Value == nil) != (b.Value == nil), a.Value != nil && a.Value.Cmp(b.Value) != 0:
		return "value"
	case a.Error != b.Error:
		return "error"
	case !bytes.Equal(a.Input, b.Input), !bytes.Equal(a.Output, b.Output):
		return "input or output"
	}
	return ""
}

// frameOnly is t with the fields a store joins from the block and the
// transaction left zero, as DecodeTraces returns them.
func frameOnly(t *chainquery.Trace) *chainquery.Trace {
	c := *t
	c.Timestamp, c.TransactionHash, c.TransactionFrom, c.TransactionTo, c.TransactionStatus, c.Version = 0, chainquery.Hash{}, chainquery.Address{}, nil, false, 0
	return &c
}

func roundTrip(t *testing.T, block uint64, traces []*chainquery.Trace) []byte {
	t.Helper()
	return segmentRoundTrip(t, block, traces, history.AppendTraces, history.DecodeTraces,
		func(got, want *chainquery.Trace) string {
			if got.BlockNumber != block {
				return "block"
			}
			return sameTrace(got, frameOnly(want))
		})
}

// TestTraces_PolygonShaped round-trips the traces of Polygon-shaped blocks
// from both trace dialects, and bounds their size well under what a trace
// takes as a row with its two address index entries (docs/benchmarks.md,
// "Disk per block").
func TestTraces_PolygonShaped(t *testing.T) {
	for _, kind := range []polychain.Kind{polychain.KindParity, polychain.KindCallTracer} {
		for _, d := range polygonBlocks(t, polychain.Config{Seed: 1, Blocks: 3}, kind) {
			n := d.Block.Number
			seg := roundTrip(t, n, d.Traces)
			per := float64(len(seg)) / float64(len(d.Traces))
			t.Logf("block %d: %d traces in %d bytes, %.1f a trace", n, len(d.Traces), len(seg), per)
			if per > 100 {
				t.Errorf("block %d: %.1f bytes a trace, want at most 100", n, per)
			}
		}
	}
}

// TestTraces_Edges: an empty block, a failed creation (no recipient), a
// frame without value, a value over 2^64, repeated errors, deep trace
// addresses.
func TestTraces_Edges(t *testing.T) {
	roundTrip(t, 7, nil)
	a, b := chainquery.Address{1}, chainquery.Address{2}
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	traces := []*chainquery.Trace{
		{BlockNumber: 7, TransactionIndex: 0, TraceAddress: []int{}, Type: chainquery.TraceCreate, CallType: chainquery.CallTypeCreate, From: a, Gas: 1, Value: big.NewInt(0), Error: "out of gas"},
		{BlockNumber: 7, TransactionIndex: 0, TraceAddress: []int{0}, Type: chainquery.TraceCall, CallType: chainquery.CallTypeDelegateCall, From: a, To: &b, Value: nil, Error: "out of gas", Input: []byte{1, 2}},
		{BlockNumber: 7, TransactionIndex: 3, TraceAddress: []int{0, 1, 2, 3, 4, 5, 6, 7}, Type: chainquery.TraceSuicide, CallType: chainquery.CallTypeCall, From: b, To: &a, Value: huge, Subtraces: 0, Output: []byte{9}},
		{BlockNumber: 7, TransactionIndex: 3, TraceAddress: []int{1}, Type: chainquery.TraceCall, CallType: chainquery.CallTypeStaticCall, From: b, To: &b, Value: big.NewInt(1), Subtraces: 3, Error: "execution reverted", Gas: 1 << 62, GasUsed: 1 << 40},
	}
	roundTrip(t, 7, traces)
}

// TestTraces_Rejected: what a segment cannot hold is refused on encoding,
// and bytes it did not write are refused on decoding, never a panic.
func TestTraces_Rejected(t *testing.T) {
	a := chainquery.Address{1}
	for name, tr := range map[string][]*chainquery.Trace{
		"type":      {{Type: "call2", CallType: chainquery.CallTypeCall, From: a}},
		"call type": {{Type: chainquery.TraceCall, CallType: "callcode", From: a}},
		"order":     {{TransactionIndex: 2, Type: chainquery.TraceCall, CallType: chainquery.CallTypeCall}, {TransactionIndex: 1, Type: chainquery.TraceCall, CallType: chainquery.CallTypeCall}},
		"value":     {{Type: chainquery.TraceCall, CallType: chainquery.CallTypeCall, Value: big.NewInt(-1)}},
		"address":   {{Type: chainquery.TraceCall, CallType: chainquery.CallTypeCall, TraceAddress: []int{-1}}},
	} {
		if _, err := history.AppendTraces(nil, tr); !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
	d := polygonBlocks(t, polychain.Config{Seed: 1, Blocks: 3}, polychain.KindParity)[0]
	seg, err := history.AppendTraces(nil, d.Traces)
	if err != nil {
		t.Fatal(err)
	}
	posts, _ := history.AppendPostings(nil, []history.Posting{{1, 0, 0}})
	for name, b := range map[string][]byte{
		"empty":      nil,
		"truncated":  seg[:len(seg)/2],
		"flipped":    flip(seg, len(seg)/3),
		"postings":   posts,
		"plain zstd": mustSegmentOf(t, []byte("cqT\x02\x00")), // a version this binary does not read
	} {
		if _, err := history.DecodeTraces(b, 1); !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x55
	return c
}

// mustSegmentOf compresses raw as a segment is compressed, through the
// package's own encoder: an empty trace segment has the same framing.
func mustSegmentOf(t *testing.T, raw []byte) []byte {
	t.Helper()
	return history.CompressForTest(raw)
}

// TestPostings round-trips posting lists, and lists made of several
// appended one after the other, and refuses unsorted or damaged ones.
func TestPostings(t *testing.T) {
	lists := [][]history.Posting{
		nil,
		{{0, 0, 0}},
		{{65000000, 3, 0}, {65000000, 3, 1}, {65000000, 7, 2}, {65000001, 0, 5}, {66000000, 99, 4000}},
		{{1<<63 + 5, 1<<32 - 1, 1<<32 - 1}},
	}
	var hot []history.Posting // a hot contract: a trace in most transactions of 100 blocks
	for b := uint64(65000000); b < 65000100; b++ {
		for tx := uint32(0); tx < 100; tx += 2 {
			hot = append(hot, history.Posting{Block: b, Tx: tx, Pos: 1})
		}
	}
	lists = append(lists, hot)
	for _, ps := range lists {
		b, err := history.AppendPostings(nil, ps)
		if err != nil {
			t.Fatal(err)
		}
		got, err := history.DecodePostings(b)
		if err != nil || !slices.Equal(got, ps) && len(got)+len(ps) > 0 {
			t.Fatalf("%v: got %v, %v", ps, got, err)
		}
	}
	// A list appended to: the bytes of lists of later postings after it.
	var runs []byte
	var all []history.Posting
	for _, part := range [][]history.Posting{lists[2][:2], lists[2][2:4], lists[2][4:]} {
		b, _ := history.AppendPostings(nil, part)
		runs, all = append(runs, b...), append(all, part...)
	}
	if got, err := history.DecodePostings(runs); err != nil || !slices.Equal(got, all) {
		t.Fatalf("runs: got %v, %v; want %v", got, err, all)
	}
	hb, _ := history.AppendPostings(nil, hot)
	t.Logf("hot list: %d entries in %d bytes, %.1f an entry", len(hot), len(hb), float64(len(hb))/float64(len(hot)))
	if per := float64(len(hb)) / float64(len(hot)); per > 3.1 {
		t.Errorf("%.1f bytes an entry of a hot list, want at most 3", per)
	}
	for name, ps := range map[string][]history.Posting{
		"repeat":  {{1, 2, 3}, {1, 2, 3}},
		"back":    {{2, 0, 0}, {1, 0, 0}},
		"tx back": {{1, 5, 0}, {1, 4, 9}},
	} {
		if _, err := history.AppendPostings(nil, ps); !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
	good, _ := history.AppendPostings(nil, lists[2])
	earlier, _ := history.AppendPostings(nil, lists[2][:1])
	for name, b := range map[string][]byte{
		"run back":  append(bytes.Clone(good), earlier...), // a run before the one it follows
		"truncated": good[:len(good)-1],
		"trailing":  append(bytes.Clone(good), 0),
		"count":     append([]byte{0xff, 0xff, 0x03}, good[1:]...),
		"repeat":    {2, 6, 1, 0, 0, 0, 0, 0}, // two entries, the second the first again
		"short run": {2, 5, 1, 0, 0, 0, 0},    // fewer bytes than two entries take
		"long run":  {1, 4, 1, 0, 0, 0},       // a byte left after the run's entry
	} {
		if _, err := history.DecodePostings(b); !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
}

// TestWholeRuns: the start of a list cut at any byte is, through
// WholeRuns, a list of its first entries, all of them when nothing is cut,
// and at least the entries of the runs the cut leaves whole.
func TestWholeRuns(t *testing.T) {
	var hot []history.Posting
	for b := uint64(65000000); b < 65000020; b++ {
		for tx := uint32(0); tx < 100; tx += 3 {
			hot = append(hot, history.Posting{Block: b, Tx: tx, Pos: tx % 5})
		}
	}
	var runs []byte // a list appended to: runs of fewer entries
	for i := 0; i < len(hot); i += 50 {
		b, _ := history.AppendPostings(nil, hot[i:min(i+50, len(hot))])
		runs = append(runs, b...)
	}
	whole, _ := history.AppendPostings(nil, hot)
	empty, _ := history.AppendPostings(nil, nil)
	for name, list := range map[string][]byte{"whole": whole, "appended": runs, "empty": empty} {
		best := 0
		for cut := 0; cut <= len(list); cut++ {
			got, err := history.DecodePostings(history.WholeRuns(slices.Clip(list[:cut])))
			if err != nil || len(got) > 0 && !slices.Equal(got, hot[:len(got)]) {
				t.Fatalf("%s cut at %d of %d: %d entries, %v", name, cut, len(list), len(got), err)
			}
			if len(got) < best {
				t.Fatalf("%s cut at %d: %d entries, %d at a shorter cut", name, cut, len(got), best)
			}
			best = len(got)
			if cut == len(list) && (len(got) != len(hot) && name != "empty" || name == "empty" && len(got) != 0) {
				t.Fatalf("%s uncut: %d entries of %d", name, len(got), len(hot))
			}
			if cut == len(list)-1 && name == "whole" && len(got) < len(hot)-history.RunEntries {
				t.Fatalf("%s cut in its last run: %d entries of %d", name, len(got), len(hot))
			}
		}
	}
}

// TestPostingRanges: counts and pages of a range of blocks read from a
// list's runs agree with the list decoded whole, for a hot contract's list
// (thousands of entries, runs of RunEntries) and one appended to in
// pieces, over ranges that start and end inside runs, between them, before
// and after the list.
func TestPostingRanges(t *testing.T) {
	var hot []history.Posting
	for b := uint64(1000); b < 1100; b++ {
		for tx := uint32(0); tx < 90; tx++ {
			if (b*7+uint64(tx))%3 != 0 {
				hot = append(hot, history.Posting{Block: b, Tx: tx, Pos: tx % 4})
			}
		}
	}
	whole, _ := history.AppendPostings(nil, hot)
	var pieces []byte
	for i := 0; i < len(hot); i += 700 {
		b, _ := history.AppendPostings(nil, hot[i:min(len(hot), i+700)])
		pieces = append(pieces, b...)
	}
	sparse := []history.Posting{{5, 0, 0}, {900, 3, 1}, {1000, 0, 0}, {1050, 2, 2}, {5000, 1, 1}}
	few, _ := history.AppendPostings(nil, sparse)
	for name, c := range map[string]struct {
		list []byte
		ps   []history.Posting
	}{"hot": {whole, hot}, "pieces": {pieces, hot}, "sparse": {few, sparse}} {
		for _, r := range [][2]uint64{{0, 10000}, {1000, 1099}, {1013, 1047}, {1050, 1050}, {0, 999}, {1100, 2000},
			{1037, 1100}, {900, 1001}, {1099, 1099}, {6, 899}} {
			lo, hi := r[0], r[1]
			var want []history.Posting
			for _, p := range c.ps {
				if p.Block >= lo && p.Block <= hi {
					want = append(want, p)
				}
			}
			if n, err := history.CountPostings(c.list, lo, hi); err != nil || n != len(want) {
				t.Errorf("%s: count of %d to %d = %d, %v; want %d", name, lo, hi, n, err, len(want))
			}
			pr := history.NewPostingReader(c.list)
			pr.SkipBefore(lo)
			var got []history.Posting
			for p, ok := pr.Next(); ok && p.Block <= hi; p, ok = pr.Next() {
				if p.Block >= lo {
					got = append(got, p)
				}
			}
			if err := pr.Err(); err != nil || !slices.Equal(got, want) {
				t.Errorf("%s: page of %d to %d: %d entries, %v; want %d", name, lo, hi, len(got), err, len(want))
			}
		}
		// Skip passes whole runs and single entries alike.
		for _, k := range []int{0, 1, 5, 63, 64, 65, 100, 128, 200, len(c.ps) - 1, len(c.ps), len(c.ps) + 5} {
			pr := history.NewPostingReader(c.list)
			for i := 0; i < 3 && i < k; i++ { // inside the first run, then Skip
				pr.Next()
			}
			passed := min(3, k) + pr.Skip(k-min(3, k))
			if want := min(k, len(c.ps)); passed != want {
				t.Errorf("%s: skip %d passed %d, want %d", name, k, passed, want)
			}
			p, ok := pr.Next()
			if k < len(c.ps) && (!ok || p != c.ps[k]) || k >= len(c.ps) && ok {
				t.Errorf("%s: after skipping %d: %+v, %v; want %+v", name, k, p, ok, c.ps[min(k, len(c.ps)-1)])
			}
			if err := pr.Err(); err != nil {
				t.Errorf("%s: skip %d: %v", name, k, err)
			}
		}
	}
	if per := float64(len(whole)) / float64(len(hot)); per > 3.1 {
		t.Errorf("%.2f bytes an entry of a hot list in runs, want at most 3.1", per)
	}
}

// FuzzDecodeTraces: any bytes decode to traces or to ErrCorrupt, never a
// panic; what decodes encodes again to a segment that decodes the same.
func FuzzDecodeTraces(f *testing.F) {
	d := polygonBlocks(f, polychain.Config{Seed: 3, Blocks: 1, TxPerBlock: 5}, polychain.KindCallTracer)[0]
	seg, _ := history.AppendTraces(nil, d.Traces)
	f.Add(seg)
	f.Add(history.CompressForTest([]byte("cqT\x01\x01\x01\x00\x00\x00")))
	f.Add(history.CompressForTest([]byte("cqT\x01\x00\x00\x00")))
	f.Fuzz(func(t *testing.T, b []byte) {
		traces, err := history.DecodeTraces(b, 1)
		if err != nil {
			if !errors.Is(err, history.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		roundTrip(t, 1, traces)
	})
}

// FuzzDecodePostings: any bytes decode to a list in chain order or to
// ErrCorrupt; what decodes encodes back to a list of the same postings, in
// the same bytes when they were one run.
func FuzzDecodePostings(f *testing.F) {
	b, _ := history.AppendPostings(nil, []history.Posting{{5, 1, 0}, {5, 1, 3}, {5, 2, 0}, {9, 0, 0}})
	f.Add(b)
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := history.DecodePostings(b)
		if err != nil {
			if !errors.Is(err, history.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, err := history.AppendPostings(nil, ps)
		if err != nil {
			t.Fatalf("decoded %v, which does not encode: %v", ps, err)
		}
		if back, err := history.DecodePostings(again); err != nil || !slices.Equal(back, ps) {
			t.Fatalf("%v encodes to %x, which decodes to %v, %v", ps, again, back, err)
		}
		if len(ps) <= history.RunEntries {
			if n, _ := binary.Uvarint(b); n == uint64(len(ps)) && !bytes.Equal(again, b) {
				t.Fatalf("%x decodes to %v in one run, which encodes to %x", b, ps, again)
			}
		}
		// Counts and pages from the runs agree with the whole list.
		if len(ps) > 0 {
			lo, hi := ps[len(ps)/3].Block, ps[2*len(ps)/3].Block
			want := 0
			for _, p := range ps {
				if p.Block >= lo && p.Block <= hi {
					want++
				}
			}
			if n, err := history.CountPostings(b, lo, hi); err != nil || n != want {
				t.Fatalf("%x: count of %d to %d = %d, %v; want %d", b, lo, hi, n, err, want)
			}
			pr := history.NewPostingReader(b)
			pr.SkipBefore(lo)
			got := 0
			for p, ok := pr.Next(); ok && p.Block <= hi; p, ok = pr.Next() {
				if p.Block >= lo {
					got++
				}
			}
			if got != want {
				t.Fatalf("%x: page of %d to %d holds %d entries, want %d", b, lo, hi, got, want)
			}
		}
	})
}
