package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/jackc/pgx/v5"
)

// GrowStep is one step of a growth run.
type GrowStep struct {
	From, To uint64 // the blocks it ingests
	Stored   int    // blocks stored once it is done
	Reads    bool   // whether the read workloads run after it
}

// MaxGrowSteps bounds a growth run.
const MaxGrowSteps = 1000

// PlanGrowth splits blocks blocks from first into steps of step blocks (the
// last one shorter if step does not divide blocks) and marks for reads the
// steps after which readsAt block counts are stored; nil readsAt means the
// first and the last step. A count that no step ends at is an error.
func PlanGrowth(first uint64, blocks, step int, readsAt []int) ([]GrowStep, error) {
	if blocks < 1 || step < 1 {
		return nil, errors.New("blocks and step must be positive")
	}
	if n := (blocks + step - 1) / step; n > MaxGrowSteps {
		return nil, fmt.Errorf("%d steps of %d blocks: at most %d steps", n, step, MaxGrowSteps)
	}
	var steps []GrowStep
	for stored := 0; stored < blocks; {
		n := min(step, blocks-stored)
		from := first + uint64(stored)
		stored += n
		steps = append(steps, GrowStep{From: from, To: from + uint64(n) - 1, Stored: stored})
	}
	if readsAt == nil {
		readsAt = []int{steps[0].Stored, steps[len(steps)-1].Stored}
	}
	for _, at := range readsAt {
		i := len(steps) - 1
		for i >= 0 && steps[i].Stored != at {
			i--
		}
		if i < 0 {
			return nil, fmt.Errorf("reads at %d blocks: no step ends there (steps of %d up to %d)", at, step, blocks)
		}
		steps[i].Reads = true
	}
	return steps, nil
}

// ParseReadsAt parses --reads-at: block counts separated by commas, "none",
// or "" for the default (nil).
func ParseReadsAt(s string) ([]int, error) {
	switch strings.TrimSpace(s) {
	case "":
		return nil, nil
	case "none":
		return []int{}, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--reads-at: want block counts such as 5000,50000, or none")
		}
		out = append(out, n)
	}
	return out, nil
}

// GrowReads selects the read workloads of a growth run among the load run's
// (Workloads): the ones whose cost could grow with the store, uncached.
var GrowReads = regexp.MustCompile(`^(Filter Traces, 100 blocks, (limit 50|hot to_address \(rank \d+\)|cold to_address \(rank \d+\)|offset 1000)` +
	`|Get Block, full transactions|Get Block Receipts, limit 50|Get Transaction Logs)$`)

// GrowOptions are a growth run's settings.
type GrowOptions struct {
	Chainquery  string
	DSN         string           // a database that holds none of the chain
	Chain       *polychain.Chain // the whole chain; its last block is the last step's
	Steps       []GrowStep       // PlanGrowth's
	Traces      string
	Batch       int
	Concurrency int
	// Node starts a node serving Chain that has rendered blocks from..to
	// (so that rendering is not measured) and returns its URL and its stop.
	Node       func(ctx context.Context, from, to uint64) (url string, stop func(), err error)
	ServerCPUs string            // taskset CPU list of serve, or ""
	Targets    int               // distinct requests per workload
	Match      func(string) bool // the read workloads (nil: GrowReads)
	Load       LoadOptions
	Progress   func(string)
}

// GrowRow is one step done.
type GrowRow struct {
	GrowStep
	Ingest   *IngestResult
	Disk     int64      // the store's size on disk after the step
	Reads    []*LoadRow // when the step was chosen for reads
	ServeRSS int64      // serve's peak RSS over those reads
}

// KBPerBlock is the store's size over the blocks stored, in KB (1000 bytes).
func (r *GrowRow) KBPerBlock() float64 { return float64(r.Disk) / float64(r.Stored) / 1000 }

