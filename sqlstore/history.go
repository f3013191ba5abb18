package sqlstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// DefaultRowBlocks is how many of a chain's highest blocks at least stay
// rows: the ingester's deepest reorg (ingest.EVMLoop.MaxReorgDepth), so
// that a reorg it handles never reaches history.
const DefaultRowBlocks = 256

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

// HistoryTables returns the tables a freeze fills, without rows: segments,
// the pages of the traces' posting lists (trace_pages.go) and their
// epochs' counts (trace_epochs.go).
func HistoryTables() []Table {
	return []Table{
		{Name: "history_segments", Columns: []string{"chain", "number", "kind", "data"}},
		tracePages,
		epochCounts,
	}
}

// HashPrefix is the key of a transaction hash in history_tx_hashes: its
// first 8 bytes as a signed integer. Two hashes that share it are told
// apart by the transaction segments they lead to.
func HashPrefix(h chainquery.Hash) int64 { return int64(binary.BigEndian.Uint64(h[:8])) }

// rowBlocks is how many of a chain's highest blocks stay rows: RowBlocks,
// or DefaultRowBlocks.
func (s *Store) rowBlocks() uint64 {
	if s.RowBlocks <= 0 {
		return DefaultRowBlocks
	}
	return uint64(s.RowBlocks)
}

// historyBelow returns the boundary of chain: blocks below it are history.
func (r reader) historyBelow(ctx context.Context) (int64, error) {
	var below int64
	_, err := queryRow(ctx, r.c, qHistoryBelow, []any{r.chain}, &below)
	return below, err
}

// freeze moves the boundary of chain up past every bucket that lies
// wholly RowBlocks or more under head, the highest stored block, at most
// maxFreezeBuckets buckets of blocks at a time.
func (s *Store) freeze(ctx context.Context, b BlockBatch, chain int64, head uint64) error {
	if s.RowBlocks < 0 || head < s.rowBlocks() {
		return nil
	}
	const n = TraceCountBlocks
	target := int64((head-s.rowBlocks()+1)/n) * n
	return s.freezeTo(ctx, b, chain, target, maxFreezeBuckets)
}

