package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery/history"
)

// The posting lists of history's traces are pages (migration 0017,
// history/pages.go): per chain, direction, bucket and page
// (history.PagePart of the address), the lists of the page's addresses
// with their counts. trace_counts keeps the counts of blocks still rows
// and every bucket's count of all traces (CountAll): a bucket that the
// boundary cuts has the counts of its history blocks in pages and those of
// its rows in trace_counts.

// tracePages is the table of pages, written by BlockBatch.Insert.
var tracePages = Table{Name: "trace_pages", Columns: []string{"chain", "dir", "part", "bucket", "keys", "lists"}}

// allParts is the IN list of every page of a bucket: a bucket's pages are
// found by a search per page, the key leading (after the stretch) with the
// page.
var allParts = func() string {
	var b strings.Builder
	for i := range history.PageParts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}()

// TracePageEpoch is the buckets of a stretch of trace_pages_key, which
// leads with the stretch (bucket / TracePageEpoch, migration 0021), so
// that a commit's pages go to the last stretch rather than all over the
// index; every statement names the stretches it reads, for the index to
// seek by. The migrations write the expression out: they are to change
// together.
const TracePageEpoch = 10

// epochOf is the SQL of a bucket's stretch, as trace_pages_key has it
// (TestQueryPlans fails, a search on the chain alone, if the two differ).
var epochOf = "bucket / " + strconv.Itoa(TracePageEpoch)

// stretchOf is the stretch of bucket, as epochOf computes it.
func stretchOf(bucket int64) int64 { return bucket / TracePageEpoch }

// qBucketPages: chain, bucket, its stretch → dir, part, keys, lists of
// the bucket's pages.
var (
	qBucketPages = `SELECT dir, part, keys, lists FROM trace_pages
		WHERE chain = $1 AND ` + epochOf + ` = $3 AND dir IN (0, 1) AND part IN (` + allParts + `) AND bucket = $2`
	// qDeletePagesFrom: chain, bucket, its stretch → deletes the pages of
	// the buckets from there up (a thaw).
	qDeletePagesFrom = `DELETE FROM trace_pages WHERE chain = $1 AND ` + epochOf + ` >= $3 AND bucket >= $2`
)

// pageKey is a page of a chain.
type pageKey struct {
	dir, part int
	bucket    int64
}

// readBucketPages returns the pages of chain's bucket, decoded.
func readBucketPages(ctx context.Context, c Conn, chain, bucket int64) (map[pageKey][]history.PageEntry, error) {
	out := map[pageKey][]history.PageEntry{}
	var dir, part int
	var keys, lists []byte
	err := c.Query(ctx, qBucketPages, []any{chain, bucket, stretchOf(bucket)}, []any{&dir, &part, &keys, &lists}, func() error {
		es, err := history.DecodePage(keys, lists)
		if err != nil {
			return err
		}
		out[pageKey{dir, part, bucket}] = clonePage(es)
		return nil
	})
	return out, err
}

// clonePage copies entries whose bytes belong to a row being scanned.
func clonePage(es []history.PageEntry) []history.PageEntry {
	for i := range es {
		es[i].Addr = append([]byte(nil), es[i].Addr...)
		es[i].List = append([]byte(nil), es[i].List...)
	}
	return es
}

// deletePagesSQL: chain, bucket, its stretch, dir → deletes the bucket's
// pages in direction dir of parts: one statement for the pages a write
// takes in (historyBuilder.rows), which a statement a page made ~2,000
// round trips to PostgreSQL at each bucket a commit ended inside.
func deletePagesSQL(parts []int) string {
	return `DELETE FROM trace_pages WHERE chain = $1 AND ` + epochOf + ` = $3 AND dir = $4 AND part IN (` + partList(parts) + `) AND bucket = $2`
}

// partList is the SQL list of parts, literal integers: a statement for
// each set of pages, as the reads of pages are.
func partList(parts []int) string {
	in := make([]string, len(parts))
	for i, p := range parts {
		in[i] = strconv.Itoa(p)
	}
	return strings.Join(in, ", ")
}

