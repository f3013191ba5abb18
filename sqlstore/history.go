package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// A chain's blocks live in two layouts. The tip, its highest blocks, is
// kept as rows (transactions, logs, traces and their indexes): reorgs
// happen there, and rows are cheap to delete. Below it, whole buckets of
// TraceCountBlocks heights are kept as history: each block's transactions,
// logs and traces as one compressed segment each (package history), the
// bucket's per-address posting lists of traces in place of the address
// indexes, and the transactions' hashes as 8-byte prefixes. A block's header
// row (blocks) and trace_counts are the same in both layouts, so that block
// ranges, versions and counts never need to know where the rows are.
//
// The boundary is one height per chain (the history table): every block
// below it is history, every block at or above it rows. It only moves in
// whole buckets. A write moves it up once a bucket lies TipBlocks below the
// highest stored block (freeze); a write or a rewind at a height below it
// moves it down first, turning the buckets from that height up back into
// rows (thaw), so that the rules of the tip (versions, rewinds, trace
// counts) apply to history unchanged.

// DefaultTipBlocks is how many of a chain's highest blocks at least stay
// rows: the ingester's deepest reorg (ingest.EVMLoop.MaxReorgDepth), so
// that a reorg it handles never reaches history.
const DefaultTipBlocks = 256

// freezeChunk is how many blocks a freeze reads back from rows at a time:
// a bucket's rows at Polygon's shape are ~100 MB once decoded, and the
// ingester shares its process with the writer.
const freezeChunk = 10

// maxFreezeBuckets bounds the buckets one write freezes: a database whose
// blocks are all rows (made by an earlier release, or with history off)
// catches up a few buckets a write instead of in one long transaction.
const maxFreezeBuckets = 4

// Kinds of segment a history block has, in history_segments.kind.
const (
	segmentTransactions = 0
	segmentLogs         = 1
	segmentTraces       = 2
)

// HistoryTables returns the tables a freeze fills, without rows, in the
// order a store inserts them.
func HistoryTables() []StoreTable {
	return []StoreTable{
		{Name: "history_segments", Columns: []string{"chain", "number", "kind", "data"}},
		{Name: "history_postings", Columns: []string{"chain", "bucket", "dir", "address", "part", "list"}},
		{Name: "history_tx_hashes", Columns: []string{"chain", "prefix", "block_number"}},
	}
}

// HashPrefix is the key of a transaction hash in history_tx_hashes: its
// first 8 bytes as a signed integer. Two hashes that share it are told
// apart by the transaction segments they lead to.
func HashPrefix(h chainquery.Hash) int64 { return int64(binary.BigEndian.Uint64(h[:8])) }

// tipBlocks is the store's tip depth: TipBlocks, or DefaultTipBlocks.
func (s *SQLStore) tipBlocks() uint64 {
	if s.TipBlocks <= 0 {
		return DefaultTipBlocks
	}
	return uint64(s.TipBlocks)
}

// historyBelow returns the boundary of chain: blocks below it are history.
func (s *SQLStore) historyBelow(ctx context.Context, c StoreConn, chain int64) (int64, error) {
	var below int64
	_, err := queryRow(ctx, c, s.SQL.HistoryBelow, []any{chain}, &below)
	return below, err
}

// freeze moves the boundary of chain up past every bucket that lies
// wholly TipBlocks or more under head, the highest stored block, at most
// maxFreezeBuckets buckets of blocks at a time.
func (s *SQLStore) freeze(ctx context.Context, b BlockBatch, chain int64, head uint64) error {
	if s.TipBlocks < 0 || head < s.tipBlocks() {
		return nil
	}
	const n = TraceCountBlocks
	target := int64((head-s.tipBlocks()+1)/n) * n
	return s.freezeTo(ctx, b, chain, target, maxFreezeBuckets)
}

// freezeTo moves the boundary of chain up towards target, turning the
// rows of at most max buckets into history; stretches without blocks are
// passed in one step.
func (s *SQLStore) freezeTo(ctx context.Context, b BlockBatch, chain, target int64, max int) error {
	const n = TraceCountBlocks
	below, err := s.historyBelow(ctx, b, chain)
	if err != nil {
		return err
	}
	start := below
	var pieces []int64 // buckets frozen here in part: their lists may need a merge
	for frozen := 0; below < target && frozen < max; frozen++ {
		var first *int64
		if _, err := queryRow(ctx, b, s.SQL.FirstBlockFrom, []any{chain, below}, &first); err != nil {
			return err
		}
		if first == nil || *first >= target {
			below = target
			break
		}
		lo := *first
		if lo/n > below/n { // nothing stored in the rest of below's bucket
			lo = lo / n * n
		} else {
			lo = below
		}
		hi := min(target, lo/n*n+n) - 1
		if err := s.freezeRange(ctx, b, chain, lo, hi); err != nil {
			return fmt.Errorf("freeze blocks %d to %d: %w", lo, hi, err)
		}
		if lo%n != 0 || hi != lo+n-1 {
			pieces = append(pieces, lo/n)
		}
		below = hi + 1
	}
	return s.moveBoundary(ctx, b, chain, start, below, pieces)
}

