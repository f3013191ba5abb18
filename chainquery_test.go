package chainquery_test

import (
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

func TestCompareTraceAddress(t *testing.T) {
	// The order docs/api.md gives (Filter Traces, "Order"), each strictly before the next.
	order := []string{"", "0", "0.1", "0.2", "0.10", "0.10.0", "1", "2", "10"}
	for i := range order {
		for j := range order {
			a, _ := chainquery.ParseTraceAddress(order[i])
			b, _ := chainquery.ParseTraceAddress(order[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := chainquery.CompareTraceAddress(a, b); got != want {
				t.Errorf("compare(%q, %q) = %d, want %d", order[i], order[j], got, want)
			}
		}
		if a, _ := chainquery.ParseTraceAddress(order[i]); chainquery.FormatTraceAddress(a) != order[i] {
			t.Errorf("round trip of %q gave %q", order[i], chainquery.FormatTraceAddress(a))
		}
	}
	for _, bad := range []string{".", "0.", "a", "-1", "0..1"} {
		if _, err := chainquery.ParseTraceAddress(bad); err == nil {
			t.Errorf("ParseTraceAddress(%q) accepted", bad)
		}
	}
}

func TestTraceFilterValidate(t *testing.T) {
	n := func(v uint64) *uint64 { return &v }
	tm := func(s string) *time.Time { v, _ := time.Parse(time.RFC3339, s); return &v }
	addrs := make([]chainquery.Address, 11)
	for i := range addrs {
		addrs[i][0] = byte(i)
	}
	for _, c := range []struct {
		name string
		f    chainquery.TraceFilter
		err  string // substring of the message; "" for valid
	}{
		{"Blocks", chainquery.TraceFilter{FromBlock: n(10), ToBlock: n(109)}, ""},
		{"OneBlock", chainquery.TraceFilter{FromBlock: n(10), ToBlock: n(10)}, ""},
		{"Times", chainquery.TraceFilter{FromTime: tm("2025-01-01T00:00:00Z"), ToTime: tm("2025-01-01T00:00:00Z")}, ""},
		{"101Blocks", chainquery.TraceFilter{FromBlock: n(10), ToBlock: n(110)}, "must not exceed 100 blocks"},
		{"Both", chainquery.TraceFilter{FromBlock: n(1), ToBlock: n(2), FromTime: tm("2025-01-01T00:00:00Z"), ToTime: tm("2025-01-02T00:00:00Z")}, "not both"},
		{"Neither", chainquery.TraceFilter{}, "exactly one range"},
		{"FromBlockOnly", chainquery.TraceFilter{FromBlock: n(1)}, "to_block is required"},
		{"ToBlockOnly", chainquery.TraceFilter{ToBlock: n(1)}, "from_block is required"},
		{"FromTimeOnly", chainquery.TraceFilter{FromTime: tm("2025-01-01T00:00:00Z")}, "to_datetime is required"},
		{"ToTimeOnly", chainquery.TraceFilter{ToTime: tm("2025-01-01T00:00:00Z")}, "from_datetime is required"},
		{"BlocksReversed", chainquery.TraceFilter{FromBlock: n(5), ToBlock: n(4)}, "to_block must be at least from_block"},
		{"TimesReversed", chainquery.TraceFilter{FromTime: tm("2025-01-02T00:00:00Z"), ToTime: tm("2025-01-01T00:00:00Z")}, "to_datetime must be at least from_datetime"},
		{"ElevenFrom", chainquery.TraceFilter{FromBlock: n(1), ToBlock: n(1), FromAddresses: addrs}, "from_address"},
		{"ElevenTo", chainquery.TraceFilter{FromBlock: n(1), ToBlock: n(1), ToAddresses: addrs}, "to_address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.f.Validate()
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if chainquery.ErrorCode(err) != chainquery.EINVALID || !strings.Contains(chainquery.ErrorMessage(err), c.err) {
				t.Fatalf("err = %v, want EINVALID containing %q", err, c.err)
			}
		})
	}
}

func TestParseQueryValues(t *testing.T) {
	for _, c := range []struct {
		limit, offset string
		ok            bool
		want          chainquery.Page
	}{
		{"", "", true, chainquery.Page{Offset: 0, Limit: 10}},
		{"1", "0", true, chainquery.Page{Offset: 0, Limit: 1}},
		{"50", "1000000", true, chainquery.Page{Offset: 1000000, Limit: 50}},
		{"0", "", false, chainquery.Page{}},
		{"51", "", false, chainquery.Page{}},
		{"ten", "", false, chainquery.Page{}},
		{"", "-1", false, chainquery.Page{}},
		{"", "1.5", false, chainquery.Page{}},
		{"", "9223372036854775807", true, chainquery.Page{Offset: chainquery.MaxOffset, Limit: 10}},
		{"", "9223372036854775808", false, chainquery.Page{}},
		{"", "+1", false, chainquery.Page{}},
		{"", "-0", false, chainquery.Page{}},
		{"+5", "", false, chainquery.Page{}},
	} {
		p, err := chainquery.ParsePage(c.limit, c.offset)
		if c.ok != (err == nil) || c.ok && p != c.want {
			t.Errorf("ParsePage(%q, %q) = %+v, %v", c.limit, c.offset, p, err)
		}
	}
	for s, want := range map[string]bool{"true": true, "TRUE": true, "True": true, "1": true, "false": false, "FaLsE": false, "0": false} {
		if got, err := chainquery.ParseBool("b", s); err != nil || got != want {
			t.Errorf("ParseBool(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "yes", "2", "t", "truee"} {
		if _, err := chainquery.ParseBool("full_transactions", s); !strings.Contains(chainquery.ErrorMessage(err), "full_transactions") {
			t.Errorf("ParseBool(%q) err = %v", s, err)
		}
	}
	for _, s := range []string{"-1", "-0", "1.0", "1e3", "0x10", "", " 1", "+1", "9223372036854775808", "99999999999999999999"} {
		const want = "block_number must be an integer between 0 and 9223372036854775807"
		if _, err := chainquery.ParseBlockNumber("block_number", s); chainquery.ErrorMessage(err) != want {
			t.Errorf("ParseBlockNumber(%q) err = %v, want %q", s, err, want)
		}
	}
	if n, err := chainquery.ParseBlockNumber("block_number", "9223372036854775807"); err != nil || n != chainquery.MaxBlockNumber {
		t.Errorf("ParseBlockNumber(2^63-1) = %d, %v", n, err)
	}
}

func TestParseHexAndBase58(t *testing.T) {
	good := "0x" + strings.Repeat("Ab", 32)
	h, err := chainquery.ParseHash("transaction_hash", good)
	if err != nil || h.Hex() != strings.ToLower(good) {
		t.Fatalf("ParseHash = %s, %v", h.Hex(), err)
	}
	for _, s := range []string{good[:65], good + "0", "0X" + good[2:], strings.Replace(good, "A", "g", 1), good[2:] + "00"} {
		if _, err := chainquery.ParseHash("transaction_hash", s); err == nil {
			t.Errorf("ParseHash(%q) accepted", s)
		}
	}
	if _, err := chainquery.ParseAddress("from_address", "0x"+strings.Repeat("F", 40)); err != nil {
		t.Fatal(err)
	}
	// The interface's pattern is ^0x[a-fA-F0-9]{40}$: digits in any case,
	// the x lowercase only.
	if _, err := chainquery.ParseAddress("from_address", "0X"+strings.Repeat("f", 40)); chainquery.ErrorCode(err) != chainquery.EINVALID {
		t.Fatalf("ParseAddress(0X...) err = %v, want EINVALID", err)
	}
	usdc := "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	k, err := chainquery.ParsePublicKey("token_account", usdc)
	if err != nil || k.String() != usdc {
		t.Fatalf("base58 round trip: %s, %v", k, err)
	}
	var zero chainquery.PublicKey
	if s := zero.String(); s != strings.Repeat("1", 32) {
		t.Fatalf("zero key = %s", s)
	}
	for _, s := range []string{usdc[:31], usdc + "1234", "0" + usdc[1:], "I" + usdc[1:], strings.Repeat("z", 44)} {
		if _, err := chainquery.ParsePublicKey("token_account", s); !strings.Contains(chainquery.ErrorMessage(err), "token_account") {
			t.Errorf("ParsePublicKey(%q) err = %v", s, err)
		}
	}
}

func TestDatetimes(t *testing.T) {
	now := time.Date(2025, 6, 1, 14, 0, 0, 0, time.UTC)
	for s, ok := range map[string]bool{
		"2025-06-01T13:00:00Z":      true,
		"2025-06-01T12:50:00+02:00": true,  // 10:50 UTC
		"2025-06-01T15:00:00+02:00": true,  // 13:00 UTC: exactly an hour ago
		"2025-06-01T13:10:00Z":      false, // within the last hour
		"2025-06-02T00:00:00Z":      false, // future
		"2025-06-01T12:05:00Z":      false, // off the grid
		"2025-06-01T12:00:30Z":      false,
		"2025-06-01T12:00:00":       false, // no zone
		"2025-06-01 12:00:00Z":      false,
		"2025-06-01T12:00:00.000Z":  false,
	} {
		_, err := chainquery.ParseSnapshotTime(s, now)
		if ok != (err == nil) {
			t.Errorf("ParseSnapshotTime(%q) err = %v", s, err)
		}
	}
	// The time a 400 suggests is one the API takes.
	for _, now := range []time.Time{now, now.Add(7*time.Minute + 13*time.Second + 5), now.Add(-time.Second)} {
		_, err := chainquery.ParseSnapshotTime(now.Truncate(10*time.Minute).Format(time.RFC3339), now)
		msg := chainquery.ErrorMessage(err)
		suggested := regexp.MustCompile(`use (\S+) or earlier`).FindStringSubmatch(msg)
		if suggested == nil {
			t.Fatalf("no suggestion in %q", msg)
		}
		if _, err := chainquery.ParseSnapshotTime(suggested[1], now); err != nil {
			t.Errorf("at %s the suggested %s is refused: %v", now, suggested[1], err)
		}
	}
	for s, ok := range map[string]bool{
		"2025-01-01T00:00:00Z": true, "2025-01-01T00:00:00.5Z": true, "2025-01-01T02:00:00+02:00": true,
		"2025-01-01T00:00:00": false, "2025-01-01": false, "2025-01-01t00:00:00z": false, "2025-13-01T00:00:00Z": false,
	} {
		if _, err := chainquery.ParseDatetime("from_datetime", s); ok != (err == nil) {
			t.Errorf("ParseDatetime(%q) err = %v", s, err)
		}
	}
	if got := chainquery.FormatDatetime(1740787200); got != "2025-03-01T00:00:00" {
		t.Errorf("FormatDatetime = %s", got)
	}
}

func TestFormatUnits(t *testing.T) {
	for _, c := range []struct {
		amount   uint64
		decimals int
		want     string
	}{
		{12956933, 6, "12.956933"}, {12000000, 6, "12"}, {500000, 6, "0.5"}, {1, 9, "0.000000001"},
		{0, 6, "0"}, {7, 0, "7"}, {18446744073709551615, 6, "18446744073709.551615"},
	} {
		if got := chainquery.FormatUnits(c.amount, c.decimals); got != c.want {
			t.Errorf("FormatUnits(%d, %d) = %s, want %s", c.amount, c.decimals, got, c.want)
		}
	}
}

func TestEndpointsAndChains(t *testing.T) {
	all, err := chainquery.ParseEndpoints("all")
	if err != nil || len(all) != len(chainquery.Endpoints) || len(all) != 15 {
		t.Fatalf("all = %v, %v", all, err)
	}
	got, err := chainquery.ParseEndpoints("get_block, filter_traces,get_block")
	if err != nil || len(got) != 2 || got[0] != chainquery.EndpointFilterTraces {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := chainquery.ParseEndpoints("get_blocks"); err == nil {
		t.Fatal("unknown endpoint accepted")
	}
	if _, err := chainquery.ParseChain(chainquery.EndpointTokenBalanceByAccount, "ethereum"); !strings.Contains(chainquery.ErrorMessage(err), "solana") {
		t.Fatalf("err = %v", err)
	}
	for _, c := range chainquery.EVMChains {
		if _, err := chainquery.ParseChain(chainquery.EndpointGetLatestBlock, string(c)); err != nil {
			t.Fatal(err)
		}
		if id := c.ID(); id == 0 {
			t.Fatalf("%s has no chain id", c)
		} else if back, _ := chainquery.ChainByID(id); back != c {
			t.Fatalf("ChainByID(%d) = %s", id, back)
		}
	}
}

func TestAPIKey(t *testing.T) {
	key, hash := chainquery.NewAPIKey()
	other, _ := chainquery.NewAPIKey()
	if !strings.HasPrefix(key, chainquery.APIKeyPrefix) || key == other || len(key) < 40 {
		t.Fatalf("key %q", key)
	}
	k := &chainquery.APIKey{Hash: hash, Endpoints: []chainquery.Endpoint{chainquery.EndpointGetBlock}}
	if !k.Matches(chainquery.HashAPIKey(key)) || k.Matches(chainquery.HashAPIKey(other)) {
		t.Fatal("Matches")
	}
	if !k.Allows(chainquery.EndpointGetBlock) || k.Allows(chainquery.EndpointFilterTraces) {
		t.Fatal("Allows")
	}
}

// TestAPIKeyUpdate: Apply replaces the limits an update sets and keeps the
// others; Validate refuses a negative or non-finite limit that it sets.
func TestAPIKeyUpdate(t *testing.T) {
	rate, burst := 3.5, 0
	u := chainquery.APIKeyUpdate{Rate: &rate, Burst: &burst}
	l := chainquery.KeyLimits{Rate: 1, Burst: 2, CostRate: 3, CostBurst: 4, Concurrency: 5}
	if got, want := u.Apply(l), (chainquery.KeyLimits{Rate: 3.5, Burst: 0, CostRate: 3, CostBurst: 4, Concurrency: 5}); got != want {
		t.Fatalf("Apply = %+v, want %+v", got, want)
	}
	if err := u.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	negative, inf := -1, math.Inf(1)
	for _, u := range []chainquery.APIKeyUpdate{{Concurrency: &negative}, {CostBurst: &inf}} {
		if err := u.Validate(); chainquery.ErrorCode(err) != chainquery.EINVALID {
			t.Errorf("Validate(%+v) = %v, want EINVALID", u, err)
		}
	}
}

func TestLogRangeFilter(t *testing.T) {
	from, to := time.Unix(1000, 0), time.Unix(5000, 0)
	f := chainquery.LogRangeFilter{FromTime: &from, ToTime: &to}
	seekTo := func(from, to uint64) func(chainquery.TimeSeek) (chainquery.TimeBlocks, error) {
		return func(q chainquery.TimeSeek) (chainquery.TimeBlocks, error) {
			if q.From != 1000 || q.To != 5000 {
				t.Fatalf("asked %+v, want From 1000 and To 5000", q)
			}
			return chainquery.TimeBlocks{From: from, To: to, FromOK: true, ToOK: true}, nil
		}
	}
	// A datetime range of 100 blocks is served; of 101, refused.
	if lo, hi, ok, err := f.BlockRange(seekTo(200, 299)); err != nil || !ok || lo != 200 || hi != 299 {
		t.Fatalf("100 blocks: %d-%d %v %v", lo, hi, ok, err)
	}
	if _, _, _, err := f.BlockRange(seekTo(200, 300)); chainquery.ErrorCode(err) != chainquery.EINVALID ||
		!strings.Contains(chainquery.ErrorMessage(err), "holds 101 blocks") {
		t.Fatalf("101 blocks: %v", err)
	}
	var a, b chainquery.Address
	a[0], b[0] = 1, 2
	h := func(n byte) chainquery.Hash { return chainquery.Hash{n} }
	l := &chainquery.Log{Address: a, Topics: []chainquery.Hash{h(1), h(2)}}
	for _, c := range []struct {
		f    chainquery.LogRangeFilter
		want bool
	}{
		{chainquery.LogRangeFilter{}, true},
		{chainquery.LogRangeFilter{Addresses: []chainquery.Address{b, a}}, true},
		{chainquery.LogRangeFilter{Addresses: []chainquery.Address{b}}, false},
		{chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{nil, {h(3), h(2)}}}, true},
		{chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{{h(1)}, {h(1)}}}, false},
		{chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{2: {h(0)}}}, false}, // no third topic
	} {
		if got := c.f.Matches(l); got != c.want {
			t.Errorf("%+v matches %v, want %v", c.f, got, c.want)
		}
	}
}

// TestTraceFilterBlockRange: a range's questions of the blocks' timestamps
// (TimeSeek) and the block range their answers make: a block range asks
// nothing unless MinTime is set, a start with a fraction of a second is
// rounded up, MinTime raises the start, and a question without a block
// leaves nothing to match.
func TestTraceFilterBlockRange(t *testing.T) {
	b := func(n uint64) *uint64 { return &n }
	from, to, min := time.Unix(1000, 500), time.Unix(5000, 900), time.Unix(3000, 0)
	none := chainquery.TimeSeek{From: math.MinInt64, To: math.MaxInt64, Min: math.MinInt64}
	for _, c := range []struct {
		name   string
		f      chainquery.TraceFilter
		ask    *chainquery.TimeSeek // nil: no question
		at     chainquery.TimeBlocks
		lo, hi uint64
		ok     bool
	}{
		{"blocks", chainquery.TraceFilter{FromBlock: b(10), ToBlock: b(20)}, nil, chainquery.TimeBlocks{}, 10, 20, true},
		{"blocks after the history start", chainquery.TraceFilter{FromBlock: b(10), ToBlock: b(20), MinTime: min},
			&chainquery.TimeSeek{From: none.From, To: none.To, Min: 3000}, chainquery.TimeBlocks{Min: 15, MinOK: true}, 15, 20, true},
		{"blocks before the history start", chainquery.TraceFilter{FromBlock: b(10), ToBlock: b(20), MinTime: min},
			&chainquery.TimeSeek{From: none.From, To: none.To, Min: 3000}, chainquery.TimeBlocks{Min: 21, MinOK: true}, 21, 20, false},
		{"blocks, no history start", chainquery.TraceFilter{FromBlock: b(10), ToBlock: b(20), MinTime: min},
			&chainquery.TimeSeek{From: none.From, To: none.To, Min: 3000}, chainquery.TimeBlocks{}, 0, 0, false},
		{"datetimes", chainquery.TraceFilter{FromTime: &from, ToTime: &to},
			&chainquery.TimeSeek{From: 1001, To: 5000, Min: none.Min}, chainquery.TimeBlocks{From: 7, To: 9, FromOK: true, ToOK: true}, 7, 9, true},
		{"datetimes, none after the start", chainquery.TraceFilter{FromTime: &from, ToTime: &to},
			&chainquery.TimeSeek{From: 1001, To: 5000, Min: none.Min}, chainquery.TimeBlocks{To: 9, ToOK: true}, 0, 0, false},
		{"datetimes and the history start", chainquery.TraceFilter{FromTime: &from, ToTime: &to, MinTime: min},
			&chainquery.TimeSeek{From: 1001, To: 5000, Min: 3000}, chainquery.TimeBlocks{From: 7, To: 9, Min: 8, FromOK: true, ToOK: true, MinOK: true}, 8, 9, true},
	} {
		asked := false
		lo, hi, ok, err := c.f.BlockRange(func(q chainquery.TimeSeek) (chainquery.TimeBlocks, error) {
			asked = true
			if c.ask == nil || q != *c.ask {
				t.Errorf("%s: asked %+v, want %+v", c.name, q, c.ask)
			}
			return c.at, nil
		})
		if err != nil || asked != (c.ask != nil) || ok != c.ok || ok && (lo != c.lo || hi != c.hi) {
			t.Errorf("%s: %d-%d %v %v (asked %v), want %d-%d %v", c.name, lo, hi, ok, err, asked, c.lo, c.hi, c.ok)
		}
	}
	broken := errors.New("no store")
	f := chainquery.TraceFilter{FromTime: &from, ToTime: &to}
	if _, _, ok, err := f.BlockRange(func(chainquery.TimeSeek) (chainquery.TimeBlocks, error) { return chainquery.TimeBlocks{}, broken }); ok || !errors.Is(err, broken) {
		t.Errorf("a failed seek: %v %v", ok, err)
	}
}
