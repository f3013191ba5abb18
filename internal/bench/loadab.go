package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// ABRow is one workload measured on two servers of the same data, a
// baseline and a candidate, in alternating rounds next to one ceiling.
type ABRow struct {
	Workload  string
	Same      bool   // both servers gave the same bytes for every target
	Differs   string // the first target whose answers differ
	Ceiling   Stats
	Base, New []Stats // one per round
}

// Ratios are the candidate's rate over the baseline's, round by round: each
// pair measured back to back, so that a slow minute of the host weighs on
// both sides of one ratio.
func (r *ABRow) Ratios() []float64 {
	out := make([]float64, len(r.Base))
	for i := range r.Base {
		if r.Base[i].Rate > 0 {
			out[i] = r.New[i].Rate / r.Base[i].Rate
		}
	}
	return out
}

// Ratio is the geometric mean of Ratios.
func (r *ABRow) Ratio() float64 {
	rs := r.Ratios()
	sum := 0.0
	for _, x := range rs {
		if x <= 0 {
			return 0
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(rs)))
}

// LoadAB measures each workload on base and on next, two servers of the
// same chain (for instance an older build on its own database, and this
// one): it checks that both answer every target with the same bytes, then
// measures the ceiling once and the two servers in rounds, ordered base,
// next in even rounds and next, base in odd ones (ABBA), with the same load
// as Load. Reads on a shared host drift by more than the differences worth
// finding; measured this way, the drift shows as the spread of the ratios.
func LoadAB(ctx context.Context, base, next *Server, workloads []Workload, o LoadOptions, rounds int) ([]*ABRow, error) {
	o = o.withDefaults()
	if rounds <= 0 {
		rounds = 2
	}
	var rows []*ABRow
	for _, w := range workloads {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("load A/B: %s (%d targets)", w.Name, len(w.Targets)))
		}
		row := &ABRow{Workload: w.Name, Same: true}
		answers := map[string][]byte{}
		for _, t := range w.Targets {
			a, err := answer(ctx, next, w.Name, t)
			if err != nil {
				return rows, err
			}
			b, err := answer(ctx, base, w.Name, t)
			if err != nil {
				return rows, err
			}
			if row.Same && !bytes.Equal(a, b) {
				row.Same, row.Differs = false, t.Method+" "+t.URL+" "+string(t.Body)
			}
			answers[targetKey(t.Method, t.URL, t.Body)] = a
		}
		var err error
		if row.Ceiling, err = measureCeiling(ctx, next.Key, answers, w, o); err != nil {
			return rows, err
		}
		for i := range rounds {
			first, second := base, next
			if i%2 == 1 {
				first, second = next, base
			}
			s1 := attack(ctx, first.URL, first.Key, w, o)
			s2 := attack(ctx, second.URL, second.Key, w, o)
			if i%2 == 1 {
				s1, s2 = s2, s1
			}
			row.Base, row.New = append(row.Base, s1), append(row.New, s2)
		}
		rows = append(rows, row)
		if err := ctx.Err(); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// answer is s's answer to t, which must be 200. A 503 is asked again, up
// to twice: a whole-history request can pass serve's time limit while it
// reads its pages from disk for the first time (the baseline's, on
// SQLite), and answer well within it once they are in the page cache.
func answer(ctx context.Context, s *Server, name string, t vegeta.Target) ([]byte, error) {
	status, body, err := s.Do(ctx, t)
	for try := 0; err == nil && status == http.StatusServiceUnavailable && try < 2; try++ {
		status, body, err = s.Do(ctx, t)
	}
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("%s: %s %s on %s: status %d: %s", name, t.Method, t.URL, s.URL, status, body)
	}
	return body, nil
}

// ABTable is the markdown table of an A/B load run: the rates of each
// round, the ratio's geometric mean and its spread over the rounds.
func ABTable(rows []*ABRow) string {
	var b strings.Builder
	b.WriteString("| workload | same answers | ceiling req/s | baseline req/s | new req/s | new / baseline | lowest, highest round | baseline p50 | new p50 | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	rates := func(ss []Stats) string {
		var p []string
		for _, s := range ss {
			p = append(p, fmt.Sprintf("%.0f", s.Rate))
		}
		return strings.Join(p, ", ")
	}
	var errs uint64
	for _, r := range rows {
		same := "yes"
		if !r.Same {
			same = "**no**: " + r.Differs
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range r.Ratios() {
			lo, hi = min(lo, x), max(hi, x)
		}
		errs = r.Ceiling.Errors
		for i := range r.Base {
			errs += r.Base[i].Errors + r.New[i].Errors
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %s | %.2fx | %.2f, %.2f | %s | %s | %d |\n",
			r.Workload, same, r.Ceiling.Rate, rates(r.Base), rates(r.New), r.Ratio(), lo, hi,
			ms(medianP50(r.Base)), ms(medianP50(r.New)), errs)
	}
	return b.String()
}

func medianP50(ss []Stats) time.Duration {
	ds := make([]time.Duration, len(ss))
	for i, s := range ss {
		ds[i] = s.P50
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// measureCeiling measures w once against a ceiling that serves answers.
func measureCeiling(ctx context.Context, key string, answers map[string][]byte, w Workload, o LoadOptions) (Stats, error) {
	ceiling, stop, err := startCeiling(key, answers)
	if err != nil {
		return Stats{}, err
	}
	defer stop()
	return attack(ctx, ceiling, key, w, o), nil
}
