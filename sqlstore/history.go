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
		{Name: "history_postings", Columns: []string{"chain", "bucket", "dir", "address", "list"}},
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

// freeze moves the boundary of chain up to below the bucket that holds
// the height TipBlocks under head, the highest stored block, at most
// maxFreezeBuckets buckets of blocks at a time.
func (s *SQLStore) freeze(ctx context.Context, b BlockBatch, chain int64, head uint64) error {
	if s.TipBlocks < 0 || head < s.tipBlocks() {
		return nil
	}
	const n = TraceCountBlocks
	target := int64((head-s.tipBlocks()+1)/n) * n // every bucket wholly at or below head-tip
	return s.freezeTo(ctx, b, chain, target, maxFreezeBuckets)
}

// freezeTo moves the boundary of chain up towards target (a multiple of
// TraceCountBlocks), freezing at most max buckets that hold blocks; empty
// stretches are skipped in one step.
func (s *SQLStore) freezeTo(ctx context.Context, b BlockBatch, chain, target int64, max int) error {
	const n = TraceCountBlocks
	below, err := s.historyBelow(ctx, b, chain)
	if err != nil {
		return err
	}
	start := below
	for frozen := 0; below < target && frozen < max; {
		var first *int64
		if _, err := queryRow(ctx, b, s.SQL.FirstBlockFrom, []any{chain, below}, &first); err != nil {
			return err
		}
		if first == nil || *first >= target {
			below = target
			break
		}
		below = *first / n * n
		if err := s.freezeBucket(ctx, b, chain, below); err != nil {
			return fmt.Errorf("freeze blocks %d to %d: %w", below, below+n-1, err)
		}
		below += n
		frozen++
	}
	if below == start {
		return nil
	}
	_, err = b.Exec(ctx, s.SQL.SetHistoryBelow, chain, below)
	return err
}

// freezeBucket turns the rows of the blocks from lo to lo+TraceCountBlocks-1
// into history.
func (s *SQLStore) freezeBucket(ctx context.Context, b BlockBatch, chain, lo int64) error {
	hi := lo + TraceCountBlocks - 1
	blocks, err := s.readTip(ctx, b, chain, lo, hi)
	if err != nil {
		return err
	}
	tables, err := historyRows(chain, blocks)
	if err != nil {
		return err
	}
	for _, q := range s.SQL.DeleteTip {
		if _, err := b.Exec(ctx, q, chain, lo, hi); err != nil {
			return err
		}
	}
	return b.Insert(ctx, tables)
}

// historyRows returns the rows of HistoryTables that hold blocks, the
// blocks of one bucket in number order.
func historyRows(chain int64, blocks []*chainquery.BlockData) ([]StoreTable, error) {
	tables := HistoryTables()
	segs, postings, hashes := &tables[0], &tables[1], &tables[2]
	type key struct {
		dir  int
		addr chainquery.Address
	}
	lists := map[key][]history.Posting{}
	var bucket int64
	for _, d := range blocks {
		n := d.Block.Number
		bucket = int64(n / TraceCountBlocks)
		txs, err := history.AppendTransactions(nil, d.Transactions)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", n, err)
		}
		logs, err := history.AppendLogs(nil, d.Logs)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", n, err)
		}
		traces, err := history.AppendTraces(nil, d.Traces)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", n, err)
		}
		segs.Values = append(segs.Values, chain, int64(n), segmentTransactions, txs,
			chain, int64(n), segmentLogs, logs, chain, int64(n), segmentTraces, traces)
		prefixes := map[int64]bool{} // one row a block for hashes that share one
		for _, t := range d.Transactions {
			if p := HashPrefix(t.Hash); !prefixes[p] {
				prefixes[p] = true
				hashes.Values = append(hashes.Values, chain, p, int64(n))
			}
		}
		pos, lastTx := uint32(0), -1
		for _, t := range d.Traces { // in API order: readTip's
			if t.TransactionIndex != lastTx {
				pos, lastTx = 0, t.TransactionIndex
			}
			p := history.Posting{Block: n, Tx: uint32(t.TransactionIndex), Pos: pos}
			lists[key{CountFrom, t.From}] = append(lists[key{CountFrom, t.From}], p)
			if t.To != nil {
				lists[key{CountTo, *t.To}] = append(lists[key{CountTo, *t.To}], p)
			}
			pos++
		}
	}
	keys := make([]key, 0, len(lists))
	for k := range lists {
		keys = append(keys, k)
	}
	// The primary key's order, so that the rows go into the table in one
	// pass.
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.dir, b.dir), bytes.Compare(a.addr[:], b.addr[:]))
	})
	for _, k := range keys {
		list, err := history.AppendPostings(nil, lists[k])
		if err != nil {
			return nil, err
		}
		postings.Values = append(postings.Values, chain, bucket, k.dir, bytes.Clone(k.addr[:]), list)
	}
	return tables, nil
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
	if err := insertBlockRows(ctx, b, chain, blocks, s.AmountArg, false); err != nil {
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
