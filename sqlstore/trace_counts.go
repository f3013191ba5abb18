package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/chainquery/chainquery"
)

// TraceCountBlocks is how many block heights one bucket of trace_counts
// covers: bucket = block number / TraceCountBlocks.
//
// trace_counts is there because Filter Traces must answer the exact number
// of matches, and an offset must start the page there: counting index
// entries, or walking them to the offset, costs as much as there are
// matches, which for a busy contract over a month is about a hundred
// million. It holds, per chain, direction (sender, recipient, or every
// trace), address and bucket, the number of traces; it is kept in the
// write transaction that writes or removes the traces (insertBlockRows,
// deleteBlocks), so it is exact in every snapshot a reader sees. A count
// is then the sum of the whole buckets in the range plus the index entries
// of the two partial buckets at its ends, and an offset skips whole
// buckets (and, without addresses, whole blocks by their trace_count)
// before the page walks the rest.
// A hundred keeps the edge
// walks short (a contract that is the recipient of a tenth of a Polygon
// block's ~900 traces has ~9,000 entries per bucket) while a month of
// Polygon (1.3 million blocks) is 13,000 buckets to add up. The migrations
// that create trace_counts fill it with the same value: it cannot change
// once a database holds rows.
const TraceCountBlocks = 100

// The directions of trace_counts. CountAll's rows have an empty address
// and count every trace of the bucket (the unfiltered Filter Traces).
const (
	CountFrom = 0 // traces by from_addr
	CountTo   = 1 // traces by to_addr (a trace without one is not counted)
	CountAll  = 2 // every trace
)

// BucketRow is one change to a row of a bucketed index: trace_counts, whose
// Kind is a direction (CountFrom, CountTo, CountAll) and Key an address
// (empty for CountAll), or log_postings and log_counts, whose Kind is a
// key kind (logKeyAddress...) and Key that key. N rows more (or fewer, when
// negative) in Bucket and, when List is not nil, the posting list of rows
// that became history, to append to the row's list (history.go). A row of
// log_postings appends Topics and Tags to the row's too: an address's
// topic0s (history/topics.go), empty for a topic0's list.
type BucketRow struct {
	Kind   int
	Key    []byte
	Bucket int64
	N      int64
	List   []byte
	Topics []byte
	Tags   []byte
}

// traceCountKey identifies a row of trace_counts within one chain.
type traceCountKey struct {
	dir    int
	addr   chainquery.Address
	bucket int64
}

// traceCounter adds up the trace_counts changes of the traces a write
// transaction inserts, so that each row is written once per transaction.
type traceCounter map[traceCountKey]int64

func (c traceCounter) add(block uint64, traces []*chainquery.Trace, all bool) {
	if len(traces) == 0 {
		return
	}
	bucket := int64(block / TraceCountBlocks)
	if all {
		c[traceCountKey{CountAll, chainquery.Address{}, bucket}] += int64(len(traces))
	}
	for _, t := range traces {
		c[traceCountKey{CountFrom, t.From, bucket}]++
		if t.To != nil {
			c[traceCountKey{CountTo, *t.To, bucket}]++
		}
	}
}

// rows returns the changes in key order (bucket, direction, address): the
// order of trace_counts' primary key, so that the writes go through the
// index in one pass.
func (c traceCounter) rows() []BucketRow {
	out := make([]BucketRow, 0, len(c))
	for k, n := range c {
		r := BucketRow{Kind: k.dir, Key: []byte{}, Bucket: k.bucket, N: n}
		if k.dir != CountAll {
			r.Key = bytes.Clone(k.addr[:])
		}
		out = append(out, r)
	}
	slices.SortFunc(out, compareCountKeys)
	return out
}

// compareCountKeys orders rows of trace_counts as its primary key does.
func compareCountKeys(a, b BucketRow) int {
	return cmp.Or(cmp.Compare(a.Bucket, b.Bucket), cmp.Compare(a.Kind, b.Kind), bytes.Compare(a.Key, b.Key))
}

// Bucketed reports whether the plan's count and offset use trace_counts:
// its range holds at least one whole bucket, and it is not a from+to filter
// (trace_counts counts one address at a time; such a count still walks the
// senders' index, see docs/storage.md).
func (p *TracePlan) Bucketed() bool {
	return len(p.Also) == 0 && p.FirstBucket <= p.LastBucket
}

// Dir is the direction of trace_counts that the plan's walks count.
func (p *TracePlan) Dir() int {
	switch {
	case len(p.Walk) == 0:
		return CountAll
	case p.FromIndex:
		return CountFrom
	}
	return CountTo
}

// setBuckets sets the whole buckets of the plan's range.
func (p *TracePlan) setBuckets() {
	const b = TraceCountBlocks
	p.FirstBucket = (p.Lo + b - 1) / b
	p.LastBucket = (p.Hi+1)/b - 1
}

