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

// countEpochs writes the counts of the epochs of chain's traces that
// an earlier release left without, from the lowest up.
func countEpochs(ctx context.Context, m *Main, conv historyConverter, chain chainquery.Chain) error {
	todo, err := conv.CountEpochs(ctx, chain, 0) // where it stands
	if err != nil || todo == 0 {
		return err
	}
	fmt.Fprintf(m.Stdout, "%s: counting the traces and logs of %d blocks of history by address (and topic), 10,000 blocks at a time\n", chain, todo)
	start := time.Now()
	for {
		left, err := conv.CountEpochs(ctx, chain, 1) // 10,000 blocks, a second or so
		if err != nil {
			return fmt.Errorf("%s: count traces: %w", chain, err)
		}
		if left == 0 {
			fmt.Fprintf(m.Stdout, "%s: traces and logs counted (done in %s)\n", chain, time.Since(start).Round(time.Millisecond))
			return nil
		}
		done := todo - min(left, todo)
		eta := time.Duration(float64(time.Since(start)) * float64(left) / float64(max(done, 1)))
		fmt.Fprintf(m.Stdout, "%s: traces and logs of %d blocks left to count (%d%%), about %s left\n", chain, left, 100*done/todo, eta.Round(time.Second))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
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

// indexLogHistory writes the log postings and the blocks' log counts of
// chain's history written before they existed, from the top down.
func indexLogHistory(ctx context.Context, m *Main, conv historyConverter, chain chainquery.Chain) error {
	todo, err := conv.IndexLogHistory(ctx, chain, 0) // where it stands
	if err != nil || todo == 0 {
		return err
	}
	fmt.Fprintf(m.Stdout, "%s: indexing the logs of %d blocks of history by address and topic, and counting them\n", chain, todo)
	start := time.Now()
	for {
		left, err := conv.IndexLogHistory(ctx, chain, 1) // 1,000 blocks, a few seconds
		if err != nil {
			return fmt.Errorf("%s: index logs: %w", chain, err)
		}
		if left == 0 {
			fmt.Fprintf(m.Stdout, "%s: logs indexed (done in %s)\n", chain, time.Since(start).Round(time.Millisecond))
			return nil
		}
		done := todo - min(left, todo)
		eta := time.Duration(float64(time.Since(start)) * float64(left) / float64(max(done, 1)))
		fmt.Fprintf(m.Stdout, "%s: logs of %d blocks left to index (%d%%), about %s left\n", chain, left, 100*done/todo, eta.Round(time.Second))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