// freezeRange turns the rows of the blocks from lo to hi, which lie in one
// bucket, into history.
func (s *SQLStore) freezeRange(ctx context.Context, b BlockBatch, chain, lo, hi int64) error {
	h := newHistoryBuilder(chain, lo/TraceCountBlocks, lo)
	for from := lo; from <= hi; from += freezeChunk {
		blocks, err := s.readTip(ctx, b, chain, from, min(hi, from+freezeChunk-1))
		if err != nil {
			return err
		}
		tables := HistoryTables()
		for _, d := range blocks {
			if err := h.add(&tables[0], &tables[2], d); err != nil {
				return err
			}
		}
		if err := b.Insert(ctx, []StoreTable{tables[0], tables[2]}); err != nil {
			return err
		}
	}
	for _, q := range s.SQL.DeleteTip {
		if _, err := b.Exec(ctx, q, chain, lo, hi); err != nil {
			return err
		}
	}
	postings, err := h.postings()
	if err != nil {
		return err
	}
	return b.Insert(ctx, []StoreTable{postings})
}

// moveBoundary records the boundary of chain moved up from start to below,
// and merges the posting lists of each bucket of pieces (those where part
// of the bucket was just written as history) that now lies wholly below
// it: the bucket's earlier pieces, if any, are all there by then.
func (s *SQLStore) moveBoundary(ctx context.Context, b BlockBatch, chain, start, below int64, pieces []int64) error {
	if below == start {
		return nil
	}
	if _, err := b.Exec(ctx, s.SQL.SetHistoryBelow, chain, below); err != nil {
		return err
	}
	const n = TraceCountBlocks
	for _, k := range pieces {
		if k*n+n <= below {
			if err := s.mergeBucket(ctx, b, chain, k); err != nil {
				return fmt.Errorf("merge the posting lists of blocks %d to %d: %w", k*n, k*n+n-1, err)
			}
		}
	}
	return nil
}

// mergeBucket rewrites the posting lists of a bucket written in pieces
// (each piece's lists keyed by its first block, part) as one list per
// address and direction: a list's key costs as much as a short list, and a
// walk reads one row per bucket instead of one per piece.
func (s *SQLStore) mergeBucket(ctx context.Context, b BlockBatch, chain, bucket int64) error {
	type row struct {
		key  postingKey
		list []history.Posting
	}
	var rows []row
	pieces := 0
	var dir int
	var addr, data []byte
	var part int64
	err := b.Query(ctx, s.SQL.BucketPostings, []any{chain, bucket}, []any{&dir, &addr, &part, &data}, func() error {
		var k postingKey
		k.dir = dir
		if err := fixedBytes(k.addr[:], addr); err != nil {
			return err
		}
		ps, err := history.DecodePostings(data)
		if err != nil {
			return err
		}
		if len(rows) > 0 && rows[len(rows)-1].key == k {
			rows[len(rows)-1].list = append(rows[len(rows)-1].list, ps...)
			pieces++
			return nil
		}
		rows = append(rows, row{k, ps})
		return nil
	})
	if err != nil || pieces == 0 {
		return err
	}
	if _, err := b.Exec(ctx, s.SQL.DeleteBucketPostings, chain, bucket); err != nil {
		return err
	}
	t := HistoryTables()[1]
	for _, r := range rows {
		list, err := history.AppendPostings(nil, r.list)
		if err != nil {
			return err
		}
		t.Values = append(t.Values, chain, bucket, r.key.dir, bytes.Clone(r.key.addr[:]), bucket*TraceCountBlocks, list)
	}
	return b.Insert(ctx, []StoreTable{t})
}

// thaw moves the boundary of chain down to the start of the bucket that
// holds from, when from is below it: the history of the blocks from there
// up becomes rows again, so that a write or a rewind at from finds them
// where the tip's rules expect them.
func (s *SQLStore) thaw(ctx context.Context, b BlockBatch, chain int64, from uint64) error {
	below, err := s.historyBelow(ctx, b, chain)
	if err != nil || int64(from) >= below {
		return err
	}
	lo := int64(from) / TraceCountBlocks * TraceCountBlocks
	blocks, err := s.readHistory(ctx, b, chain, lo, below-1)
	if err != nil {
		return err
	}
	for _, q := range s.SQL.DeleteHistory {
		if _, err := b.Exec(ctx, q, chain, lo); err != nil {
			return err
		}
	}
	if err := insertBlockRows(ctx, b, chain, blocks, s.AmountArg, false, true); err != nil {
		return err
	}
	_, err = b.Exec(ctx, s.SQL.SetHistoryBelow, chain, lo)
	return err
}

