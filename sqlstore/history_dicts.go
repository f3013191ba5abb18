package sqlstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/chainquery/chainquery/history"
)

// A chain's transaction segments are compressed with dictionaries made of
// its own segments (history.Dict, migration 0018): once
// history.DictSamples segments have been written without one, their
// beginnings are the dictionary of the segments after them, and again
// every DictRefreshBlocks heights, so that a dictionary follows what the
// chain's blocks hold as the years go. A segment's zstd frame names its
// dictionary; history_dicts keeps every one a segment names, written in the
// transaction of the first segments that use it (insertHistory).
//
// Logs and traces are compressed without one since issue 30's session 28
// (their segments written before keep theirs, and are read as before): a
// frame with a dictionary decodes 1.4-2x slower, klauspost/compress
// running its assembly sequence decoder only without one, and the reads
// that decode logs or traces (a receipt, a block's logs, Filter Traces'
// pages) were up to 15% slower than before the dictionaries. Without them
// a Polygon-shaped block is ~12 KB larger; a transaction segment decodes
// in ~14 µs more with its dictionary, which saves ~3.6 KB
// (docs/benchmarks.md, issue 30, session 28).

// DictRefreshBlocks is how many heights a dictionary serves before the
// next one is made.
const DictRefreshBlocks = 1_000_000

// dictSampleEvery spreads a dictionary's samples over the blocks written:
// one segment in so many heights.
const dictSampleEvery = 16

// chainDicts is what a process knows of one chain's dictionaries.
type chainDicts struct {
	mu      sync.Mutex
	loaded  bool
	cur     [3]*history.Dict
	since   [3]int64 // the lowest height of cur's samples
	samples [3][][]byte
	first   [3]int64 // the height of samples[k][0]
}

// dictsOf returns the dictionaries of chain, loaded from the database on
// first use.
func (s *Store) dictsOf(ctx context.Context, chain int64) (*chainDicts, error) {
	v, _ := s.dicts.LoadOrStore(chain, &chainDicts{})
	ds := v.(*chainDicts)
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.loaded {
		return ds, nil
	}
	var kind int
	var since int64
	var content []byte
	err := s.Primary.Query(ctx, qChainDicts, []any{chain}, []any{&kind, &since, &content}, func() error {
		if kind < 0 || kind >= len(ds.cur) || ds.cur[kind] != nil && since <= ds.since[kind] {
			return nil
		}
		d, err := history.NewDict(append([]byte(nil), content...))
		if err != nil {
			return err
		}
		ds.cur[kind], ds.since[kind] = d, since
		return nil
	})
	if err != nil {
		return nil, err
	}
	ds.loaded = true
	return ds, nil
}

// current returns the dictionaries to compress a block's segments with,
// by kind (nil: none yet), and the heights they were made from.
func (ds *chainDicts) current() (dicts [3]*history.Dict, since [3]int64) {
	if ds == nil {
		return dicts, since
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.cur, ds.since
}

// sample offers block n's segment of kind toward the kind's next
// dictionary, when it has none or its one has served DictRefreshBlocks
// heights, and makes the dictionary once there are enough.
func (ds *chainDicts) sample(kind int, n uint64, seg []byte) {
	if ds == nil || n%dictSampleEvery != 0 {
		return
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.cur[kind] != nil && int64(n) < ds.since[kind]+DictRefreshBlocks {
		return
	}
	if len(ds.samples[kind]) == 0 {
		ds.first[kind] = int64(n)
	}
	ds.samples[kind] = append(ds.samples[kind], seg)
	if len(ds.samples[kind]) < history.DictSamples {
		return
	}
	content, err := history.DictContent(ds.samples[kind])
	ds.samples[kind] = nil
	if err != nil {
		return // a segment it cannot read back: no dictionary from these
	}
	if d, err := history.NewDict(content); err == nil {
		ds.cur[kind], ds.since[kind] = d, ds.first[kind]
	}
}

// storeDicts makes sure history_dicts holds the dictionaries of segs, in
// b's transaction, before the segments that name them.
func (s *Store) storeDicts(ctx context.Context, b BlockBatch, chain int64, segs []segments) error {
	seen := map[uint32]bool{}
	for _, seg := range segs {
		for kind, d := range seg.dicts {
			if d == nil || seen[d.ID] {
				continue
			}
			seen[d.ID] = true
			if _, err := b.Exec(ctx, qStoreDict, chain, kind, seg.since[kind], int64(d.ID), d.Content); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeSegment decodes a segment of block n with decode (ensureDict).
func decodeSegment[T any](ctx context.Context, s *Store, data []byte, n uint64, decode func([]byte, uint64) (T, error)) (T, error) {
	if err := s.ensureDict(ctx, data); err != nil {
		var zero T
		return zero, err
	}
	return decode(data, n)
}

// ensureDict registers the dictionary segment seg names, from the
// database, if this process has not: a server learns the dictionaries an
// ingester made as it meets their segments. It reads them from Read: a
// dictionary is committed with or before its first segments, so a
// replica that has a segment has its dictionary.
func (s *Store) ensureDict(ctx context.Context, seg []byte) error {
	id, ok := history.SegmentDict(seg)
	if ok {
		return nil
	}
	var content []byte
	found, err := queryRow(ctx, s.Read, qDictContent, []any{int64(id)}, &content)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: segment compressed with dictionary %d, which history_dicts does not hold", history.ErrCorrupt, id)
	}
	return history.RegisterDict(id, content)
}

// The statements of history_dicts. qChainDicts: chain → kind, since,
// content of its dictionaries. qStoreDict: chain, kind, since, id,
// content → the row, unless there. qDictContent: id → content.
const (
	qChainDicts  = `SELECT kind, since, content FROM history_dicts WHERE chain = $1 ORDER BY kind, since`
	qStoreDict   = `INSERT INTO history_dicts (chain, kind, since, id, content) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`
	qDictContent = `SELECT content FROM history_dicts WHERE id = $1`
)
