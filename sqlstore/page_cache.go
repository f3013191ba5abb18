package sqlstore

import (
	"context"

	"github.com/chainquery/chainquery/history"
)

// The pages of buckets wholly in history are kept in the decoded cache
// (history_cache.go) once read, by chain, bucket, direction and page,
// under history.thaws: a Filter Traces request by a hot address over 100
// blocks read the same two ~25 KB rows of trace_pages again each time,
// ~20% of serve's CPU on SQLite (docs/benchmarks.md, issue 31). A bucket's
// pages are written in the write that moves the boundary past its end and
// do not change after, unless a thaw deletes them: a thaw adds one to
// history.thaws, which every read reads with the boundary (traceBounds),
// so that an entry kept before it is never found again, whichever process
// thawed. Only reads of a few buckets are kept (listCacheBuckets): a walk
// over a long range would push the cache's other entries out.

// segmentPage is the decoded cache's kind of a page: segmentPage plus
// the direction times history.PageParts plus the page.
const segmentPage = 16

// pageRow is a page as read: its keys and lists, or none.
type pageRow struct {
	keys, lists []byte
	none        bool
}

func pageRowKey(chain int64, bucket int64, thaws int64, dir, part int) decodedKey {
	return decodedKey{chain: chain, number: uint64(bucket), version: int(thaws), kind: segmentPage + dir*history.PageParts + part}
}

// readPagesKept is readPages with lists, for a plan whose range lies in
// history, through the decoded cache where the buckets are whole history
// and few.
func (s *Store) readPagesKept(ctx context.Context, c Conn, p *TracePlan, dir int, addrs [][]byte, first, last int64, each func(bucket int64, found []history.PageEntry) error) error {
	if first > last || len(addrs) == 0 {
		return nil
	}
	if last-first+1 > listCacheBuckets || (last+1)*TraceCountBlocks > p.HistoryBelow {
		return readPages(ctx, c, p.Chain, dir, addrs, first, last, true, each)
	}
	f := newPageFinds(addrs, each)
	rows := make(map[decodedKey]*pageRow, int(last-first+1)*len(f.parts))
	all := true
	for b := first; b <= last; b++ {
		for _, part := range f.parts {
			k := pageRowKey(p.Chain, b, p.Thaws, dir, part)
			if v, ok := s.decoded.get(k); ok {
				rows[k] = v.(*pageRow)
			} else {
				all = false
			}
		}
	}
	if !all {
		err := readPageRows(ctx, c, p.Chain, dir, f.parts, first, last, true, func(bucket int64, part int, keys, data []byte) error {
			rows[pageRowKey(p.Chain, bucket, p.Thaws, dir, part)] = &pageRow{keys: keys, lists: data}
			return nil
		})
		if err != nil {
			return err
		}
		for b := first; b <= last; b++ {
			for _, part := range f.parts {
				k := pageRowKey(p.Chain, b, p.Thaws, dir, part)
				r := rows[k]
				if r == nil {
					r = &pageRow{none: true}
					rows[k] = r
				}
				s.decoded.put(k, r, int64(len(r.keys)+len(r.lists))+64)
			}
		}
	}
	for b := first; b <= last; b++ {
		for _, part := range f.parts {
			if r := rows[pageRowKey(p.Chain, b, p.Thaws, dir, part)]; !r.none {
				if err := f.row(b, part, r.keys, r.lists); err != nil {
					return err
				}
			}
		}
	}
	return f.end()
}