// Grow runs a growth run (cqbench grow), which shows how the store behaves
// as it grows: it runs the steps in order and returns a row for each step
// done, also when it stops on an error. The dataset is built in steps by the
// real ingester, each step one `chainquery ingest evm --from --to` run that
// resumes on the same database, between two raw fetches of the same range
// (Ingest), so every step has its own ceiling; after each step the store's
// size on disk is read, and at chosen steps the uncached read workloads run
// against `chainquery serve` with the load run's machinery (Workloads,
// Load). What matters is the trend: whether the last step ingests as fast
// as the first, and whether a read answers as fast over the larger store.
func Grow(ctx context.Context, o GrowOptions) ([]*GrowRow, error) {
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	var rows []*GrowRow
	for i, st := range o.Steps {
		say("grow: step %d of %d, blocks %d-%d", i+1, len(o.Steps), st.From, st.To)
		row, err := growStep(ctx, o, st)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
		say("grow: %d blocks stored: %.1f blocks/s, %.0f%% of the raw %.1f; %s on disk, %.1f KB a block; ingester %s",
			st.Stored, row.Ingest.BlocksPS, row.Ingest.Ratio()*100, row.Ingest.RawBlocksPS, diskSize(row.Disk), row.KBPerBlock(), MB(row.Ingest.PeakRSS))
		if !st.Reads {
			continue
		}
		row.Reads, row.ServeRSS, err = growReads(ctx, o, st.Stored)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// growStep ingests one step's blocks between two raw fetches, on a node
// that serves the step's range from its cache, and reads the store's size.
func growStep(ctx context.Context, o GrowOptions, st GrowStep) (*GrowRow, error) {
	// The ingester starts by checking the stored head against the node: that
	// block is rendered too, so that no rendering is timed.
	from := st.From
	if from > o.Chain.First() {
		from--
	}
	url, stop, err := o.Node(ctx, from, st.To)
	if err != nil {
		return nil, err
	}
	defer stop()
	res, err := Ingest(ctx, IngestOptions{Chainquery: o.Chainquery, DSN: o.DSN, RPC: url, From: st.From, To: st.To,
		Traces: o.Traces, Batch: o.Batch, Concurrency: o.Concurrency, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	disk, err := DiskSize(ctx, o.DSN)
	if err != nil {
		return nil, err
	}
	return &GrowRow{GrowStep: st, Ingest: res, Disk: disk}, nil
}

// growReads runs the read workloads over the first stored blocks of the
// chain against serve with its answer cache off, so that the store answers
// every request, and returns the rows and serve's peak RSS.
func growReads(ctx context.Context, o GrowOptions, stored int) ([]*LoadRow, int64, error) {
	cfg := o.Chain.Config()
	cfg.Blocks = stored // every block is a function of (seed, number): the chain's first blocks
	c, err := polychain.New(cfg)
	if err != nil {
		return nil, 0, err
	}
	match := o.Match
	if match == nil {
		match = GrowReads.MatchString
	}
	if o.Progress != nil {
		o.Progress(fmt.Sprintf("grow: reads over %d blocks: starting chainquery serve --answer-cache-mb 0", stored))
	}
	s, err := StartServer(ctx, o.Chainquery, o.DSN, o.ServerCPUs, "--answer-cache-mb", "0")
	if err != nil {
		return nil, 0, err
	}
	defer s.Stop()
	ws, err := Workloads(ctx, s, c, Tokens{}, o.Targets, match)
	if err != nil {
		return nil, 0, err
	}
	if len(ws) == 0 {
		return nil, 0, errors.New("no read workload matches")
	}
	rows, err := Load(ctx, s, ws, o.Load)
	return rows, s.Proc.PeakRSS(), err
}

// DiskSize is the size of the store of dsn: a SQLite file and its
// write-ahead log, or pg_database_size of a PostgreSQL database.
func DiskSize(ctx context.Context, dsn string) (int64, error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		fi, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		n := fi.Size()
		if wal, err := os.Stat(path + "-wal"); err == nil {
			n += wal.Size()
		} else if !os.IsNotExist(err) {
			return 0, err
		}
		return n, nil
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", RedactDSN(dsn), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int64
	err = conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
	return n, err
}
