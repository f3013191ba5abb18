package bench

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/polychain"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

const api = "/api/v1/customer/polygon"

// Addresses are the callees the Filter Traces workloads ask for, found from
// the generator's Zipf ranks.
type Addresses struct {
	Hot, Warm, Cold      string // about 10%, 0.1% and 0.001% of the traces
	HotRank, WarmRank    int
	ColdRank             int
	Growth               [3]string // callees with about 1/16, 1/4 and all of the hot one's traces
	GrowthRanks          [3]int
	TenFrom, TenTo       []string // 10 hot callees as from_address, 10 others as to_address
	TracesPerBlockApprox float64
}

// FindAddresses picks the workload addresses of c by rank.
func FindAddresses(c *polychain.Chain) Addresses {
	perBlock := 8.3 * float64(c.Config().TxPerBlock)
	// rankFor is the rank whose expected share is the given one.
	rankFor := func(share float64) int {
		r := int(math.Round(math.Pow(c.ZipfShare(1)/share, 1/c.ZipfExponent())))
		return max(1, min(r, c.Config().Accounts))
	}
	a := Addresses{TracesPerBlockApprox: perBlock, HotRank: 1}
	a.WarmRank = rankFor(c.ZipfShare(1) / 100)
	a.ColdRank = rankFor(c.ZipfShare(1) / 10_000)
	a.Hot, a.Warm, a.Cold = c.Callee(a.HotRank), c.Callee(a.WarmRank), c.Callee(a.ColdRank)
	for i, k := range []float64{16, 4, 1} {
		a.GrowthRanks[i] = rankFor(c.ZipfShare(1) / k)
		a.Growth[i] = c.Callee(a.GrowthRanks[i])
	}
	for r := 1; r <= 10; r++ {
		a.TenFrom = append(a.TenFrom, c.Callee(r))
		a.TenTo = append(a.TenTo, c.Callee(r+10))
	}
	return a
}

// filterBody is a Filter Traces request body.
type filterBody struct {
	FromBlock    *uint64 `json:"from_block,omitempty"`
	ToBlock      *uint64 `json:"to_block,omitempty"`
	FromDatetime string  `json:"from_datetime,omitempty"`
	ToDatetime   string  `json:"to_datetime,omitempty"`
	FromAddress  any     `json:"from_address,omitempty"`
	ToAddress    any     `json:"to_address,omitempty"`
}

func (f filterBody) target(limit, offset int64) vegeta.Target {
	return postTarget("/traces/filter", f, limit, offset)
}

// postTarget is a POST of body as JSON to the chain's path, paged.
func postTarget(path string, body any, limit, offset int64) vegeta.Target {
	b, _ := json.Marshal(body)
	return vegeta.Target{Method: http.MethodPost, URL: fmt.Sprintf("%s%s?limit=%d&offset=%d", api, path, limit, offset), Body: b}
}

// logBody is a Filter Logs request body.
type logBody struct {
	FromDatetime string `json:"from_datetime,omitempty"`
	ToDatetime   string `json:"to_datetime,omitempty"`
	Address      any    `json:"address,omitempty"`
	Topic0       any    `json:"topic0,omitempty"`
}

func (f logBody) target(limit, offset int64) vegeta.Target {
	return postTarget("/logs/filter", f, limit, offset)
}

// allBlocks is the datetime range of every block of c.
func allBlocks(c *polychain.Chain) filterBody {
	dt := func(n uint64) string { return time.Unix(c.Time(n), 0).UTC().Format(time.RFC3339) }
	return filterBody{FromDatetime: dt(c.First()), ToDatetime: dt(c.Last())}
}

// HeaviestFilterTraces is the most expensive Filter Traces request of c: ten
// busy senders AND ten busy recipients over the datetime range of every
// block, a page of 50 at offset 5,000 (every trace before it is read).
func HeaviestFilterTraces(c *polychain.Chain) vegeta.Target {
	a := FindAddresses(c)
	f := allBlocks(c)
	f.FromAddress, f.ToAddress = a.TenFrom, a.TenTo
	return f.target(50, 5000)
}

func get(format string, args ...any) vegeta.Target {
	return vegeta.Target{Method: http.MethodGet, URL: fmt.Sprintf(api+format, args...)}
}