// over returns a copy of the plan restricted to blocks lo to hi.
func (p *TracePlan) over(lo, hi int64) *TracePlan {
	q := *p
	q.Lo, q.Hi = lo, hi
	q.setBuckets()
	return &q
}

// countTraces returns the number of the plan's traces. Whole buckets come
// from trace_counts; a bucket the range covers in part is counted by the
// cheaper of two walks: of its blocks inside the range, or of those outside
// it, taken off the bucket's row. A range of 100 blocks across two buckets
// thus walks 50 blocks on average, not 100.
func (s *Store) countTraces(ctx context.Context, tx Tx, p *TracePlan) (int, error) {
	count := 0
	walk := func(lo, hi int64, sign int) error {
		if lo > hi {
			return nil
		}
		n, err := s.rangeCount(ctx, tx, p.over(lo, hi))
		count += sign * n
		return err
	}
	const b = TraceCountBlocks
	kLo, kHi := p.Lo/b, p.Hi/b
	if len(p.Also) > 0 || kHi-kLo <= 1 && (len(p.Walk) == 0 || p.Hi < p.HistoryBelow) {
		// A range over at most two buckets is counted in one statement:
		// without an address, the sum of its blocks' trace counts (at most
		// 200 rows); in history, the lists of its buckets. The rows and
		// walks below would read the same one bucket edge at a time and
		// add a statement for the sum.
		return count, walk(p.Lo, p.Hi, 1)
	}
	first, last := p.FirstBucket, p.LastBucket // the buckets whose rows are added
	var err error
	if kLo == kHi && first > last { // inside one bucket
		if in := p.Hi - p.Lo + 1; b-in < in {
			first, last = kLo, kLo
			err = errors.Join(walk(kLo*b, p.Lo-1, -1), walk(p.Hi+1, kLo*b+b-1, -1))
		} else {
			err = walk(p.Lo, p.Hi, 1)
		}
	} else {
		if out := p.Lo % b; out != 0 {
			if in := b - out; out < in {
				first = kLo
				err = walk(kLo*b, p.Lo-1, -1)
			} else {
				err = walk(p.Lo, kLo*b+b-1, 1)
			}
		}
		if in := p.Hi%b + 1; in != b && err == nil {
			if out := b - in; out < in {
				last = kHi
				err = walk(p.Hi+1, kHi*b+b-1, -1)
			} else {
				err = walk(kHi*b, p.Hi, 1)
			}
		}
	}
	if err != nil || first > last {
		return count, err
	}
	q := *p
	q.FirstBucket, q.LastBucket = first, last
	whole, err := s.bucketSum(ctx, tx, &q)
	return count + whole, err
}

// chooseSide makes a from+to plan walk the side with fewer matches, as
// trace_counts tells them over the buckets the range touches: the count and
// the page of such a filter walk every entry of the walked side in the
// range, whichever side that is.
func (s *Store) chooseSide(ctx context.Context, tx Tx, p *TracePlan) error {
	if len(p.Also) == 0 {
		return nil
	}
	const b = TraceCountBlocks
	matches := func(q TracePlan) (int, error) {
		q.Also, q.FirstBucket, q.LastBucket = nil, q.Lo/b, q.Hi/b
		return s.bucketSum(ctx, tx, &q)
	}
	senders, err := matches(*p)
	if err != nil {
		return err
	}
	r := *p
	r.WalkRecipients()
	recipients, err := matches(r)
	if err != nil {
		return err
	}
	if recipients < senders {
		p.WalkRecipients()
	}
	return nil
}

// errFound ends a walk over buckets or blocks once the offset is reached.
var errFound = errors.New("offset reached")

// skipOffset moves the plan's start forward past the matches its offset
// skips, as far as whole buckets and (without addresses) whole blocks
// allow, and lowers the offset to match: the page then walks at most a
// bucket's matches of its addresses, or a block's traces, before its rows.
// Where the store narrows its walks (Dialect.NarrowWalks) and the offset
// ends in a whole bucket, the same read of the buckets goes on to end the
// range where narrowWalks would, and narrowed reports it: the page needs
// no second read of trace_counts.
func (s *Store) skipOffset(ctx context.Context, tx Tx, p *TracePlan) (narrowed bool, err error) {
	const b = TraceCountBlocks
	all := len(p.Walk) == 0
	if p.Page.Offset == 0 || len(p.Also) > 0 {
		return false, nil
	}
	if !p.Bucketed() {
		if all {
			return false, skipBlocks(ctx, tx, p, p.Lo, p.Hi)
		}
		return false, nil
	}
	// The matches before the first whole bucket.
	before, err := s.countTraces(ctx, tx, p.over(p.Lo, p.FirstBucket*b-1))
	if err != nil {
		return false, err
	}
	if p.Page.Offset < before {
		if all {
			return false, skipBlocks(ctx, tx, p, p.Lo, p.FirstBucket*b-1)
		}
		return false, nil
	}
	p.Page.Offset -= before
	narrow := s.Dialect.NarrowWalks && !all
	start, end, err := s.skipBuckets(ctx, tx, p, narrow)
	if err != nil {
		return false, err
	}
	if start >= 0 {
		p.Lo = start * b
		if all {
			return false, skipBlocks(ctx, tx, p, p.Lo, p.Lo+b-1)
		}
		if narrow && end >= 0 {
			*p = *p.over(p.Lo, min(p.Hi, end*b+b-1))
		}
		return narrow, nil
	}
	// Past the last whole bucket: the page lies in the partial one after.
	p.Lo = (p.LastBucket + 1) * b
	if all {
		return false, skipBlocks(ctx, tx, p, p.Lo, p.Hi)
	}
	return false, nil
}

