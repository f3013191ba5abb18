package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainquery/chainquery/internal/polychain"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// FloodPreset is a named set of serve flags that a flood run compares.
type FloodPreset struct {
	Name string
	Args []string
}

// The presets of `cqbench flood --fair-share`: serve's defaults (fair share
// on, its request deadline), and everything off, as before fair share.
var (
	FairShareOn  = FloodPreset{Name: "on", Args: []string{"--fair-share=true"}}
	FairShareOff = FloodPreset{Name: "off", Args: []string{"--fair-share=false", "--request-timeout=0"}}
)

// FloodOptions are a flood run's settings.
type FloodOptions struct {
	Chainquery string   // the binary
	DSN        string   // the dataset, already ingested
	CPUs       string   // taskset CPU list of the server; empty: unpinned
	ServeArgs  []string // every server's flags, after the preset's (so they win)
	Presets    []FloodPreset
	Floods     []int         // A's connections, one measurement each
	Duration   time.Duration // each of B's measurements; A floods through the second
	BConns     int           // B's connections (default 4)
	Timeout    time.Duration // A's client timeout per request (default 30 s): past it, "hung"
	MaxRequest uint64        // most requests of A's flood and of each of B's measurements
	Progress   func(string)
}

// FloodStats are the answers A's flood got.
type FloodStats struct {
	Requests    uint64
	OK          uint64 // 200
	TooMany     uint64 // 429
	OverBudget  uint64 // those 429 that say the key's cost budget is spent
	Unavailable uint64 // 503
	Other       uint64 // any other status, or an error other than a timeout
	Hung        uint64 // no answer within the client timeout
	Max         time.Duration
	Refusals    uint64 // the 429 and 503 answers
	RefusalsOK  uint64 // those with a Retry-After of whole seconds and a JSON detail
	FirstOther  string // the first other status or error
	FirstBadRef string // the first refusal without Retry-After or detail
	Elapsed     time.Duration
}

// FloodRow is one measurement: a store, a preset, A's connections.
type FloodRow struct {
	Store, Preset string
	Conns         int
	Alone         Stats // B alone
	Flooded       Stats // B while A floods
	A             FloodStats
	PeakRSS       int64
}

// FloodReport is a flood run.
type FloodReport struct {
	Blocks     int
	Count      int64         // the heavy request's count
	HeavyAlone time.Duration // the heavy request alone (its second run)
	Duration   time.Duration
	BConns     int
	Rows       []*FloodRow
}