// Workloads returns the API workloads over c's blocks and the seeded token
// balances (none without changes), with names matching only if match is nil
// or matches. It asks s for the counts the deep offsets need.
func Workloads(ctx context.Context, s *Server, c *polychain.Chain, tokens Tokens, targets int, match func(string) bool) ([]Workload, error) {
	if targets <= 0 {
		targets = 32
	}
	r := rand.New(rand.NewPCG(c.Config().Seed, 42))
	blocks := func() []uint64 {
		out := make([]uint64, targets)
		for i := range out {
			out[i] = c.First() + r.Uint64N(uint64(c.Config().Blocks))
		}
		return out
	}
	ranges := func() []uint64 { // starts of 100-block ranges (or the whole chain, if shorter)
		out := make([]uint64, targets)
		span := uint64(max(1, c.Config().Blocks-99))
		for i := range out {
			out[i] = c.First() + r.Uint64N(span)
		}
		return out
	}
	a := FindAddresses(c)
	all := allBlocks(c)

	var ws []Workload
	add := func(name string, ts []vegeta.Target) {
		if match == nil || match(name) {
			ws = append(ws, Workload{Name: name, Targets: ts, Count: -1})
		}
	}
	each := func(ns []uint64, f func(uint64) vegeta.Target) []vegeta.Target {
		out := make([]vegeta.Target, len(ns))
		for i, n := range ns {
			out[i] = f(n)
		}
		return out
	}
	txOf := func(n uint64) chainquery.Hash {
		return chainquery.Hash(c.TxHash(n, r.IntN(c.TxCount(n))))
	}
	add("Get Latest Block", []vegeta.Target{get("/blocks/latest")})
	add("Get Block", each(blocks(), func(n uint64) vegeta.Target { return get("/block?block_number=%d", n) }))
	add("Get Block, full transactions", each(blocks(), func(n uint64) vegeta.Target {
		return get("/block?block_number=%d&full_transactions=true", n)
	}))
	add("Get Block Receipts, limit 50", each(blocks(), func(n uint64) vegeta.Target {
		return get("/blocks/receipts?block_number=%d&limit=50", n)
	}))
	add("Get Transaction Logs", each(blocks(), func(n uint64) vegeta.Target {
		return get("/transactions/%s/logs?limit=50", txOf(n).Hex())
	}))
	add("Get Transaction Logs, block_number", each(blocks(), func(n uint64) vegeta.Target {
		return get("/transactions/%s/logs?block_number=%d&limit=50", txOf(n).Hex(), n)
	}))
	logRange := func(n uint64, address any, topic0 any) vegeta.Target {
		last := min(n+99, c.Last())
		body, _ := json.Marshal(map[string]any{"from_block": n, "to_block": last, "address": address, "topic0": topic0})
		return vegeta.Target{Method: http.MethodPost, URL: api + "/logs/filter?limit=50", Body: body}
	}
	add("Filter Logs, 100 blocks, limit 50", each(ranges(), func(n uint64) vegeta.Target { return logRange(n, nil, nil) }))
	add("Filter Logs, 100 blocks, hot address", each(ranges(), func(n uint64) vegeta.Target { return logRange(n, a.Hot, nil) }))
	add("Get Transaction", each(blocks(), func(n uint64) vegeta.Target {
		return get("/transactions/%s", txOf(n).Hex())
	}))
	add("Get Transaction Receipt", each(blocks(), func(n uint64) vegeta.Target {
		return get("/transactions/%s/receipt", txOf(n).Hex())
	}))
	add("Get Transaction Traces, limit 50", each(blocks(), func(n uint64) vegeta.Target {
		return get("/transactions/%s/traces?limit=50", txOf(n).Hex())
	}))
	add("Get Block Logs, limit 50", each(blocks(), func(n uint64) vegeta.Target {
		return get("/blocks/logs?block_number=%d&limit=50", n)
	}))
	if tokens.Changes > 0 {
		add("Token Balance by Account", tokens.targets(targets, false))
		add("Token Balance by Account, include_metadata", tokens.targets(targets, true))
		add("Token Balances by Owner, limit 50", tokens.ownerTargets(targets))
		add("SOL Balance by Account", tokens.solTargets(targets))
	}
	span := func(n uint64, to any) filterBody {
		last := min(n+99, c.Last())
		return filterBody{FromBlock: &n, ToBlock: &last, ToAddress: to}
	}
	hundred := func(to any, offset int64) []vegeta.Target {
		return each(ranges(), func(n uint64) vegeta.Target { return span(n, to).target(50, offset) })
	}
	add("Filter Traces, 100 blocks, limit 50", hundred(nil, 0))
	add(fmt.Sprintf("Filter Traces, 100 blocks, hot to_address (rank %d)", a.HotRank), hundred(a.Hot, 0))
	add(fmt.Sprintf("Filter Traces, 100 blocks, warm to_address (rank %d)", a.WarmRank), hundred(a.Warm, 0))
	add(fmt.Sprintf("Filter Traces, 100 blocks, cold to_address (rank %d)", a.ColdRank), hundred(a.Cold, 0))
	add("Filter Traces, 100 blocks, offset 1000", hundred(nil, 1000))
	add("Filter Traces, 100 blocks, hot to_address, offset 1000", hundred(a.Hot, 1000))
	hundredFrom := func(from, to any, offset int64) []vegeta.Target {
		return each(ranges(), func(n uint64) vegeta.Target {
			f := span(n, to)
			f.FromAddress = from
			return f.target(50, offset)
		})
	}
	add(fmt.Sprintf("Filter Traces, 100 blocks, hot from_address (rank %d)", a.HotRank), hundredFrom(a.Hot, nil, 0))
	add("Filter Traces, 100 blocks, 10 to_address", hundred(a.TenTo, 0))
	add("Filter Traces, 100 blocks, 10 from_address AND 10 to_address", hundredFrom(a.TenFrom, a.TenTo, 0))
	add("Filter Traces, 100 blocks, 10 from_address AND 10 to_address, offset 1000", hundredFrom(a.TenFrom, a.TenTo, 1000))

	// Queries over every block, at offsets up to half of their count.
	type deep struct {
		name string
		body interface {
			target(limit, offset int64) vegeta.Target
		}
		offsets []string // "0", "1000", "half"
	}
	hot := all
	hot.ToAddress = a.Hot
	ten := all
	ten.FromAddress, ten.ToAddress = a.TenFrom, a.TenTo
	deeps := []deep{
		{"Filter Traces, datetime range over all blocks, hot to_address", hot, []string{"0", "half"}},
		{"Filter Traces, datetime range over all blocks, 10 from_address AND 10 to_address", ten, []string{"0", "1000", "half"}},
	}
	for i, k := range []int{1, 4, 16} {
		g := all
		g.ToAddress = a.Growth[i]
		deeps = append(deeps, deep{fmt.Sprintf("Filter Traces, datetime range over all blocks, to_address of rank %d (growth %dx)", a.GrowthRanks[i], k), g, []string{"0"}})
	}
	// Filter Logs over every block: the hot contract's events (about 40 a
	// Polygon-shaped block, a busy token's Transfers), one event of it,
	// every emitter's commonest event, and emitters of 1x, 4x and 16x the
	// logs.
	logsOf := func(address, topic0 any) logBody {
		return logBody{FromDatetime: all.FromDatetime, ToDatetime: all.ToDatetime, Address: address, Topic0: topic0}
	}
	event := "0x" + hex.EncodeToString(func() []byte { h := c.EventTopic(0); return h[:] }())
	deeps = append(deeps,
		deep{"Filter Logs, datetime range over all blocks, hot address", logsOf(a.Hot, nil), []string{"0", "half"}},
		deep{"Filter Logs, datetime range over all blocks, hot address and one topic0", logsOf(a.Hot, event), []string{"0", "half"}},
		deep{"Filter Logs, datetime range over all blocks, one topic0", logsOf(nil, event), []string{"0", "half"}})
	for i, k := range []int{1, 4, 16} {
		deeps = append(deeps, deep{fmt.Sprintf("Filter Logs, datetime range over all blocks, address of rank %d (growth %dx)", a.GrowthRanks[i], k), logsOf(a.Growth[i], nil), []string{"0"}})
	}
	for _, d := range deeps {
		var count int64 = -1
		for _, off := range d.offsets {
			name := d.name + ", offset " + off
			if match != nil && !match(name) {
				continue
			}
			if count < 0 {
				var err error
				if count, err = countOf(ctx, s, d.body.target(1, 0)); err != nil {
					return nil, err
				}
			}
			offset := int64(0)
			switch off {
			case "1000":
				offset = 1000
			case "half":
				offset = count / 2
				name = fmt.Sprintf("%s (%d)", d.name+", offset half of count", offset)
			}
			ws = append(ws, Workload{Name: name, Targets: []vegeta.Target{d.body.target(50, offset)}, Count: count})
		}
	}
	// The count of the first target of each Filter Traces workload.
	for i := range ws {
		w := &ws[i]
		if w.Count < 0 && w.Targets[0].Method == http.MethodPost {
			n, err := countOf(ctx, s, w.Targets[0])
			if err != nil {
				return nil, err
			}
			w.Count = n
		}
	}
	return ws, nil
}

// countOf asks the server for a list answer's count.
func countOf(ctx context.Context, s *Server, t vegeta.Target) (int64, error) {
	status, body, err := s.Do(ctx, t)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("%s %s: status %d: %s", t.Method, t.URL, status, body)
	}
	var v struct {
		Count int64 `json:"count"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return 0, fmt.Errorf("%s %s: %w", t.Method, t.URL, err)
	}
	return v.Count, nil
}
