package sqlstore

import (
	"bytes"
	"cmp"
	"slices"
)

// A write adds the logs of its blocks to a bucket of log_postings as rows
// of their own, one per key: the write's piece of the bucket (migration
// 0019). Appending to the bucket's rows instead rewrote every list of the
// bucket once per commit, ten times per bucket on a backfill that commits
// each bucket of trace_counts, and PostgreSQL kept each old row and its
// TOAST until a vacuum. Joining a finished bucket's pieces into one row
// rewrote them all once more, which cost about what the appends had
// (docs/benchmarks.md, issue 30). So a key's pieces stay rows of their
// own, and a read joins them (joinPieces): a key's pieces, in piece order,
// are byte for byte the list, topics and tags that appending them made.
//
// A row's piece is the offset in the bucket of the lowest block of the
// write that added it: the writes that add to a bucket add blocks above
// those it holds (a write below them first thaws and deletes the bucket's
// rows), so each write's piece is its own, and the pieces' order is the
// chain's.

// MaxLogPieces is the most rows a key can have in a bucket of
// log_postings: one per block.
const MaxLogPieces = LogBucketBlocks

// logSpan is the lowest and highest block a write adds to a bucket.
type logSpan struct{ lo, hi uint64 }

// piece is the piece of the bucket's rows that the write of s adds.
func (s logSpan) piece(bucket int64) int64 { return int64(s.lo) - bucket*LogBucketBlocks }

// span records block n, which a write adds to its bucket.
func (ls *logLists) span(bucket int64, n uint64) {
	if ls.spans == nil {
		ls.spans = map[int64]logSpan{}
	}
	s, ok := ls.spans[bucket]
	if !ok {
		s = logSpan{n, n}
	}
	ls.spans[bucket] = logSpan{min(s.lo, n), max(s.hi, n)}
}

// logPiece is a row of log_postings as a read of one bucket gets it.
type logPiece struct {
	key   []byte
	piece int64
	list  []byte
}

// joinPieces returns the lists of the pieces ps of one bucket, a key's
// pieces joined in piece order into one list: a page then reads the
// key's list from its offset on, its runs before passed by their
// headers, where separate pieces would each be read up to it and merged.
func joinPieces(ps []logPiece) [][]byte {
	slices.SortFunc(ps, func(a, b logPiece) int { return cmp.Or(bytes.Compare(a.key, b.key), cmp.Compare(a.piece, b.piece)) })
	var out [][]byte
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && bytes.Equal(ps[j].key, ps[i].key) {
			j++
		}
		if j == i+1 {
			out = append(out, ps[i].list)
		} else {
			var n int
			for _, p := range ps[i:j] {
				n += len(p.list)
			}
			list := make([]byte, 0, n)
			for _, p := range ps[i:j] {
				list = append(list, p.list...)
			}
			out = append(out, list)
		}
		i = j
	}
	return out
}