// Flood runs the flood: one API key (A) sends the heaviest Filter Traces
// request back to back on many connections while another key (B) reads Get
// Block, the cheapest keyed read, on a few. It measures what fair share
// between keys (serve's --fair-share and its limits, http/admission.go) leaves
// B: B alone, then B under A's flood, for each preset and each number of
// A's connections, each on a fresh `chainquery serve` of o.DSN, so that no
// key's cost budget (kept in the server's memory) carries over from one
// measurement to the next.
func Flood(ctx context.Context, c *polychain.Chain, o FloodOptions) (*FloodReport, error) {
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	if o.BConns <= 0 {
		o.BConns = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxRequest == 0 {
		o.MaxRequest = 5_000_000
	}
	if len(o.Presets) == 0 {
		o.Presets = []FloodPreset{FairShareOff, FairShareOn}
	}
	if len(o.Floods) == 0 {
		o.Floods = []int{16, 64}
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	ws, err := Workloads(ctx, nil, c, Tokens{}, 32, func(name string) bool { return name == "Get Block" })
	if err != nil {
		return nil, err
	}
	if len(ws) != 1 {
		return nil, errors.New("no Get Block workload")
	}
	getBlock := &ws[0]
	heavy := HeaviestFilterTraces(c)

	stamp := time.Now().UnixNano()
	keyA, err := CreateKey(ctx, o.Chainquery, o.DSN, fmt.Sprintf("flood-a-%d", stamp))
	if err != nil {
		return nil, err
	}
	keyB, err := CreateKey(ctx, o.Chainquery, o.DSN, fmt.Sprintf("flood-b-%d", stamp))
	if err != nil {
		return nil, err
	}
	rep := &FloodReport{Blocks: c.Config().Blocks, Count: -1, Duration: o.Duration, BConns: o.BConns}
	store := StoreKind(o.DSN)
	load := LoadOptions{Duration: o.Duration, Connections: o.BConns, MaxRequests: o.MaxRequest}
	ramp := min(time.Second, o.Duration/4)
	for _, p := range o.Presets {
		for _, n := range o.Floods {
			progress(fmt.Sprintf("flood: %s, fair share %s, A on %d connections: starting serve", store, p.Name, n))
			args := append(append([]string{}, p.Args...), o.ServeArgs...)
			s, err := StartServer(ctx, o.Chainquery, o.DSN, o.CPUs, args...)
			if err != nil {
				return rep, err
			}
			row, err := floodOnce(ctx, s, keyA, keyB, getBlock, heavy, n, ramp, load, o, rep, progress)
			if row != nil {
				row.Store, row.Preset = store, p.Name
				row.PeakRSS = s.Proc.PeakRSS()
				rep.Rows = append(rep.Rows, row)
			}
			s.Stop()
			if err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// floodOnce is one row, on the running server s.
func floodOnce(ctx context.Context, s *Server, keyA, keyB string, getBlock *Workload, heavy vegeta.Target, conns int,
	ramp time.Duration, load LoadOptions, o FloodOptions, rep *FloodReport, progress func(string)) (*FloodRow, error) {
	// Every request once first (B's with B's key: they must be 200), and the
	// heavy one twice with the server's own key, which leaves A's budget
	// whole: its count, and how long it takes alone.
	b := *s
	b.Key = keyB
	for _, t := range getBlock.Targets {
		status, body, err := b.Do(ctx, t)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("Get Block: %s: status %d: %s", t.URL, status, body)
		}
	}
	for i := range 2 {
		start := time.Now()
		status, body, err := s.Do(ctx, heavy)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("the flood's request: status %d: %s", status, body)
		}
		if i == 1 && rep.Count < 0 {
			rep.HeavyAlone = time.Since(start)
			var v struct {
				Count int64 `json:"count"`
			}
			if err := json.Unmarshal(body, &v); err != nil {
				return nil, fmt.Errorf("the flood's request: %w", err)
			}
			rep.Count = v.Count
		}
	}
	row := &FloodRow{Conns: conns}
	progress(fmt.Sprintf("flood: B alone, Get Block on %d connections for %s", load.Connections, load.Duration))
	row.Alone = attack(ctx, s.URL, keyB, *getBlock, load)
	if err := ctx.Err(); err != nil {
		return row, err
	}
	progress(fmt.Sprintf("flood: A floods on %d connections; B again after %s", conns, ramp))
	stop := make(chan struct{})
	done := make(chan FloodStats, 1)
	// The flood's own hard end, should B's measurement overrun.
	end := time.Now().Add(ramp + 2*load.Duration + 10*time.Second)
	go func() { done <- flood(ctx, s.URL, keyA, heavy, conns, o.Timeout, o.MaxRequest, end, stop) }()
	select {
	case <-time.After(ramp):
	case <-ctx.Done():
	}
	row.Flooded = attack(ctx, s.URL, keyB, *getBlock, load)
	close(stop)
	progress(fmt.Sprintf("flood: waiting for A's requests in flight (up to %s)", o.Timeout))
	row.A = <-done
	return row, ctx.Err()
}

// flood sends t with key back to back on conns connections until stop is
// closed or end passes (a request in flight then is waited for, up to
// timeout), or limit requests were sent.
func flood(ctx context.Context, base, key string, t vegeta.Target, conns int, timeout time.Duration, limit uint64, end time.Time, stop <-chan struct{}) FloodStats {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:  true,
		MaxConnsPerHost:     conns,
		MaxIdleConnsPerHost: conns,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: timeout}
	var (
		mu    sync.Mutex
		total FloodStats
		sent  atomic.Uint64
		wg    sync.WaitGroup
	)
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st FloodStats
			for time.Now().Before(end) && sent.Add(1) <= limit {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				floodOne(ctx, client, base, key, t, &st)
				mu.Lock()
				total.add(&st)
				mu.Unlock()
				st = FloodStats{}
			}
		}()
	}
	wg.Wait()
	total.Elapsed = time.Since(start)
	return total
}

// floodOne makes one request of the flood and counts its answer in st.
func floodOne(ctx context.Context, client *http.Client, base, key string, t vegeta.Target, st *FloodStats) {
	req, err := http.NewRequestWithContext(ctx, t.Method, base+t.URL, bytes.NewReader(t.Body))
	if err != nil {
		st.Other++
		st.FirstOther = err.Error()
		return
	}
	req.Header.Set("apikey", key)
	req.Header.Set("Content-Type", "application/json")
	st.Requests++
	start := time.Now()
	resp, err := client.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
	}
	st.Max = max(st.Max, time.Since(start))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			st.Hung++
			return
		}
		st.Other++
		st.FirstOther = err.Error()
		return
	}
	switch resp.StatusCode {
	case http.StatusOK:
		st.OK++
		return
	case http.StatusTooManyRequests:
		st.TooMany++
	case http.StatusServiceUnavailable:
		st.Unavailable++
	default:
		st.Other++
		st.FirstOther = fmt.Sprintf("%d %s", resp.StatusCode, trim(body))
		return
	}
	st.Refusals++
	var v struct {
		Detail string `json:"detail"`
	}
	secs, aerr := strconv.Atoi(resp.Header.Get("Retry-After"))
	if jerr := json.Unmarshal(body, &v); jerr != nil || v.Detail == "" || aerr != nil || secs < 1 {
		st.FirstBadRef = fmt.Sprintf("%d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), trim(body))
		return
	}
	st.RefusalsOK++
	if resp.StatusCode == http.StatusTooManyRequests && strings.Contains(v.Detail, "cost budget") {
		st.OverBudget++
	}
}