// FreezeHistory turns every block of chain below below, rounded up to a
// whole bucket, into history in one transaction, whatever the tip depth:
// the conversion of a database whose blocks are all rows, and the tests of
// history over blocks that a write would keep as rows.
func (s *SQLStore) FreezeHistory(ctx context.Context, chain chainquery.Chain, below uint64) error {
	id, err := storeChainID(chain)
	if err != nil {
		return err
	}
	b, err := s.BeginBlocks(ctx, id, nil)
	if err != nil {
		return err
	}
	defer b.Rollback()
	const n = TraceCountBlocks
	target := int64(min(below, math.MaxInt64-n)+n-1) / n * n
	if err := s.freezeTo(ctx, b, id, target, math.MaxInt); err != nil {
		return err
	}
	return b.Commit(ctx)
}

// SetNodeHead records the head of the node an ingester of chain follows
// (chainquery.NodeHeadWriter): the blocks TipBlocks or more below it are
// final, and a write puts them straight into history.
func (s *SQLStore) SetNodeHead(chain chainquery.Chain, head uint64) {
	if id, err := storeChainID(chain); err == nil {
		s.nodeHeads.Store(id, head)
	}
}

// finalBelow returns the height below which the blocks of chain go
// straight into history when written: TipBlocks under the node's head, 0
// when no ingester has told it (SetNodeHead).
func (s *SQLStore) finalBelow(chain int64) int64 {
	v, ok := s.nodeHeads.Load(chain)
	if !ok || s.TipBlocks < 0 {
		return 0
	}
	head := v.(uint64)
	if head < s.tipBlocks() {
		return 0
	}
	return int64(min(head-s.tipBlocks()+1, math.MaxInt64))
}

// splitDirect returns, in number order, the blocks of a write (versions
// set) that go straight into history, those below finalBelow, and the rest,
// which go into rows. Rows stored below the first of those become history
// first, so that the boundary stays one height.
func (s *SQLStore) splitDirect(ctx context.Context, b BlockBatch, chain int64, blocks []*chainquery.BlockData) (direct, rows []*chainquery.BlockData, err error) {
	final := s.finalBelow(chain)
	if final == 0 || len(blocks) == 0 {
		return nil, blocks, nil
	}
	sorted := slices.Clone(blocks)
	slices.SortStableFunc(sorted, func(x, y *chainquery.BlockData) int { return cmp.Compare(x.Block.Number, y.Block.Number) })
	k := 0
	for k < len(sorted) && int64(sorted[k].Block.Number) < final {
		k++
	}
	if k == 0 {
		return nil, blocks, nil
	}
	if err := s.freezeTo(ctx, b, chain, int64(sorted[0].Block.Number), math.MaxInt); err != nil {
		return nil, nil, err
	}
	return sorted[:k], sorted[k:], nil
}

// writeHistory writes blocks (versions set, in number order, the first at
// the boundary or above it with nothing stored between) as history: their
// headers and trace counts as rows, their transactions, logs and traces as
// segments, posting lists per bucket, and moves the boundary past them.
func (s *SQLStore) writeHistory(ctx context.Context, b BlockBatch, chain int64, blocks []*chainquery.BlockData) error {
	if len(blocks) == 0 {
		return nil
	}
	if err := insertBlockRows(ctx, b, chain, blocks, s.AmountArg, true, false); err != nil {
		return err
	}
	start, err := s.historyBelow(ctx, b, chain)
	if err != nil {
		return err
	}
	const n = TraceCountBlocks
	end := int64(blocks[len(blocks)-1].Block.Number) + 1
	var pieces []int64
	for len(blocks) > 0 {
		first := blocks[0].Block.Number
		k := int64(first / n)
		m := 1
		for m < len(blocks) && int64(blocks[m].Block.Number/n) == k {
			m++
		}
		last := blocks[m-1].Block.Number
		if first%n != 0 || last%n != n-1 {
			pieces = append(pieces, k)
		}
		h := newHistoryBuilder(chain, k, int64(first))
		for i := 0; i < m; i += freezeChunk {
			tables := HistoryTables()
			for _, d := range blocks[i:min(m, i+freezeChunk)] {
				if err := h.add(&tables[0], &tables[2], canonical(d)); err != nil {
					return err
				}
			}
			if err := b.Insert(ctx, []StoreTable{tables[0], tables[2]}); err != nil {
				return err
			}
		}
		postings, err := h.postings()
		if err != nil {
			return err
		}
		if err := b.Insert(ctx, []StoreTable{postings}); err != nil {
			return err
		}
		blocks = blocks[m:]
	}
	return s.moveBoundary(ctx, b, chain, start, end, pieces)
}