// skipBuckets skips p's offset over its whole buckets by trace_counts and
// the pages' counts: it returns the bucket where the offset falls (-1 when
// it falls past the last), with p.Page.Offset then counted from its start,
// and, when narrow, the bucket where the page ends, or the last of its
// epoch (-1 when past the last: narrowWalks' rule, from the offset's
// bucket on). Whole epochs are skipped by their rows of epoch_counts, and
// the one where the offset falls is then read a bucket at a time.
func (s *Store) skipBuckets(ctx context.Context, tx Tx, p *TracePlan, narrow bool) (start, end int64, err error) {
	start, end = -1, -1
	need := int64(0)           // the matches the page needs from the offset's bucket
	inside := [2]int64{-1, -1} // the epoch where the offset falls
	visit := func(lo, hi, n int64) error {
		if start < 0 {
			if int64(p.Page.Offset) >= n {
				p.Page.Offset -= int(n)
				return nil
			}
			if lo != hi {
				inside = [2]int64{lo, hi}
				return errFound
			}
			start = lo
			if !narrow {
				return errFound
			}
			need = int64(p.Page.Offset + p.Page.Limit)
		}
		if need -= n; need <= 0 {
			end = hi
			return errFound
		}
		return nil
	}
	// walk reports whether visit stopped it.
	walk := func(lo, hi int64, epochs bool) (bool, error) {
		err := s.bucketCounts(ctx, tx, p, lo, hi, epochs, visit)
		if errors.Is(err, errFound) {
			return true, nil
		}
		return false, err
	}
	stopped, err := walk(p.FirstBucket, p.LastBucket, true)
	if err != nil || !stopped || inside[0] < 0 {
		return start, end, err
	}
	if stopped, err = walk(inside[0], inside[1], false); err != nil || stopped || inside[1] >= p.LastBucket {
		return start, end, err
	}
	_, err = walk(inside[1]+1, p.LastBucket, true) // the page's end, past the epoch
	return start, end, err
}

// skipBlocks skips p's offset over whole blocks from lo to hi by their
// trace counts, moving p.Lo to the block where it falls.
func skipBlocks(ctx context.Context, tx Tx, p *TracePlan, lo, hi int64) error {
	var n int64
	var traces int
	err := tx.Query(ctx, qBlockTraceCounts, []any{p.Chain, lo, hi}, []any{&n, &traces}, func() error {
		if p.Page.Offset < traces {
			p.Lo = n
			return errFound
		}
		p.Page.Offset -= traces
		return nil
	})
	if errors.Is(err, errFound) {
		return nil
	}
	return err
}

// narrowWalks ends the range of the plan's address walks at the end of the
// first whole bucket by which the whole buckets from the range's start hold
// the page's offset+limit matches (Dialect.NarrowWalks): the matches in
// the range up to there are at least those, so the page lies inside it. The
// matches of a partial first bucket are left out of the sum, which only
// makes the range longer. A from+to filter is not narrowed: trace_counts
// has no counts of the pair. FindTraces skips it when skipOffset has
// already narrowed the range in its own read of the buckets.
func (s *Store) narrowWalks(ctx context.Context, tx Tx, p *TracePlan) error {
	if !s.Dialect.NarrowWalks || len(p.Walk) == 0 || len(p.Also) > 0 {
		return nil
	}
	q := p.over(p.Lo, p.Hi)
	if !q.Bucketed() {
		return nil // at most two partial buckets
	}
	const b = TraceCountBlocks
	need := int64(p.Page.Offset + p.Page.Limit)
	var end int64
	err := s.bucketCounts(ctx, tx, q, q.FirstBucket, q.LastBucket, true, func(_, hi, n int64) error {
		if need -= n; need <= 0 {
			end = hi
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		*p = *p.over(p.Lo, min(p.Hi, end*b+b-1))
		return nil
	}
	return err
}

// qBlockTraceCounts: chain, first, last → number, trace_count of the
// blocks between them, in number order.
const qBlockTraceCounts = `SELECT number, trace_count FROM blocks WHERE chain = $1 AND number BETWEEN $2 AND $3
	ORDER BY number`
