package history_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/polychain"
)

func logRoundTrip(t *testing.T, block uint64, logs []*chainquery.Log) []byte {
	t.Helper()
	return segmentRoundTrip(t, block, logs, history.AppendLogs, history.DecodeLogs,
		func(g, w *chainquery.Log) string {
			if g.BlockNumber != block || g.TransactionIndex != w.TransactionIndex || g.LogIndex != w.LogIndex ||
				g.Address != w.Address || !slices.Equal(g.Topics, w.Topics) && len(g.Topics)+len(w.Topics) > 0 || !bytes.Equal(g.Data, w.Data) {
				return "a field"
			}
			return ""
		})
}

// TestLogs_PolygonShaped round-trips the logs of Polygon-shaped blocks and
// bounds their size well under what the logs table takes a log
// (docs/benchmarks.md, "Disk per block").
func TestLogs_PolygonShaped(t *testing.T) {
	for _, d := range polygonBlocks(t, polychain.Config{Seed: 1, Blocks: 3}, polychain.KindParity) {
		n := d.Block.Number
		seg := logRoundTrip(t, n, d.Logs)
		per := float64(len(seg)) / float64(len(d.Logs))
		t.Logf("block %d: %d logs in %d bytes, %.1f a log", n, len(d.Logs), len(seg), per)
		if per > 80 {
			t.Errorf("block %d: %.1f bytes a log, want at most 80", n, per)
		}
	}
}

// TestLogs_Edges and rejections.
func TestLogs_Edges(t *testing.T) {
	logRoundTrip(t, 3, nil)
	a, b := chainquery.Address{1}, chainquery.Address{2}
	t0, t1 := chainquery.Hash{7}, chainquery.Hash{8}
	logRoundTrip(t, 3, []*chainquery.Log{
		{TransactionIndex: 0, LogIndex: 0, Address: a},
		{TransactionIndex: 0, LogIndex: 1, Address: b, Topics: []chainquery.Hash{t0, t1, t0, t1}, Data: []byte{1}},
		{TransactionIndex: 5, LogIndex: 9, Address: a, Topics: []chainquery.Hash{t1}},
	})
	for name, logs := range map[string][]*chainquery.Log{
		"five topics": {{Address: a, Topics: make([]chainquery.Hash, 5)}},
		"index order": {{LogIndex: 2, Address: a}, {LogIndex: 2, Address: a}},
		"tx order":    {{TransactionIndex: 2, LogIndex: 0}, {TransactionIndex: 1, LogIndex: 1}},
	} {
		if _, err := history.AppendLogs(nil, logs); !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
	traces, _ := history.AppendTraces(nil, nil)
	good, _ := history.AppendLogs(nil, []*chainquery.Log{{Address: a, Topics: []chainquery.Hash{t0}}})
	for name, b := range map[string][]byte{
		"a trace segment": traces,
		"truncated":       good[:len(good)-2],
		"no topics":       history.CompressForTest([]byte("cqL\x01\x01\x01" + string(a[:]) + "\x00\x00\x00\x00\x01\x00\x00")),
	} {
		if _, err := history.DecodeLogs(b, 1); !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzDecodeLogs: any bytes decode to logs or to ErrCorrupt, never a panic;
// what decodes encodes again to a segment that decodes the same. MatchLogs
// reads the same bytes without a panic too, and where both decode, keeping
// every log, it counts what DecodeLogs decodes.
func FuzzDecodeLogs(f *testing.F) {
	d := polygonBlocks(f, polychain.Config{Seed: 3, Blocks: 1, TxPerBlock: 5}, polychain.KindParity)[0]
	seg, _ := history.AppendLogs(nil, d.Logs)
	f.Add(seg)
	f.Add(history.CompressForTest([]byte("cqL\x01\x01\x01" + string(make([]byte, 20)) + "\x01" + string(make([]byte, 32)) + "\x00\x00\x00\x01\x00\x00")))
	f.Fuzz(func(t *testing.T, b []byte) {
		all, n, merr := history.MatchLogs(b, func(chainquery.Address, []chainquery.Hash) bool { return true })
		if merr != nil && !errors.Is(merr, history.ErrCorrupt) {
			t.Fatalf("MatchLogs: error %v is not ErrCorrupt", merr)
		}
		logs, err := history.DecodeLogs(b, 1)
		if err != nil {
			if !errors.Is(err, history.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if merr != nil || n != len(logs) || len(all) != len(logs) {
			t.Fatalf("MatchLogs kept %d of %d, %v; DecodeLogs decoded %d", len(all), n, merr, len(logs))
		}
		logRoundTrip(t, 1, logs)
	})
}

// TestMatchLogs checks MatchLogs against DecodeLogs on the same segment:
// the same logs match, at their positions, for filters on the address and
// on topics, and a corrupt segment is an error.
func TestMatchLogs(t *testing.T) {
	var logs []*chainquery.Log
	for i := range 50 {
		l := &chainquery.Log{BlockNumber: 7, TransactionIndex: i / 5, LogIndex: i, Address: chainquery.Address{byte(i % 3)}, Data: []byte{byte(i)}}
		for j := range i % 5 {
			l.Topics = append(l.Topics, chainquery.Hash{byte(j), byte(i % 4)})
		}
		logs = append(logs, l)
	}
	seg, err := history.AppendLogs(nil, logs)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := history.DecodeLogs(seg, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []chainquery.LogRangeFilter{
		{},
		{Addresses: []chainquery.Address{{1}}},
		{Topics: [4][]chainquery.Hash{{{0, 2}}, nil, {{2, 2}, {2, 3}}}},
		{Addresses: []chainquery.Address{{2}}, Topics: [4][]chainquery.Hash{3: {{3, 1}}}},
	} {
		var want []int
		for i, l := range decoded {
			if f.Matches(l) {
				want = append(want, i)
			}
		}
		got, n, err := history.MatchLogs(seg, func(a chainquery.Address, topics []chainquery.Hash) bool {
			return f.Matches(&chainquery.Log{Address: a, Topics: topics})
		})
		if err != nil || n != len(logs) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%+v: positions %v of %d, %v; want %v of %d", f, got, n, err, want, len(logs))
		}
	}
	if _, _, err := history.MatchLogs(seg[:len(seg)/2], func(chainquery.Address, []chainquery.Hash) bool { return true }); err == nil {
		t.Error("a cut segment matched without an error")
	}
}