// deletePages deletes pages, all of chain's bucket, a statement a run of
// one direction: historyBuilder.rows gives them in the key's order, so a
// statement a direction.
func deletePages(ctx context.Context, c Conn, chain, bucket int64, pages []pageKey) error {
	for i := 0; i < len(pages); {
		j, parts := i, []int(nil)
		for ; j < len(pages) && pages[j].dir == pages[i].dir; j++ {
			parts = append(parts, pages[j].part)
		}
		if _, err := c.Exec(ctx, deletePagesSQL(parts), chain, bucket, stretchOf(bucket), pages[i].dir); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// pagesSQL selects, for the addresses whose pages are parts, in direction
// $2, the bucket, page and keys (and lists, with lists) of their pages in
// the buckets $3 to $4, in bucket order: one stretch of the key a page
// and stretch of buckets (TracePageEpoch).
func pagesSQL(parts []int, first, last int64, lists bool) string {
	cols := "bucket, part, keys"
	if lists {
		cols += ", lists"
	}
	var stretches []string
	for e := stretchOf(first); e <= stretchOf(last); e++ {
		stretches = append(stretches, strconv.FormatInt(e, 10))
	}
	order := " ORDER BY bucket, part"
	if len(parts) == 1 {
		order = " ORDER BY " + epochOf + ", bucket" // the key's order: SQLite does not sort
	}
	return `SELECT ` + cols + ` FROM trace_pages WHERE chain = $1 AND ` + epochOf + ` IN (` + strings.Join(stretches, ", ") + `) AND dir = $2 AND part IN (` + partList(parts) + `)
		AND bucket BETWEEN $3 AND $4` + order
}

// readPages reads the entries of addrs in direction dir over the buckets
// first to last from their pages and calls each, in bucket order, with
// each bucket's entries found (lists with their lists, else counts
// alone; the caller's to keep, in the rows' copies, Conn). each returns
// errFound to stop, which readPages returns.
func readPages(ctx context.Context, c Conn, chain int64, dir int, addrs [][]byte, first, last int64, lists bool, each func(bucket int64, found []history.PageEntry) error) error {
	if first > last || len(addrs) == 0 {
		return nil
	}
	f := newPageFinds(addrs, each)
	if err := readPageRows(ctx, c, chain, dir, f.parts, first, last, lists, f.row); err != nil {
		return err
	}
	return f.end()
}

// readPageRows hands row the pages of parts in direction dir over the
// buckets first to last, in bucket order (data nil without lists).
func readPageRows(ctx context.Context, c Conn, chain int64, dir int, parts []int, first, last int64, lists bool, row func(bucket int64, part int, keys, data []byte) error) error {
	var bucket int64
	var part int
	var keys, data []byte
	dest := []any{&bucket, &part, &keys}
	if lists {
		dest = append(dest, &data)
	}
	return c.Query(ctx, pagesSQL(parts, first, last, lists), []any{chain, dir, first, last}, dest, func() error {
		return row(bucket, part, keys, data)
	})
}

// pageFinds finds addrs in the page rows handed to row in bucket order,
// and calls each with a bucket's entries found once its rows are done.
type pageFinds struct {
	addrs  [][]byte
	partOf []int
	parts  []int // the pages of addrs, in increasing order
	cur    int64
	found  []history.PageEntry
	each   func(bucket int64, found []history.PageEntry) error
}

func newPageFinds(addrs [][]byte, each func(bucket int64, found []history.PageEntry) error) *pageFinds {
	f := &pageFinds{addrs: addrs, partOf: make([]int, len(addrs)), cur: -1, each: each}
	for i, a := range addrs {
		f.partOf[i] = history.PagePart(a)
		if !slices.Contains(f.parts, f.partOf[i]) {
			f.parts = append(f.parts, f.partOf[i])
		}
	}
	slices.Sort(f.parts)
	return f
}

func (f *pageFinds) row(bucket int64, part int, keys, data []byte) error {
	if bucket != f.cur && len(f.found) > 0 {
		if err := f.each(f.cur, f.found); err != nil {
			return err
		}
		f.found = f.found[:0]
	}
	f.cur = bucket
	for i, a := range f.addrs {
		if f.partOf[i] != part {
			continue
		}
		e, ok, err := history.PageFind(keys, data, a)
		if err != nil {
			return err
		}
		if ok {
			f.found = append(f.found, e) // in data, a copy of the row's (Conn)
		}
	}
	return nil
}

// end hands each the last bucket's entries.
func (f *pageFinds) end() error {
	if len(f.found) > 0 {
		return f.each(f.cur, f.found)
	}
	return nil
}

// bucketCounts calls each with the number of the plan's matches in the
// buckets first to last, in bucket order, a bucket at a time (lo = hi)
// or, with epochs, the whole epochs of epoch_counts in history at a time
// (lo and hi their first and last buckets); those without matches may be
// left out. The counts come from the pages of history and the rows of
// trace_counts, whose counts a bucket the boundary cuts adds up. Without
// addresses, trace_counts counts them all. each returns errFound to stop,
// which bucketCounts returns.
func (s *Store) bucketCounts(ctx context.Context, tx Tx, p *TracePlan, first, last int64, epochs bool, each func(lo, hi, n int64) error) error {
	const b = TraceCountBlocks
	// rows reads trace_counts from bucket from on; a count held for the
	// bucket the boundary cuts is added to that bucket's row, or given
	// alone in its place when trace_counts has none.
	rows := func(from int64, held int64, heldN int64) error {
		if from > last {
			if held >= 0 {
				return each(held, held, heldN)
			}
			return nil
		}
		q := *p
		q.FirstBucket, q.LastBucket = from, last
		query, args := s.Dialect.TraceBuckets(&q)
		var bucket, n int64
		err := tx.Query(ctx, query, args, []any{&bucket, &n}, func() error {
			if held >= 0 && bucket >= held {
				h := held
				held = -1
				if bucket == h {
					return each(bucket, bucket, n+heldN)
				}
				if err := each(h, h, heldN); err != nil {
					return err
				}
			}
			return each(bucket, bucket, n)
		})
		if err == nil && held >= 0 {
			err = each(held, held, heldN)
		}
		return err
	}
	if len(p.Walk) == 0 || p.HistoryBelow <= first*b {
		return rows(first, -1, 0)
	}
	histLast := min(last, (p.HistoryBelow-1)/b)
	rowsFirst := max(first, p.HistoryBelow/b)
	cut, cutN := int64(-1), int64(0)
	pages := func(lo, hi int64) error {
		return readPages(ctx, tx, p.Chain, p.Dir(), p.Walk, lo, hi, false, func(bucket int64, found []history.PageEntry) error {
			var n int64
			for _, e := range found {
				n += e.N
			}
			if bucket >= rowsFirst { // the bucket the boundary cuts
				cut, cutN = bucket, n
				return nil
			}
			return each(bucket, bucket, n)
		})
	}
	// The whole epochs of the history buckets that epoch_counts holds
	// (never the bucket the boundary cuts: trace_epochs_below is at most
	// the boundary).
	const eb = TraceEpochBuckets
	eLo, eHi := int64(1), int64(0)
	if epochs {
		eLo, eHi = (first+eb-1)/eb, min((histLast+1)/eb, p.EpochsBelow/TraceEpochBlocks)-1
	}
	var err error
	if eLo > eHi {
		err = pages(first, histLast)
	} else {
		err = pages(first, eLo*eb-1)
		if err == nil {
			err = p.lists.epochSums(ctx, tx, p, eLo, eHi, func(e, n int64) error { return each(e*eb, e*eb+eb-1, n) })
		}
		if err == nil {
			err = pages((eHi+1)*eb, histLast)
		}
	}
	if err != nil {
		return err
	}
	return rows(rowsFirst, cut, cutN)
}

// bucketSum returns the plan's matches in its whole buckets FirstBucket to
// LastBucket (bucketCounts).
func (s *Store) bucketSum(ctx context.Context, tx Tx, p *TracePlan) (int, error) {
	if len(p.Walk) == 0 || p.HistoryBelow <= p.FirstBucket*TraceCountBlocks {
		var n int
		query, args := s.Dialect.TraceBucketSum(p)
		_, err := queryRow(ctx, tx, query, args, &n)
		return n, err
	}
	var sum int64
	err := s.bucketCounts(ctx, tx, p, p.FirstBucket, p.LastBucket, true, func(_, _, n int64) error {
		sum += n
		return nil
	})
	return int(sum), err
}

// convertTracePages is the step of migration 0017: it moves the lists of
// trace_counts into pages, bucket by bucket, and deletes the rows of
// addresses of the buckets wholly in history; in a bucket the boundary
// cuts, a row keeps the count of its rows' traces.
func convertTracePages(ctx context.Context, tx Tx) error {
	type boundary struct{ chain, below int64 }
	var bs []boundary
	var chain, below, bucket int64
	err := tx.Query(ctx, `SELECT chain, below FROM history WHERE below > 0 ORDER BY chain`, nil, []any{&chain, &below}, func() error {
		bs = append(bs, boundary{chain, below})
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range bs {
		var buckets []int64
		err := tx.Query(ctx, `SELECT DISTINCT bucket FROM trace_counts WHERE chain = $1 AND bucket <= $2 AND dir IN (0, 1)
			AND list IS NOT NULL ORDER BY bucket`, []any{c.chain, (c.below - 1) / TraceCountBlocks}, []any{&bucket}, func() error {
			buckets = append(buckets, bucket)
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range buckets {
			if err := convertBucket(ctx, tx, c.chain, k, k < c.below/TraceCountBlocks); err != nil {
				return fmt.Errorf("trace_counts of chain %d, bucket %d: %w", c.chain, k, err)
			}
		}
	}
	return nil
}

// convertBucket writes the pages of the lists of chain's bucket, and
// deletes their rows (whole: the bucket lies in history) or takes their
// lists' entries off their counts.
func convertBucket(ctx context.Context, tx Tx, chain, bucket int64, whole bool) error {
	type row struct {
		page  pageKey
		entry history.PageEntry
		n     int64 // the row's count
	}
	var rows []row
	var dir int
	var addr, list []byte
	var n int64
	err := tx.Query(ctx, `SELECT dir, address, n, list FROM trace_counts
		WHERE chain = $1 AND bucket = $2 AND dir IN (0, 1) AND list IS NOT NULL`,
		[]any{chain, bucket}, []any{&dir, &addr, &n, &list}, func() error {
			count, err := history.CountPostings(list, 0, math.MaxUint64)
			if err != nil {
				return err
			}
			a := bytes.Clone(addr)
			rows = append(rows, row{pageKey{dir, history.PagePart(a), bucket}, history.PageEntry{Addr: a, N: int64(count), List: bytes.Clone(list)}, n})
			return nil
		})
	if err != nil {
		return err
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.page.dir, b.page.dir), cmp.Compare(a.page.part, b.page.part), bytes.Compare(a.entry.Addr, b.entry.Addr))
	})
	var values []any
	var entries []history.PageEntry
	for i := 0; i < len(rows); {
		j := i
		entries = entries[:0]
		for ; j < len(rows) && rows[j].page == rows[i].page; j++ {
			entries = append(entries, rows[j].entry)
		}
		keys, lists, err := history.AppendPage(nil, nil, entries)
		if err != nil {
			return err
		}
		values = append(values, chain, rows[i].page.dir, rows[i].page.part, bucket, keys, lists)
		i = j
	}
	if err := insertValues(ctx, tx, tracePages, values); err != nil {
		return err
	}
	if whole {
		_, err := tx.Exec(ctx, `DELETE FROM trace_counts WHERE chain = $1 AND bucket = $2 AND dir IN (0, 1)`, chain, bucket)
		return err
	}
	for _, r := range rows {
		if r.n == r.entry.N {
			_, err = tx.Exec(ctx, `DELETE FROM trace_counts WHERE chain = $1 AND bucket = $2 AND dir = $3 AND address = $4`,
				chain, bucket, r.page.dir, r.entry.Addr)
		} else {
			_, err = tx.Exec(ctx, `UPDATE trace_counts SET n = $5, list = NULL WHERE chain = $1 AND bucket = $2 AND dir = $3 AND address = $4`,
				chain, bucket, r.page.dir, r.entry.Addr, r.n-r.entry.N)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// insertValues inserts the rows of values into t, a statement of up to 64
// rows at a time (a migration, with no BlockBatch to insert in bulk).
func insertValues(ctx context.Context, tx Conn, t Table, values []any) error {
	cols := len(t.Columns)
	for len(values) > 0 {
		k := min(len(values)/cols, 64)
		if _, err := tx.Exec(ctx, insertSQL(t, k), values[:k*cols]...); err != nil {
			return err
		}
		values = values[k*cols:]
	}
	return nil
}

// insertSQL is the INSERT of rows rows of t's columns, its placeholders
// numbered in row order.
func insertSQL(t Table, rows int) string {
	var q strings.Builder
	q.WriteString("INSERT INTO " + t.Name + " (" + strings.Join(t.Columns, ", ") + ") VALUES ")
	for r := range rows {
		if r > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(")
		for c := range t.Columns {
			if c > 0 {
				q.WriteString(", ")
			}
			q.WriteString("$" + strconv.Itoa(r*len(t.Columns)+c+1))
		}
		q.WriteString(")")
	}
	return q.String()
}
