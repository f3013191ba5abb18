package bench

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The targets of a growth run: the last step ingests within 15% of the
// first step's rate, and a read's p50 over the largest store is at most
// 1.25 times its p50 over the smallest.
const (
	IngestDriftTarget = 0.15
	P50GrowthTarget   = 1.25
)

// IngestChange is the ingestion rate of the last step over the first's.
type IngestChange struct {
	FirstAt, LastAt   int     // blocks stored after each
	First, Last       float64 // blocks/s
	FirstRaw, LastRaw float64 // each step's share of its raw fetch rate
}

// Ratio is the last step's rate over the first's.
func (c IngestChange) Ratio() float64 { return c.Last / c.First }

// Met says whether the last step's rate is within IngestDriftTarget of the
// first's.
func (c IngestChange) Met() bool { return math.Abs(c.Ratio()-1) <= IngestDriftTarget }

// IngestGrowth compares the last step with the first; ok is false with
// fewer than two steps.
func IngestGrowth(rows []*GrowRow) (c IngestChange, ok bool) {
	if len(rows) < 2 {
		return c, false
	}
	f, l := rows[0], rows[len(rows)-1]
	return IngestChange{FirstAt: f.Stored, LastAt: l.Stored, First: f.Ingest.BlocksPS, Last: l.Ingest.BlocksPS,
		FirstRaw: f.Ingest.Ratio(), LastRaw: l.Ingest.Ratio()}, true
}

// P50Change is one workload's p50 at the first and the last checkpoint,
// with its share of the ceiling at each: on a shared machine a p50 moves
// with the load of the machine too, and the share tells the two apart.
type P50Change struct {
	Workload              string
	FirstAt, LastAt       int
	First, Last           time.Duration
	FirstShare, LastShare float64
}

// Ratio is the p50 at the last checkpoint over the p50 at the first.
func (c P50Change) Ratio() float64 { return float64(c.Last) / float64(c.First) }

// Met says whether the p50 grew by at most P50GrowthTarget.
func (c P50Change) Met() bool { return c.Ratio() <= P50GrowthTarget }

// P50Growth compares each workload's p50 at the last checkpoint with the
// first, for the workloads measured at both; nothing with fewer than two
// checkpoints.
func P50Growth(rows []*GrowRow) []P50Change {
	var at []*GrowRow
	for _, r := range rows {
		if len(r.Reads) > 0 {
			at = append(at, r)
		}
	}
	if len(at) < 2 {
		return nil
	}
	f, l := at[0], at[len(at)-1]
	var out []P50Change
	for _, a := range f.Reads {
		for _, b := range l.Reads {
			if a.Workload == b.Workload {
				out = append(out, P50Change{Workload: a.Workload, FirstAt: f.Stored, LastAt: l.Stored,
					First: a.Server.P50, Last: b.Server.P50, FirstShare: a.Ratio(), LastShare: b.Ratio()})
			}
		}
	}
	return out
}

// GrowthTable is the markdown table of the growth curve, a row per step.
func GrowthTable(rows []*GrowRow) string {
	var b strings.Builder
	b.WriteString("| blocks stored | step | raw fetch | ingestion | % of raw | store on disk | KB/block | ingester CPU a block | ingester peak RSS | serve peak RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		serve := ""
		if len(r.Reads) > 0 {
			serve = MB(r.ServeRSS)
		}
		fmt.Fprintf(&b, "| %d | %d-%d | %.1f blocks/s | %.1f blocks/s | %.0f%% | %s | %.1f | %.2f ms | %s | %s |\n",
			r.Stored, r.From, r.To, r.Ingest.RawBlocksPS, r.Ingest.BlocksPS, r.Ingest.Ratio()*100,
			diskSize(r.Disk), r.KBPerBlock(), r.Ingest.CPUPerBlock(), MB(r.Ingest.PeakRSS), serve)
	}
	return b.String()
}

// GrowReadsTable is the markdown table of the reads, a row per checkpoint
// and workload.
func GrowReadsTable(rows []*GrowRow) string {
	var b strings.Builder
	b.WriteString("| blocks stored | workload | count | server req/s | % of ceiling | server p50 | server p99 | ceiling p50 | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		for _, l := range r.Reads {
			count := ""
			if l.Count >= 0 {
				count = fmt.Sprint(l.Count)
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %.0f | %.1f%% | %s | %s | %s | %d |\n",
				r.Stored, l.Workload, count, l.Server.Rate, l.Ratio()*100, ms(l.Server.P50), ms(l.Server.P99),
				ms(l.Ceiling.P50), l.Server.Errors+l.Ceiling.Errors)
		}
	}
	return b.String()
}

// GrowSummary compares the last step with the first, and each read's p50 at
// the last checkpoint with the first, against the targets.
func GrowSummary(rows []*GrowRow) string {
	var b strings.Builder
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "missed"
	}
	if c, ok := IngestGrowth(rows); ok {
		fmt.Fprintf(&b, "Ingestion, last step (%d blocks stored) vs first (%d): %.1f vs %.1f blocks/s = %.2fx (target within %.0f%%: %s); %.0f%% vs %.0f%% of the raw fetch.\n",
			c.LastAt, c.FirstAt, c.Last, c.First, c.Ratio(), IngestDriftTarget*100, met(c.Met()), c.LastRaw*100, c.FirstRaw*100)
	}
	ps := P50Growth(rows)
	if len(ps) == 0 {
		return b.String()
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "| workload | p50 at %d blocks | p50 at %d blocks | last / first (target ≤ %.2fx) | %% of ceiling, first → last |\n",
		ps[0].FirstAt, ps[0].LastAt, P50GrowthTarget)
	b.WriteString("|---|---|---|---|---|\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "| %s | %s | %s | %.2fx, %s | %.1f%% → %.1f%% |\n",
			p.Workload, ms(p.First), ms(p.Last), p.Ratio(), met(p.Met()), p.FirstShare*100, p.LastShare*100)
	}
	return b.String()
}

// diskSize formats a store's size: small stores (the first steps of a short
// run) need the fraction that MB drops, large ones read better in GB.
func diskSize(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.2f GB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
}