// freezeTo moves the boundary of chain up towards target, turning the
// rows of at most max buckets into history; stretches without blocks are
// passed in one step.
func (s *Store) freezeTo(ctx context.Context, b BlockBatch, chain, target int64, max int) error {
	const n = TraceCountBlocks
	below, err := s.reader(b, chain).historyBelow(ctx)
	if err != nil {
		return err
	}
	start := below
	for frozen := 0; below < target && frozen < max; frozen++ {
		var first *int64
		if _, err := queryRow(ctx, b, qFirstBlockFrom, []any{chain, below}, &first); err != nil {
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
		below = hi + 1
	}
	if below == start {
		return nil
	}
	_, err = b.Exec(ctx, qSetHistoryBelow, chain, below)
	return err
}

// freezeRange turns the rows of the blocks from lo to hi, which lie in one
// bucket, into history.
func (s *Store) freezeRange(ctx context.Context, b BlockBatch, chain, lo, hi int64) error {
	h := newHistoryBuilder(chain, false, s.hashChunk())
	for from := lo; from <= hi; from += freezeChunk {
		blocks, err := s.reader(b, chain).readRows(ctx, from, min(hi, from+freezeChunk-1))
		if err != nil {
			return err
		}
		if err := s.insertHistory(ctx, b, h, blocks, nil); err != nil {
			return err
		}
	}
	for _, q := range s.statements().deleteRows {
		if _, err := b.Exec(ctx, q, chain, lo, hi); err != nil {
			return err
		}
	}
	return h.flush(ctx, b)
}

// insertHistory inserts the segments and hash prefixes of blocks, given in
// number order, and adds their traces and logs to h's lists: of blocks[i]
// (canonical), or, where done (nil or as long as blocks) has it, of what
// PrepareBlocks made of it (blocks[i] is nil then).
func (s *Store) insertHistory(ctx context.Context, b BlockBatch, h *historyBuilder, blocks []*chainquery.BlockData, done []*prepared) error {
	ds, err := s.dictsOf(ctx, h.chain)
	if err != nil {
		return err
	}
	segs, err := encodeBlocks(blocks, done, ds)
	if err != nil {
		return err
	}
	if err := s.storeDicts(ctx, b, h.chain, segs); err != nil {
		return err
	}
	tables := HistoryTables()[:1]
	for i, d := range blocks {
		if d == nil {
			h.add(&tables[0], done[i].n, segs[i], &done[i].keys)
			continue
		}
		k := keysOf(d)
		h.add(&tables[0], d.Block.Number, segs[i], &k)
	}
	return b.Insert(ctx, tables)
}

// thaw moves the boundary of chain down to the start of the bucket that
// holds from, when from is below it: the history of the blocks from there
// up becomes rows again, so that a write or a rewind at from finds them
// where the rules of the rows expect them.
func (s *Store) thaw(ctx context.Context, b BlockBatch, chain int64, from uint64) error {
	below, err := s.reader(b, chain).historyBelow(ctx)
	if err != nil || int64(from) >= below {
		return err
	}
	lo := int64(from) / TraceCountBlocks * TraceCountBlocks
	blocks, err := s.reader(b, chain).readHistory(ctx, lo, below-1)
	if err != nil {
		return err
	}
	// The pages of the buckets from lo up hold these blocks' traces only;
	// as rows, their counts by address are trace_counts' again.
	if _, err := b.Exec(ctx, qDeletePagesFrom, chain, lo/TraceCountBlocks, stretchOf(lo/TraceCountBlocks)); err != nil {
		return err
	}
	for _, q := range qDeleteHistory {
		if _, err := b.Exec(ctx, q, chain, lo); err != nil {
			return err
		}
	}
	if err := cutHashRuns(ctx, b, chain, uint64(lo), s.hashChunk()); err != nil {
		return err
	}
	if err := insertBlockRows(ctx, b, chain, blocks, s.AmountArg, rowBodies|rowAddressCounts); err != nil {
		return err
	}
	// Rows have their log_count; blocks an earlier release wrote into
	// history below log_counts_from had none (log_count.go).
	if _, err := b.Exec(ctx, qCountRowLogs, chain, lo); err != nil {
		return err
	}
	if _, err := b.Exec(ctx, qSetHistoryBelow, chain, lo); err != nil {
		return err
	}
	// The pages readers keep are of this generation (page_cache.go).
	if _, err := b.Exec(ctx, qAddThaw, chain); err != nil {
		return err
	}
	if err := thawTraceEpochs(ctx, b, chain, lo); err != nil {
		return err
	}
	if err := thawLogEpochs(ctx, b, chain, lo); err != nil {
		return err
	}
	return s.thawLogs(ctx, b, chain, lo)
}

// FreezeHistory turns every block of chain below below, rounded up to a
// whole bucket, into history in one transaction, whatever RowBlocks is:
// the conversion of a database whose blocks are all rows, and the tests of
// history over blocks that a write would keep as rows.
func (s *Store) FreezeHistory(ctx context.Context, chain chainquery.Chain, below uint64) error {
	id, err := storeChainID(chain)
	if err != nil {
		return err
	}
	if err := s.flushAppend(ctx, id); err != nil {
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
	if _, err := s.closeTraceEpochs(ctx, b, id, math.MaxInt); err != nil {
		return err
	}
	if _, err := s.closeLogEpochs(ctx, b, id, math.MaxInt); err != nil {
		return err
	}
	return b.Commit(ctx)
}

// SetNodeHead records the head of the node an ingester of chain follows
// (chainquery.NodeHeadWriter): the blocks RowBlocks or more below it are
// final, and a write puts them straight into history.
func (s *Store) SetNodeHead(chain chainquery.Chain, head uint64) {
	if id, err := storeChainID(chain); err == nil {
		s.nodeHeads.Store(id, head)
	}
}

// finalBelow returns the height below which the blocks of chain go
// straight into history when written: RowBlocks under the node's head, 0
// when no ingester has told it (SetNodeHead).
func (s *Store) finalBelow(chain int64) int64 {
	v, ok := s.nodeHeads.Load(chain)
	if !ok || s.RowBlocks < 0 {
		return 0
	}
	head := v.(uint64)
	if head < s.rowBlocks() {
		return 0
	}
	return int64(min(head-s.rowBlocks()+1, math.MaxInt64))
}

// splitDirect returns, in number order, the blocks of a write (versions
// set) that go straight into history, the consecutive heights from its
// first that lie below finalBelow, and the rest, which go into rows. Rows stored below the first of those become history
// first, so that the boundary stays one height.
func (s *Store) splitDirect(ctx context.Context, b BlockBatch, chain int64, blocks []*chainquery.BlockData) (direct, rows []*chainquery.BlockData, err error) {
	defer func() {
		if err == nil {
			err = expand(rows) // prepared for history, but rows after all
		}
	}()
	final := s.finalBelow(chain)
	if final == 0 || len(blocks) == 0 {
		return nil, blocks, nil
	}
	sorted := slices.Clone(blocks)
	slices.SortStableFunc(sorted, func(x, y *chainquery.BlockData) int { return cmp.Compare(x.Block.Number, y.Block.Number) })
	// A run of consecutive heights from the first: a row stored in a gap
	// of the batch would end up below the boundary.
	k := 0
	for k < len(sorted) && int64(sorted[k].Block.Number) < final && (k == 0 || sorted[k].Block.Number == sorted[k-1].Block.Number+1) {
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
// headers as rows, their transactions, logs and traces as segments, their
// traces' counts and posting lists into trace_counts, and moves the
// boundary past them.
func (s *Store) writeHistory(ctx context.Context, b BlockBatch, chain int64, blocks []*chainquery.BlockData) error {
	if len(blocks) == 0 {
		return nil
	}
	h := newHistoryBuilder(chain, true, s.hashChunk())
	if err := s.addHistory(ctx, b, h, chain, blocks); err != nil {
		return err
	}
	return h.flush(ctx, b)
}

// addHistory is writeHistory but for the lists and counts, which it adds
// to h for its caller to flush: an append transaction (append.go) gathers
// those of many writes and flushes them once.
func (s *Store) addHistory(ctx context.Context, b BlockBatch, h *historyBuilder, chain int64, blocks []*chainquery.BlockData) error {
	if len(blocks) == 0 {
		return nil
	}
	if err := insertBlockRows(ctx, b, chain, blocks, s.AmountArg, rowHeaders); err != nil {
		return err
	}
	// One insert for the blocks whose segments are encoded (the
	// ingester's): on PostgreSQL each insert is a COPY and a round trip.
	// Those that are not are encoded freezeChunk at a time.
	var chunk []*chainquery.BlockData
	var done []*prepared
	raw := 0
	for i, d := range blocks {
		c, p := historyOf(d)
		chunk, done = append(chunk, c), append(done, p)
		if c != nil {
			raw++
		}
		if raw < freezeChunk && i < len(blocks)-1 {
			continue
		}
		if err := s.insertHistory(ctx, b, h, chunk, done); err != nil {
			return err
		}
		chunk, done, raw = chunk[:0], done[:0], 0
	}
	_, err := b.Exec(ctx, qSetHistoryBelow, chain, int64(blocks[len(blocks)-1].Block.Number)+1)
	return err
}

// ConvertHistory turns up to buckets buckets of chain's rows that lie
// RowBlocks or more below its highest block into history, in one
// transaction, and returns the boundary then and the one the conversion
// is heading for: `chainquery migrate` calls it until they meet, for a
// database whose blocks an earlier release stored as rows.
func (s *Store) ConvertHistory(ctx context.Context, chain chainquery.Chain, buckets int) (below, target uint64, err error) {
	id, err := storeChainID(chain)
	if err != nil {
		return 0, 0, err
	}
	head, err := s.HeadBlock(ctx, chain)
	if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
		return 0, 0, nil
	} else if err != nil {
		return 0, 0, err
	}
	if head+1 < s.rowBlocks() {
		return 0, 0, nil
	}
	const n = TraceCountBlocks
	to := int64((head+1-s.rowBlocks())/n) * n
	b, err := s.BeginBlocks(ctx, id, nil)
	if err != nil {
		return 0, 0, err
	}
	defer b.Rollback()
	if err := s.freezeTo(ctx, b, id, to, buckets); err != nil {
		return 0, 0, err
	}
	at, err := s.reader(b, id).historyBelow(ctx)
	if err != nil {
		return 0, 0, err
	}
	var first *int64 // where the rows start: below the first stored block, the boundary says nothing
	if _, err := queryRow(ctx, b, qFirstBlockFrom, []any{id, at}, &first); err != nil {
		return 0, 0, err
	}
	if first != nil && *first > at {
		at = min(*first, to)
	}
	return uint64(at), uint64(to), b.Commit(ctx)
}

// readRows returns the blocks stored as rows from lo to hi, in number order,
// as a freeze reads them (readHistory decodes them from history, as a thaw
// or a read does): each block's transactions, logs and traces in API
// order, with the block's number and nothing else of its header, whose row
// stays where it is.
func (r reader) readRows(ctx context.Context, lo, hi int64) ([]*chainquery.BlockData, error) {
	blocks, at, err := r.blocksIn(ctx, lo, hi)
	if err != nil {
		return nil, err
	}
	args := []any{r.chain, lo, hi}
	var t chainquery.Transaction
	txs := r.txScan(new(scan).counter(&t.BlockNumber), &t)
	err = r.c.Query(ctx, r.Dialect.RowTransactions, args, txs.dest, txs.each(func() error {
		d, err := at(t.BlockNumber)
		row := t
		d.Transactions = append(d.Transactions, &row)
		return err
	}))
	if err != nil {
		return nil, err
	}
	var l chainquery.Log
	logs := logScan(new(scan).counter(&l.BlockNumber).to(&l.TransactionIndex), &l)
	err = r.c.Query(ctx, qRowLogs, args, logs.dest, logs.each(func() error {
		d, err := at(l.BlockNumber)
		row := l
		d.Logs = append(d.Logs, &row)
		return err
	}))
	if err != nil {
		return nil, err
	}
	var tr chainquery.Trace
	traces := r.traceRowScan(&tr)
	err = r.c.Query(ctx, r.Dialect.RowTraces, args, traces.dest, traces.each(func() error {
		d, err := at(tr.BlockNumber)
		row := tr
		d.Traces = append(d.Traces, &row)
		return err
	}))
	return blocks, err
}

// readHistory returns the blocks kept as history from lo to hi, in number
// order.
func (r reader) readHistory(ctx context.Context, lo, hi int64) ([]*chainquery.BlockData, error) {
	blocks, at, err := r.blocksIn(ctx, lo, hi)
	if err != nil {
		return nil, err
	}
	var n int64
	var kind int
	var data []byte
	err = r.c.Query(ctx, qHistorySegments, []any{r.chain, lo, hi}, []any{&n, &kind, &data}, func() error {
		d, err := at(uint64(n))
		if err != nil {
			return err
		}
		switch kind {
		case segmentTransactions:
			d.Transactions, err = decodeSegment(ctx, r.Store, data, uint64(n), history.DecodeTransactions)
		case segmentLogs:
			d.Logs, err = decodeSegment(ctx, r.Store, data, uint64(n), history.DecodeLogs)
		case segmentTraces:
			d.Traces, err = decodeSegment(ctx, r.Store, data, uint64(n), history.DecodeTraces)
		default:
			err = fmt.Errorf("block %d: history segment of unknown kind %d", n, kind)
		}
		return err
	})
	return blocks, err
}

// blocksIn returns the blocks stored from lo to hi, each with only its
// number, and the function that finds one of them by number.
func (r reader) blocksIn(ctx context.Context, lo, hi int64) ([]*chainquery.BlockData, func(uint64) (*chainquery.BlockData, error), error) {
	var blocks []*chainquery.BlockData
	index := map[uint64]*chainquery.BlockData{}
	var n int64
	var traces int
	err := r.c.Query(ctx, qBlockTraceCounts, []any{r.chain, lo, hi}, []any{&n, &traces}, func() error {
		d := &chainquery.BlockData{Block: &chainquery.Block{Number: uint64(n), TraceCount: traces}}
		blocks = append(blocks, d)
		index[uint64(n)] = d
		return nil
	})
	at := func(n uint64) (*chainquery.BlockData, error) {
		if d := index[n]; d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("a row of block %d, which has no header", n)
	}
	return blocks, at, err
}

// The statements of the boundary. qHistoryBelow: chain → below, the
// boundary (no row: 0). qSetHistoryBelow: chain, below; it makes the row
// when missing. qFirstBlockFrom: chain, from → the lowest number stored
// at or above from, NULL when none.
const (
	qHistoryBelow    = `SELECT below FROM history WHERE chain = $1`
	qSetHistoryBelow = `INSERT INTO history (chain, below) VALUES ($1, $2) ON CONFLICT (chain) DO UPDATE SET below = excluded.below`
	qFirstBlockFrom  = `SELECT (SELECT number FROM blocks WHERE chain = $1 AND number >= $2 ORDER BY number LIMIT 1)`
	// qAddThaw: chain → one more thaw of its history.
	qAddThaw = `UPDATE history SET thaws = thaws + 1 WHERE chain = $1`
)

// qRowLogs: chain, lo, hi → block_number, tx_index, log_index, address,
// topic0 to topic3, data of the rows' logs, in (block_number, log_index)
// order (Dialect.RowTransactions and RowTraces are the others').
const qRowLogs = `SELECT block_number, tx_index, log_index, address, topic0, topic1, topic2, topic3, data
	FROM logs WHERE chain = $1 AND block_number BETWEEN $2 AND $3 ORDER BY block_number, tx_index, log_index`

// qDeleteHistory: chain, from (the start of a bucket). Run in order, they
// delete the segments and log postings of the blocks at or above from (a thaw; it deletes their pages with
// qDeletePagesFrom and cuts the hash runs with cutHashRuns).
var qDeleteHistory = []string{
	`DELETE FROM history_segments WHERE chain = $1 AND number >= $2`,
	`DELETE FROM log_postings WHERE chain = $1 AND bucket >= $2 / ` + strconv.Itoa(LogBucketBlocks),
}
