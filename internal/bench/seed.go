package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/sqlite"
	"github.com/chainquery/chainquery/sqlstore"
)

// historyStore is what SeedCopies needs of a store: its statements, its
// freeze and its epochs' backfill.
type historyStore interface {
	chainquery.Store
	FreezeHistory(ctx context.Context, chain chainquery.Chain, below uint64) error
	CountEpochs(ctx context.Context, chain chainquery.Chain, epochs int) (uint64, error)
}

// writeConn returns the connection of st's writes.
func writeConn(st chainquery.Store) (sqlstore.Conn, error) {
	switch s := st.(type) {
	case *sqlite.DB:
		return s.Write, nil
	case *postgres.DB:
		return s.Write, nil
	}
	return nil, fmt.Errorf("%T is no SQL store", st)
}

// SeedCopies makes the history of chain in the store at dsn, blocks first
// (the start of an epoch of sqlstore.TraceEpochBlocks) to last, copies
// times longer (nothing when the store already holds the copies): the
// blocks are first made history up to the end of last's epoch (so the
// heights copied, span, are whole epochs, the last maybe holding no
// blocks at its end), then copy k of block n is block n + k × span,
// stamped k × span block times later. What a count over a long range
// reads is copied: the blocks' headers (a datetime range's ends, the
// counts of every trace), trace_counts' rows of every trace, and the
// epochs' counts by address (epoch_counts, which the copy's pages would
// add up to, the addresses' numbers of traces being the same). The first
// pageCopies copies also get the pages of the posting lists (their
// entries moved by k × span), so that a range that ends in them is
// counted and paged at its ends as in a store that holds them. No copy
// gets segments: a page of traces must lie in the blocks stored first.
func SeedCopies(ctx context.Context, dsn string, chain chainquery.Chain, first, last int64, copies, pageCopies int, progress func(string)) error {
	st, err := openStore(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	h, ok := st.(historyStore)
	if !ok {
		return fmt.Errorf("%T keeps no history", st)
	}
	s, err := writeConn(st)
	if err != nil {
		return err
	}
	head, err := h.HeadBlock(ctx, chain)
	if err != nil {
		return err
	}
	const e = sqlstore.TraceEpochBlocks
	span := copyStride(first, last)
	if first%e != 0 {
		return fmt.Errorf("block %d starts no epoch of %d", first, e)
	} else if int64(head) == last+int64(copies)*span {
		return nil // seeded
	} else if int64(head) != last {
		return fmt.Errorf("the store holds blocks up to %d, not %d", head, last)
	}
	if err := h.FreezeHistory(ctx, chain, uint64(first+span)); err != nil {
		return err
	}
	for {
		left, err := h.CountEpochs(ctx, chain, 1)
		if err != nil {
			return err
		}
		if left == 0 {
			break
		}
	}
	id := int64(chain.ID())
	var t0, t1 int64
	if err := queryOne(ctx, s, `SELECT timestamp FROM blocks WHERE chain = $1 AND number = $2`, []any{id, first}, &t0); err != nil {
		return err
	}
	if err := queryOne(ctx, s, `SELECT timestamp FROM blocks WHERE chain = $1 AND number = $2`, []any{id, last}, &t1); err != nil {
		return err
	}
	tspan := (t1 - t0) / (last - first) * span
	cols := sqlstore.BlockTables()[0].Columns
	sel := strings.Join(cols, ", ")
	sel = strings.Replace(sel, "number,", "number + $3,", 1)
	sel = strings.Replace(sel, "timestamp,", "timestamp + $4,", 1)
	for k := int64(1); k <= int64(copies); k++ {
		if progress != nil {
			progress(fmt.Sprintf("seed: copy %d of %d, blocks %d to %d", k, copies, first+k*span, last+k*span))
		}
		steps := []struct {
			q    string
			args []any
		}{
			{`INSERT INTO blocks (` + strings.Join(cols, ", ") + `) SELECT ` + sel + ` FROM blocks WHERE chain = $1 AND number BETWEEN $2 AND $5`,
				[]any{id, first, k * span, k * tspan, last}},
			{`INSERT INTO trace_counts (chain, bucket, dir, address, n, list) SELECT chain, bucket + $3, dir, address, n, list
				FROM trace_counts WHERE chain = $1 AND bucket BETWEEN $2 AND $4 AND dir = 2`,
				[]any{id, first / sqlstore.TraceCountBlocks, k * span / sqlstore.TraceCountBlocks, last / sqlstore.TraceCountBlocks}},
			{`INSERT INTO epoch_counts (chain, space, part, epoch, counts) SELECT chain, space, part, epoch + $3, counts
				FROM epoch_counts WHERE chain = $1 AND epoch BETWEEN $2 AND $4`,
				[]any{id, first / e, k * span / e, last / e}},
		}
		for _, st := range steps {
			if _, err := s.Exec(ctx, st.q, st.args...); err != nil {
				return fmt.Errorf("copy %d: %w", k, err)
			}
		}
		if k <= int64(pageCopies) {
			if err := copyPages(ctx, s, id, first, last, k*span); err != nil {
				return fmt.Errorf("copy %d: %w", k, err)
			}
			if err := copyLogLists(ctx, s, id, first, last, k*span); err != nil {
				return fmt.Errorf("copy %d: %w", k, err)
			}
		}
		top := first + (k+1)*span
		if _, err := s.Exec(ctx, `UPDATE history SET below = $2, trace_epochs_below = $2, log_epochs_below = $2 WHERE chain = $1`, id, top); err != nil {
			return err
		}
	}
	return nil
}

// copyPages copies the pages of chain's trace lists of blocks first to
// last shift heights up, their entries moved with them, a bucket at a time.
func copyPages(ctx context.Context, s sqlstore.Conn, chain, first, last, shift int64) error {
	const b = sqlstore.TraceCountBlocks
	var dir, part int
	var keys, lists []byte
	for bucket := first / b; bucket <= last/b; bucket++ {
		var values []any
		err := s.Query(ctx, `SELECT dir, part, keys, lists FROM trace_pages WHERE chain = $1 AND bucket / 10 = $3 AND bucket = $2`,
			[]any{chain, bucket, bucket / sqlstore.TracePageEpoch}, []any{&dir, &part, &keys, &lists}, func() error {
				es, err := history.DecodePage(keys, lists)
				if err != nil {
					return err
				}
				for i := range es {
					ps, err := history.DecodePostings(es[i].List)
					if err != nil {
						return err
					}
					for j := range ps {
						ps[j].Block += uint64(shift)
					}
					if es[i].List, err = history.AppendPostings(nil, ps); err != nil {
						return err
					}
				}
				k, l, err := history.AppendPage(nil, nil, es)
				values = append(values, chain, dir, part, bucket+shift/b, k, l)
				return err
			})
		if err != nil {
			return err
		}
		for len(values) > 0 {
			n := min(len(values)/6, 64)
			q := `INSERT INTO trace_pages (chain, dir, part, bucket, keys, lists) VALUES ` + valuesList(n, 6)
			if _, err := s.Exec(ctx, q, values[:n*6]...); err != nil {
				return err
			}
			values = values[n*6:]
		}
	}
	return nil
}

// copyLogLists copies the rows of log_postings of chain's blocks first to
// last shift heights up, their lists' entries moved with them (the
// topics and tags of an address's entries stay as they are, entry for
// entry), a bucket at a time.
func copyLogLists(ctx context.Context, s sqlstore.Conn, chain, first, last, shift int64) error {
	const b = sqlstore.LogBucketBlocks
	var kind int
	var n int64
	var key, topics, list, tags []byte
	for bucket := first / b; bucket <= last/b; bucket++ {
		var values []any
		err := s.Query(ctx, `SELECT kind, key, n, topics, list, tags FROM log_postings WHERE chain = $1 AND bucket = $2`,
			[]any{chain, bucket}, []any{&kind, &key, &n, &topics, &list, &tags}, func() error {
				ps, err := history.DecodePostings(list)
				if err != nil {
					return err
				}
				for j := range ps {
					ps[j].Block += uint64(shift)
				}
				l, err := history.AppendPostings(nil, ps)
				values = append(values, chain, kind, bytes.Clone(key), bucket+shift/b, n, append([]byte{}, topics...), l, append([]byte{}, tags...))
				return err
			})
		if err != nil {
			return err
		}
		for len(values) > 0 {
			n := min(len(values)/8, 64)
			q := `INSERT INTO log_postings (chain, kind, key, bucket, n, topics, list, tags) VALUES ` + valuesList(n, 8)
			if _, err := s.Exec(ctx, q, values[:n*8]...); err != nil {
				return err
			}
			values = values[n*8:]
		}
	}
	return nil
}

// valuesList is the VALUES of rows rows of cols columns, numbered.
func valuesList(rows, cols int) string {
	var b strings.Builder
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "$%d", r*cols+c+1)
		}
		b.WriteString(")")
	}
	return b.String()
}