func (f *FloodStats) add(o *FloodStats) {
	f.Requests += o.Requests
	f.OK += o.OK
	f.TooMany += o.TooMany
	f.OverBudget += o.OverBudget
	f.Unavailable += o.Unavailable
	f.Other += o.Other
	f.Hung += o.Hung
	f.Max = max(f.Max, o.Max)
	f.Refusals += o.Refusals
	f.RefusalsOK += o.RefusalsOK
	if f.FirstOther == "" {
		f.FirstOther = o.FirstOther
	}
	if f.FirstBadRef == "" {
		f.FirstBadRef = o.FirstBadRef
	}
}

func trim(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// StoreKind names the store of dsn: sqlite or postgres.
func StoreKind(dsn string) string {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		return "sqlite"
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres"
	}
	if i := strings.Index(dsn, ":"); i > 0 {
		return dsn[:i]
	}
	return dsn
}

// Table is the markdown table of the run, with a line of notes under it
// for every row with an error to show.
func (r *FloodReport) Table() string {
	var b strings.Builder
	b.WriteString("| store | fair share | A conns | B alone req/s | B alone p50 | B alone p99 | B flooded req/s | B flooded p50 | B flooded p99 | p99 flooded/alone | req/s alone/flooded | B non-200 alone, flooded | A 200 | A 429 (of which cost budget) | A 503 | A other | A hung | A max | 429/503 with Retry-After and detail | server peak RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var notes []string
	for _, w := range r.Rows {
		refusals := "none"
		if w.A.Refusals > 0 {
			refusals = fmt.Sprintf("%d of %d", w.A.RefusalsOK, w.A.Refusals)
			if w.A.RefusalsOK == w.A.Refusals {
				refusals = "all " + strconv.FormatUint(w.A.Refusals, 10)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %s | %s | %.0f | %s | %s | %s | %s | %d, %d | %d | %d (%d) | %d | %d | %d | %s | %s | %s |\n",
			w.Store, w.Preset, w.Conns, w.Alone.Rate, ms(w.Alone.P50), ms(w.Alone.P99),
			w.Flooded.Rate, ms(w.Flooded.P50), ms(w.Flooded.P99),
			ratio(w.Flooded.P99.Seconds(), w.Alone.P99.Seconds()), ratio(w.Alone.Rate, w.Flooded.Rate),
			w.Alone.Errors, w.Flooded.Errors, w.A.OK, w.A.TooMany, w.A.OverBudget, w.A.Unavailable, w.A.Other, w.A.Hung,
			secs(w.A.Max), refusals, MB(w.PeakRSS))
		at := fmt.Sprintf("%s, fair share %s, A on %d", w.Store, w.Preset, w.Conns)
		if w.Alone.Err != "" {
			notes = append(notes, fmt.Sprintf("%s: B alone: first error: %s", at, w.Alone.Err))
		}
		if w.Flooded.Err != "" {
			notes = append(notes, fmt.Sprintf("%s: B flooded: first error: %s", at, w.Flooded.Err))
		}
		if w.A.FirstOther != "" {
			notes = append(notes, fmt.Sprintf("%s: A: first other answer: %s", at, w.A.FirstOther))
		}
		if w.A.FirstBadRef != "" {
			notes = append(notes, fmt.Sprintf("%s: A: first refusal without Retry-After or detail: %s", at, w.A.FirstBadRef))
		}
	}
	for _, n := range notes {
		b.WriteString("\n" + n)
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// Header says what the table measured.
func (r *FloodReport) Header() string {
	return fmt.Sprintf("%d blocks; B: Get Block on %d connections, %s alone then %s under the flood; "+
		"A: Filter Traces, 10 from_address AND 10 to_address over every block's datetime range, offset 5000, limit 50 "+
		"(count %d; alone %s), back to back; a fresh server for every row; server peak RSS (VmHWM) at the row's end\n",
		r.Blocks, r.BConns, r.Duration, r.Duration, r.Count, ms(r.HeavyAlone))
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "∞"
	}
	return fmt.Sprintf("%.1f×", a/b)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
