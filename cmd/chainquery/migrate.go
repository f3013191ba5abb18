package main

import (
	"context"
	"fmt"
	"time"

	"github.com/chainquery/chainquery"
)

const migrateUsage = `Usage: chainquery migrate [--db DSN]

Brings a database up to this release: its schema (which every command also
does when it opens one), then its layout. A database written by an earlier
release keeps every block as rows; this release keeps the blocks more than
256 below a chain's head as compressed history, a fifth of the size. The API
reads both layouts, and ingestion converts a few buckets of 100 blocks with
each write, so migrate is never required: it converts them all now, a
transaction of 10 buckets at a time, printing its progress and the time
left, then indexes by address and topic, and counts per block, the logs of
the history that an earlier release wrote (which writes also do, a few
buckets each), and counts its traces by address over epochs of 10,000
blocks (writes do, an epoch each). Stopped,
it loses nothing; run again, it goes on where it was. serve
and ingest may run meanwhile.
`

// historyConverter is a store that converts rows into history
// (sqlstore.Store.ConvertHistory).
type historyConverter interface {
	ConvertHistory(ctx context.Context, chain chainquery.Chain, buckets int) (below, target uint64, err error)
	IndexLogHistory(ctx context.Context, chain chainquery.Chain, buckets int) (left uint64, err error)
	CountEpochs(ctx context.Context, chain chainquery.Chain, epochs int) (left uint64, err error)
}

type migrateCmd struct {
	db dsn
}

func (m *Main) parseMigrate(args []string) (command, error) {
	fs := newFlagSet("chainquery migrate")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	if err := m.parse(fs, args, migrateUsage); err != nil {
		return nil, err
	}
	d, err := parseDBFlag(fs.Name()+" -h", db.s)
	return &migrateCmd{db: d}, err
}

// migrateBuckets is how many buckets one transaction of migrate converts:
// a few seconds of work at Polygon's shape, so that a writer waiting for
// the database (an ingester) waits no longer than that.
const migrateBuckets = 10

func (c *migrateCmd) run(ctx context.Context, m *Main) error {
	store, err := m.openStore(ctx, c.db, storeOptions{mustExist: true})
	if err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, "schema: up to date")
	conv, ok := store.(historyConverter)
	if !ok {
		return fmt.Errorf("this store keeps no history")
	}
	for _, chain := range chainquery.EVMChains {
		first, target, err := conv.ConvertHistory(ctx, chain, 0) // where it stands
		if err != nil {
			return fmt.Errorf("%s: %w", chain, err)
		}
		if first < target {
			if err := convertHistory(ctx, m, conv, chain, first, target); err != nil {
				return err
			}
		}
		if err := indexLogHistory(ctx, m, conv, chain); err != nil {
			return err
		}
		if err := countEpochs(ctx, m, conv, chain); err != nil {
			return err
		}
	}
	return nil
}

// convertHistory converts chain's rows from first up to target into
// history.
func convertHistory(ctx context.Context, m *Main, conv historyConverter, chain chainquery.Chain, first, target uint64) error {
	fmt.Fprintf(m.Stdout, "%s: converting blocks %d to %d into history\n", chain, first, target-1)
	start := time.Now()
	for {
		below, target, err := conv.ConvertHistory(ctx, chain, migrateBuckets)
		if err != nil {
			return fmt.Errorf("%s: convert blocks into history: %w", chain, err)
		}
		if below >= target {
			fmt.Fprintf(m.Stdout, "%s: history below block %d, rows above (done in %s)\n", chain, below, time.Since(start).Round(time.Millisecond))
			return nil
		}
		done := below - first
		left := time.Duration(float64(time.Since(start)) * float64(target-below) / float64(max(done, 1)))
		fmt.Fprintf(m.Stdout, "%s: history below block %d of %d (%d%%), about %s left\n",
			chain, below, target, 100*done/max(target-first, 1), left.Round(time.Second))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// backfill is a step of migrate that writes what a chain's history written
// by an earlier release lacks, a transaction at a time: step(0) says how
// many heights are left, step(1) does one transaction and says it again.
// The texts are formats of its start (chain, heights), progress (chain,
// heights left, %, time left) and end (chain, time), and its error's
// prefix.
type backfill struct {
	step                 func(ctx context.Context, chain chainquery.Chain, n int) (uint64, error)
	start, progress, end string
	failed               string
}

func (b backfill) run(ctx context.Context, m *Main, chain chainquery.Chain) error {
	todo, err := b.step(ctx, chain, 0) // where it stands
	if err != nil || todo == 0 {
		return err
	}
	fmt.Fprintf(m.Stdout, b.start+"\n", chain, todo)
	start := time.Now()
	for {
		left, err := b.step(ctx, chain, 1)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", chain, b.failed, err)
		}
		if left == 0 {
			fmt.Fprintf(m.Stdout, b.end+"\n", chain, time.Since(start).Round(time.Millisecond))
			return nil
		}
		done := todo - min(left, todo)
		eta := time.Duration(float64(time.Since(start)) * float64(left) / float64(max(done, 1)))
		fmt.Fprintf(m.Stdout, b.progress+"\n", chain, left, 100*done/todo, eta.Round(time.Second))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// indexLogHistory writes the log postings and the blocks' log counts of
// chain's history written before they existed, from the top down, 1,000
// blocks (a few seconds) a transaction.
func indexLogHistory(ctx context.Context, m *Main, conv historyConverter, chain chainquery.Chain) error {
	return backfill{step: conv.IndexLogHistory,
		start:    "%s: indexing the logs of %d blocks of history by address and topic, and counting them",
		progress: "%s: logs of %d blocks left to index (%d%%), about %s left",
		end:      "%s: logs indexed (done in %s)", failed: "index logs"}.run(ctx, m, chain)
}

// countEpochs writes the counts of the epochs of chain's traces and logs
// that an earlier release left without, from the lowest up, 10,000
// blocks (a second or so) a transaction.
func countEpochs(ctx context.Context, m *Main, conv historyConverter, chain chainquery.Chain) error {
	return backfill{step: conv.CountEpochs,
		start:    "%s: counting the traces and logs of %d blocks of history by address (and topic), 10,000 blocks at a time",
		progress: "%s: traces and logs of %d blocks left to count (%d%%), about %s left",
		end:      "%s: traces and logs counted (done in %s)", failed: "count traces and logs"}.run(ctx, m, chain)
}