// queryOne runs a statement of one row into dest.
func queryOne(ctx context.Context, s sqlstore.Conn, q string, args []any, dest ...any) error {
	found := false
	err := s.Query(ctx, q, args, dest, func() error { found = true; return nil })
	if err == nil && !found {
		err = fmt.Errorf("no row: %s", q)
	}
	return err
}

// copyStride is the heights SeedCopies copies blocks first to last by:
// whole epochs.
func copyStride(first, last int64) int64 {
	const e = sqlstore.TraceEpochBlocks
	return (last - first + e) / e * e
}

// CopyWorkloads are Filter Traces by c's hot recipient (a tenth of the
// calls) and Filter Logs by the same hot contract (its ~40 logs a block,
// a busy token's Transfers) over the datetime range of the blocks of c and
// copies copies of them (SeedCopies), and over its first sixteenth: a
// page of 50 at offset 0, which lies in c's own blocks.
func CopyWorkloads(c *polychain.Chain, copies int) []Workload {
	first, last := int64(c.First()), int64(c.Last())
	span := copyStride(first, last)
	tspan := (c.Time(c.Last()) - c.Time(c.First())) / (last - first) * span
	dt := func(ts int64) string { return time.Unix(ts, 0).UTC().Format(time.RFC3339) }
	hot := FindAddresses(c).Hot
	var out []Workload
	total := span * int64(copies+1)
	for _, blocks := range []int64{total, total / 16} {
		// Block first+blocks-1 of copy k is block first+(blocks-1)%span of c.
		end := first + (blocks-1)%span
		k := (blocks - 1) / span
		f := filterBody{FromDatetime: dt(c.Time(c.First())), ToDatetime: dt(c.Time(uint64(end)) + k*tspan), ToAddress: hot}
		out = append(out, Workload{Name: fmt.Sprintf("Filter Traces, hot to_address, %d heights of history, offset 0", blocks),
			Targets: []vegeta.Target{f.target(50, 0)}, Count: -1})
		l := logBody{FromDatetime: f.FromDatetime, ToDatetime: f.ToDatetime, Address: hot}
		out = append(out, Workload{Name: fmt.Sprintf("Filter Logs, hot address, %d heights of history, offset 0", blocks),
			Targets: []vegeta.Target{l.target(50, 0)}, Count: -1})
	}
	return out
}

// CountOf asks s for the count of t's answer, a list.
func CountOf(ctx context.Context, s *Server, t vegeta.Target) (int64, error) {
	return countOf(ctx, s, t)
}
