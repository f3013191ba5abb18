package chainquery_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// The stores are not asked anything before Next: the constructors only
// check the filter and the cursor, so these tests give none.

func TestExportCursor(t *testing.T) {
	from, to := uint64(10), uint64(5000) // longer than a filter's 100 blocks: an export reads any range
	a, b := chainquery.Address{1}, chainquery.Address{2}
	f := chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &from, ToBlock: &to, ToAddresses: []chainquery.Address{a, b}}
	e, err := chainquery.NewTraceExport(nil, f, "")
	if err != nil {
		t.Fatal(err)
	}
	cursor := e.Cursor()
	if _, err := base64.RawURLEncoding.DecodeString(cursor); err != nil || strings.ContainsAny(cursor, "=+/") {
		t.Fatalf("cursor %q is not unpadded base64url", cursor)
	}

	t.Run("OK", func(t *testing.T) {
		// The same filter written otherwise: addresses in another order.
		g := f
		g.ToAddresses = []chainquery.Address{b, a}
		if _, err := chainquery.NewTraceExport(nil, g, cursor); err != nil {
			t.Fatalf("the cursor of an equal filter: %v", err)
		}
		// A datetime in another zone is the same instant.
		t0, t1 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)
		z0, z1 := t0.In(time.FixedZone("", 2*3600)), t1.In(time.FixedZone("", -5*3600))
		l := chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromTime: &t0, ToTime: &t1}
		le, err := chainquery.NewLogExport(nil, l, "")
		if err != nil {
			t.Fatal(err)
		}
		l.FromTime, l.ToTime = &z0, &z1
		if _, err := chainquery.NewLogExport(nil, l, le.Cursor()); err != nil {
			t.Fatalf("the cursor of an equal datetime range: %v", err)
		}
	})

	t.Run("ErrOtherFilter", func(t *testing.T) {
		other := to + 1
		for name, g := range map[string]chainquery.TraceFilter{
			"range":   {Chain: f.Chain, FromBlock: &from, ToBlock: &other, ToAddresses: f.ToAddresses},
			"address": {Chain: f.Chain, FromBlock: &from, ToBlock: &to, ToAddresses: []chainquery.Address{a}},
			"side":    {Chain: f.Chain, FromBlock: &from, ToBlock: &to, FromAddresses: f.ToAddresses},
			"chain":   {Chain: chainquery.Ethereum, FromBlock: &from, ToBlock: &to, ToAddresses: f.ToAddresses},
		} {
			_, err := chainquery.NewTraceExport(nil, g, cursor)
			if chainquery.ErrorCode(err) != chainquery.EINVALID || !strings.Contains(chainquery.ErrorMessage(err), "cursor does not belong to this filter") {
				t.Errorf("%s: %v, want EINVALID: cursor does not belong to this filter", name, err)
			}
		}
		// A cursor of the logs of the same range is not one of its traces.
		l := chainquery.LogRangeFilter{Chain: f.Chain, FromBlock: &from, ToBlock: &to, Addresses: f.ToAddresses}
		if _, err := chainquery.NewLogExport(nil, l, cursor); chainquery.ErrorCode(err) != chainquery.EINVALID {
			t.Errorf("a traces cursor for logs: %v, want EINVALID", err)
		}
	})

	t.Run("ErrMalformed", func(t *testing.T) {
		raw, _ := base64.RawURLEncoding.DecodeString(cursor)
		enc := base64.RawURLEncoding.EncodeToString
		version := append([]byte{9}, raw[1:]...)
		huge := append(append([]byte{}, raw[:9]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0)
		for name, c := range map[string]string{
			"not base64":     "not a cursor!",
			"padded":         cursor + "==",
			"short":          enc(raw[:5]),
			"no counts":      enc(raw[:9]),
			"trailing":       enc(append(append([]byte{}, raw...), 0)),
			"version":        enc(version),
			"block > 2^63-1": enc(huge),
		} {
			_, err := chainquery.NewTraceExport(nil, f, c)
			if chainquery.ErrorCode(err) != chainquery.EINVALID || !strings.HasPrefix(chainquery.ErrorMessage(err), "cursor is malformed") {
				t.Errorf("%s (%q): %v, want EINVALID: cursor is malformed", name, c, err)
			}
		}
	})
}

// TestExportValidate: an export takes its filter endpoint's rules but the
// length of a range.
func TestExportValidate(t *testing.T) {
	n := func(v uint64) *uint64 { return &v }
	for _, c := range []struct {
		name string
		f    chainquery.LogRangeFilter
		want string // "" for none
	}{
		{"LongUnkeyed", chainquery.LogRangeFilter{FromBlock: n(0), ToBlock: n(1_000_000)}, ""},
		{"ErrReversed", chainquery.LogRangeFilter{FromBlock: n(10), ToBlock: n(9)}, "to_block must be at least from_block"},
		{"ErrOneEnd", chainquery.LogRangeFilter{FromBlock: n(10)}, "to_block is required with from_block"},
		{"ErrTopics", chainquery.LogRangeFilter{FromBlock: n(10), ToBlock: n(10), Topics: [4][]chainquery.Hash{nil, make([]chainquery.Hash, 11)}}, "topic1 must have at most 10 values"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.f.Chain = chainquery.Polygon
			_, err := chainquery.NewLogExport(nil, c.f, "")
			if got := chainquery.ErrorMessage(err); got != c.want {
				t.Errorf("%q, want %q", got, c.want)
			}
			tf := chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: c.f.FromBlock, ToBlock: c.f.ToBlock}
			_, err = chainquery.NewTraceExport(nil, tf, "")
			if got := chainquery.ErrorMessage(err); c.name != "ErrTopics" && got != c.want {
				t.Errorf("traces: %q, want %q", got, c.want)
			}
		})
	}
}
