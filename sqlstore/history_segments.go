package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// traceKey names a list of trace_counts within a chain. Its fields leave
// no padding, so that the map of postingLists hashes it as one run of
// bytes.
type traceKey struct {
	bucket int64
	addr   chainquery.Address
	page   int32 // direction << 16 | history.PagePart(addr)
}

// compareTraceKeys orders lists by page (bucket, direction, part), then
// address: the order of the entries of a page.
func compareTraceKeys(a, b *traceKey) int {
	return cmp.Or(cmp.Compare(a.bucket, b.bucket), cmp.Compare(a.page, b.page), bytes.Compare(a.addr[:], b.addr[:]))
}

// historyBuilder makes the history rows of blocks, given in number order:
// each block's segments as it comes, and at flush the run of the hash
// index of their transactions (hash_runs.go) and the posting lists (and,
// when counted, the counts) of their traces for trace_counts, which flush
// appends to the rows there.
type historyBuilder struct {
	chain   int64
	counted bool                // the traces are not counted yet: flush adds CountAll's rows too
	chunk   int64               // Store.hashChunk: flush's merges of hash runs
	hashes  []history.HashEntry // the transactions' hash prefixes, made a run by flush
	lists   postingLists[traceKey]
	all     map[int64]int64  // every trace, by bucket (counted only)
	firsts  map[int64]uint64 // the lowest block added, by bucket
	logs    logLists

	pages  Table       // the trace pages of the buckets flushTraces ended, written by flush
	counts []BucketRow // and their CountAll rows
}

// builders keeps flushed builders with the room of their arenas: a
// bucket's lists are ~200,000 entries, grown anew for every write
// otherwise. Not a sync.Pool: that empties at every other collection, and
// an ingester collects several times between two flushes (a bucket's
// write), so the pool was empty when a write asked and the arenas were
// 12% of the ingester's allocation (docs/benchmarks.md, issue 30, session
// 18).
var builders struct {
	mu   sync.Mutex
	free []*historyBuilder
}

// keptBuilders is the most builders kept (one an ingesting chain), and
// keptEntries the most entries one may have room for and be kept: a
// conversion's builder (ConvertHistory) can be far larger than a
// bucket's.
const keptBuilders, keptEntries = 4, 1 << 20

// newHistoryBuilder returns an empty builder; its flush gives it back.
// Its flush merges hash runs chunk entries at a time (Store.hashChunk).
func newHistoryBuilder(chain int64, counted bool, chunk int64) *historyBuilder {
	builders.mu.Lock()
	var h *historyBuilder
	if n := len(builders.free); n > 0 {
		h = builders.free[n-1]
		builders.free = builders.free[:n-1]
	}
	builders.mu.Unlock()
	if h == nil {
		h = &historyBuilder{all: map[int64]int64{}, firsts: map[int64]uint64{}}
	}
	h.chain, h.counted, h.chunk = chain, counted, chunk
	return h
}

// segments is a block's three history segments, encoded.
type segments struct {
	txs, logs, traces []byte
	dicts             [3]*history.Dict // the dictionaries they are compressed with, by kind
	since             [3]int64         // the heights those were made from
}

// PrepareBlocks encodes the segments of those of blocks that a write will
// put straight into history, those below finalBelow now
// (chainquery.BlockPreparer): compressing them is most of a history
// write's work, done here on the ingester's fetching goroutines, side by
// side, rather than by the writer, which the others wait for. A block the
// write finds unprepared (finalBelow moved, or its encoding failed) is
// encoded then. A prepared block keeps only its header (compact): the
// write needs no more, and expands it from its segments if it must store
// it as rows after all.
func (s *Store) PrepareBlocks(chain chainquery.Chain, blocks []*chainquery.BlockData) {
	id, err := storeChainID(chain)
	if err != nil {
		return
	}
	final := s.finalBelow(id)
	ds, _ := s.dictsOf(context.Background(), id) // none: the write encodes again
	for _, d := range blocks {
		if int64(d.Block.Number) >= final || ds == nil {
			continue
		}
		c := canonical(d)
		if seg, err := encodeBlock(c, ds); err == nil {
			d.Prepared = &prepared{n: d.Block.Number, seg: seg, keys: keysOf(c)}
			compact(d)
		}
	}
}

// historyOf returns what PrepareBlocks made of d, or, when it made
// nothing, d's canonical form to make it of.
func historyOf(d *chainquery.BlockData) (*chainquery.BlockData, *prepared) {
	if p, ok := d.Prepared.(*prepared); ok {
		return nil, p
	}
	return canonical(d), nil
}

// encodeBlocks encodes the segments of blocks (canonical), but for those
// done gives (done may be nil; blocks[i] is nil where done[i] is not), on
// as many goroutines as there are CPUs: compressing them is most of a
// history write's work, and the writer is the ingester's one goroutine
// that the others wait for.
func encodeBlocks(blocks []*chainquery.BlockData, done []*prepared, ds *chainDicts) ([]segments, error) {
	out := make([]segments, len(blocks))
	errs := make([]error, len(blocks))
	for i := range done {
		if done[i] != nil {
			out[i] = done[i].seg
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(blocks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(blocks); i = int(next.Add(1) - 1) {
				if done == nil || done[i] == nil {
					out[i], errs[i] = encodeBlock(blocks[i], ds)
				}
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// encodeBlock encodes the segments of block d (canonical) with the
// chain's dictionaries ds, offering them toward its next ones.
func encodeBlock(d *chainquery.BlockData, ds *chainDicts) (segments, error) {
	var seg segments
	var err error
	n := d.Block.Number
	seg.dicts, seg.since = ds.current()
	if seg.txs, err = seg.dicts[segmentTransactions].AppendTransactions(nil, d.Transactions); err != nil {
		return seg, fmt.Errorf("block %d: %w", n, err)
	}
	if seg.logs, err = seg.dicts[segmentLogs].AppendLogs(nil, d.Logs); err != nil {
		return seg, fmt.Errorf("block %d: %w", n, err)
	}
	if seg.traces, err = seg.dicts[segmentTraces].AppendTraces(nil, d.Traces); err != nil {
		return seg, fmt.Errorf("block %d: %w", n, err)
	}
	// Only the transactions get dictionaries (history_dicts.go says why).
	ds.sample(segmentTransactions, n, seg.txs)
	return seg, nil
}

// add appends the segments seg of block n to segs (the table of
// HistoryTables) and adds its transactions' hash prefixes, traces and logs
// to h, by its keys k.
func (h *historyBuilder) add(segs *Table, n uint64, seg segments, k *blockKeys) {
	segs.Values = append(segs.Values, h.chain, int64(n), segmentTransactions, seg.txs,
		h.chain, int64(n), segmentLogs, seg.logs, h.chain, int64(n), segmentTraces, seg.traces)
	for _, p := range k.prefixes {
		h.hashes = append(h.hashes, history.HashEntry{Prefix: p, Block: n})
	}
	h.addTraces(n, k.traces)
	h.logs.add(n, k.logs)
}

// addTraces adds the traces of block n, in API order, to the lists.
func (h *historyBuilder) addTraces(n uint64, traces []traceRef) {
	bucket := int64(n / TraceCountBlocks)
	if _, ok := h.firsts[bucket]; !ok {
		h.firsts[bucket] = n
	}
	if h.counted && len(traces) > 0 {
		h.all[bucket] += int64(len(traces))
	}
	pos, lastTx := uint32(0), -1
	for i := range traces {
		t := &traces[i]
		if t.tx != lastTx {
			pos, lastTx = 0, t.tx
		}
		p := history.Posting{Block: n, Tx: uint32(t.tx), Pos: pos}
		h.lists.add(traceKey{bucket, t.from, CountFrom<<16 | int32(history.PagePart(t.from[:]))}, p)
		if t.hasTo {
			h.lists.add(traceKey{bucket, t.to, CountTo<<16 | int32(history.PagePart(t.to[:]))}, p)
		}
		pos++
	}
}

// rows returns the CountAll rows of the traces added (counted only), and
// their pages: a bucket whose first block added is not its first may have
// pages already (an earlier write ended inside it), which its new pages
// take in, deleted here to be written again. Keys and lists share h's
// arenas until it is flushed.
func (h *historyBuilder) rows(ctx context.Context, b BlockBatch) ([]BucketRow, Table, error) {
	pages := Table{Name: tracePages.Name, Columns: tracePages.Columns}
	var out []BucketRow
	for _, k := range slices.Sorted(maps.Keys(h.all)) {
		out = append(out, BucketRow{Kind: CountAll, Key: []byte{}, Bucket: k, N: h.all[k]})
	}
	order, at, grouped := h.lists.group(compareTraceKeys)
	slab := make([]byte, 0, 4*len(h.lists.entries)+2*len(order))
	var entries []history.PageEntry
	var old map[pageKey][]history.PageEntry // the pages there of bucket oldBucket
	oldBucket := int64(-1)
	var gone []pageKey // of old, the pages taken in, to be deleted
	deleteGone := func() error {
		if len(gone) == 0 {
			return nil
		}
		err := deletePages(ctx, b, h.chain, oldBucket, gone)
		gone = gone[:0]
		return err
	}
	for j := 0; j < len(order); {
		k := &h.lists.keys[order[j]]
		page := pageKey{dir: int(k.page >> 16), part: int(k.page & 0xffff), bucket: k.bucket}
		entries = entries[:0]
		for ; j < len(order) && h.lists.keys[order[j]].bucket == k.bucket && h.lists.keys[order[j]].page == k.page; j++ {
			ps := grouped[at[j]:at[j+1]]
			start := len(slab)
			var err error
			if slab, err = history.AppendPostings(slab, ps); err != nil {
				return nil, pages, err
			}
			entries = append(entries, history.PageEntry{Addr: h.lists.keys[order[j]].addr[:], N: int64(len(ps)), List: slab[start:len(slab):len(slab)]})
		}
		es := entries
		if first := h.firsts[k.bucket]; first > uint64(k.bucket)*TraceCountBlocks {
			if oldBucket != k.bucket {
				if err := deleteGone(); err != nil {
					return nil, pages, err
				}
				var err error
				if old, err = readBucketPages(ctx, b, h.chain, k.bucket); err != nil {
					return nil, pages, err
				}
				oldBucket = k.bucket
			}
			if there, ok := old[page]; ok {
				gone = append(gone, page)
				es = history.MergePage(there, entries)
			}
		}
		keys, lists, err := history.AppendPage(nil, nil, es)
		if err != nil {
			return nil, pages, err
		}
		pages.Values = append(pages.Values, h.chain, page.dir, page.part, page.bucket, keys, lists)
	}
	return out, pages, deleteGone()
}

// flush writes the pages of the traces added (and CountAll's rows, when
// counted) and the log lists, and empties the builder, which its caller
// no longer uses: it goes back to the pool for the next write.
func (h *historyBuilder) flush(ctx context.Context, b BlockBatch) error {
	defer h.release()
	if err := h.flushTraces(ctx, b); err != nil {
		return err
	}
	if err := h.writePages(ctx, b); err != nil {
		return err
	}
	if err := h.logs.flush(ctx, b, h.chain); err != nil {
		return err
	}
	return addHashRun(ctx, b, h.chain, h.hashes, h.chunk)
}

// flushTraces makes the pages of the traces added (and CountAll's rows,
// when counted), which flush writes, and empties that part of h; its log
// lists stay. A bucket's pages are kept until then, rather than written
// as it ends: within a stretch of trace_pages_key (TracePageEpoch) the
// key leads with the address's part, so a bucket's ~2,000 pages go to as
// many places, a page of WAL each; the pages of the ten buckets of a
// commit, written in the key's order, go ten to a place (docs/benchmarks.md,
// issue 30, session 22). They take ~1.6 MB a bucket at Polygon's shape.
func (h *historyBuilder) flushTraces(ctx context.Context, b BlockBatch) error {
	rows, pages, err := h.rows(ctx, b)
	if err != nil {
		return err
	}
	if h.pages.Name == "" {
		h.pages = Table{Name: pages.Name, Columns: pages.Columns}
	}
	h.pages.Values = append(h.pages.Values, pages.Values...)
	h.counts = append(h.counts, rows...)
	h.lists.reset()
	clear(h.all)
	clear(h.firsts)
	return nil
}

// writePages writes the pages and rows flushTraces made, the pages in the
// order of trace_pages_key.
func (h *historyBuilder) writePages(ctx context.Context, b BlockBatch) error {
	cols := len(h.pages.Columns)
	if n := len(h.pages.Values) / max(cols, 1); n > 0 {
		// rows made them (chain, dir, part, bucket, keys, lists)
		key := func(i int) pageKey {
			v := h.pages.Values[i*cols:]
			return pageKey{dir: v[1].(int), part: v[2].(int), bucket: v[3].(int64)}
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(x, y int) int {
			a, b := key(x), key(y)
			return cmp.Or(cmp.Compare(a.dir, b.dir), cmp.Compare(a.part, b.part), cmp.Compare(a.bucket, b.bucket))
		})
		sorted := Table{Name: h.pages.Name, Columns: h.pages.Columns, Values: make([]any, 0, len(h.pages.Values))}
		for _, i := range order {
			sorted.Values = append(sorted.Values, h.pages.Values[i*cols:(i+1)*cols]...)
		}
		if err := b.Insert(ctx, []Table{sorted}); err != nil {
			return err
		}
	}
	if len(h.counts) > 0 {
		if err := b.AddTraceCounts(ctx, h.counts); err != nil {
			return err
		}
	}
	h.pages.Values, h.counts = h.pages.Values[:0], h.counts[:0]
	return nil
}

// release empties h and keeps it for the next write, unless enough are
// kept or its room is a conversion's.
func (h *historyBuilder) release() {
	h.lists.reset()
	h.logs.reset()
	h.pages.Values, h.counts = h.pages.Values[:0], h.counts[:0]
	h.hashes = h.hashes[:0]
	clear(h.all)
	clear(h.firsts)
	if cap(h.lists.entries) > keptEntries || cap(h.logs.entries) > keptEntries || cap(h.hashes) > keptEntries {
		return
	}
	builders.mu.Lock()
	defer builders.mu.Unlock()
	if len(builders.free) < keptBuilders {
		builders.free = append(builders.free, h)
	}
}

// canonical returns block d as a write takes it (BlockWriter: any trace
// order within a transaction, log counts ignored) in the form history
// encodes: transactions in index order with their log counts, logs in log
// index order, traces in API order. d itself is not changed.
func canonical(d *chainquery.BlockData) *chainquery.BlockData {
	out := *d
	logCounts := make(map[int]int, len(d.Transactions))
	for _, l := range d.Logs {
		logCounts[l.TransactionIndex]++
	}
	out.Transactions = make([]*chainquery.Transaction, len(d.Transactions))
	for i, t := range d.Transactions {
		c := *t
		c.LogCount = logCounts[t.Index]
		out.Transactions[i] = &c
	}
	slices.SortStableFunc(out.Transactions, func(a, b *chainquery.Transaction) int { return cmp.Compare(a.Index, b.Index) })
	byIndex := func(a, b *chainquery.Log) int { return cmp.Compare(a.LogIndex, b.LogIndex) }
	if !slices.IsSortedFunc(d.Logs, byIndex) {
		out.Logs = slices.Clone(d.Logs)
		slices.SortStableFunc(out.Logs, byIndex)
	}
	if !slices.IsSortedFunc(d.Traces, traceOrder) {
		out.Traces = slices.Clone(d.Traces)
		slices.SortStableFunc(out.Traces, traceOrder)
	}
	return &out
}

// historySegment returns the segment of kind of the history block number,
// or nil when the block has none (it is not history).
func (r reader) historySegment(ctx context.Context, number uint64, kind int) ([]byte, error) {
	var data []byte
	found, err := queryRow(ctx, r.c, qHistorySegment, []any{r.chain, int64(number), kind}, &data)
	if err != nil || !found {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// historyTransactions returns the transactions of the history block
// number at version, shared (callers copy what they change); found is
// false when the block is not history.
func (r reader) historyTransactions(ctx context.Context, number uint64, version int) ([]*chainquery.Transaction, bool, error) {
	return cachedSegment(ctx, r, decodedKey{r.chain, number, version, segmentTransactions}, history.DecodeTransactions, txsSize)
}

// historyLogs returns the logs of the history block number at version,
// shared as historyTransactions' are.
func (r reader) historyLogs(ctx context.Context, number uint64, version int) ([]*chainquery.Log, bool, error) {
	return cachedSegment(ctx, r, decodedKey{r.chain, number, version, segmentLogs}, history.DecodeLogs, logsSize)
}

// cachedSegment returns the decoded segment k names: from the cache, else
// read, decoded with decode and kept. found is false when the block has no
// such segment (it is not history).
func cachedSegment[T any](ctx context.Context, r reader, k decodedKey, decode func([]byte, uint64) (T, error), size func(T) int64) (v T, found bool, err error) {
	if cached, ok := r.decoded.get(k); ok {
		return cached.(T), true, nil
	}
	seg, err := r.historySegment(ctx, k.number, k.kind)
	if err != nil || seg == nil {
		return v, false, err
	}
	if v, err = decodeSegment(ctx, r.Store, seg, k.number, decode); err != nil {
		return v, false, err
	}
	r.decoded.put(k, v, size(v))
	return v, true, nil
}

// stamp is what a read of history takes from a block's header.
type stamp struct {
	timestamp int64
	version   int
}

// historyStamps returns the timestamp and version of the stored blocks
// among numbers, by number.
func (r reader) historyStamps(ctx context.Context, numbers []uint64) (map[uint64]stamp, error) {
	out := make(map[uint64]stamp, len(numbers))
	var n int64
	var st stamp
	q, args := r.Dialect.HistoryStamps(r.chain, numbers)
	err := r.c.Query(ctx, q, args, []any{&n, &st.timestamp, &st.version}, func() error {
		out[uint64(n)] = st
		return nil
	})
	return out, err
}

// historyBlock is a history block's traces as a page of Filter Traces
// needs them: each filled with its block's and transaction's fields.
type historyBlock struct {
	traces []*chainquery.Trace
	first  map[int]int // the index in traces of each transaction's first trace
}

// loadHistoryBlocks returns the traces of the history blocks numbers,
// shared (callers copy what they return), each with its block's and
// transaction's fields: from the cache, else decoded from their segments,
// read in one statement.
func (r reader) loadHistoryBlocks(ctx context.Context, numbers []uint64) (map[uint64]*historyBlock, error) {
	if len(numbers) == 0 {
		return nil, nil
	}
	stamps, err := r.historyStamps(ctx, numbers)
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]*historyBlock, len(numbers))
	var missing []uint64
	for _, number := range numbers {
		st, ok := stamps[number]
		if !ok {
			return nil, errHistoryMoved
		}
		if v, ok := r.decoded.get(decodedKey{r.chain, number, st.version, segmentTraces}); ok {
			out[number] = v.(*historyBlock)
		} else {
			missing = append(missing, number)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	got, err := r.readBlockParts(ctx, missing, stamps)
	if err != nil {
		return nil, err
	}
	for _, number := range missing {
		hb, err := got[number].join(stamps[number])
		if err != nil {
			return nil, err
		}
		r.decoded.put(decodedKey{r.chain, number, stamps[number].version, segmentTraces}, hb, tracesSize(hb.traces))
		out[number] = hb
	}
	return out, nil
}

// blockParts are the decoded transaction and trace segments of a history
// block.
type blockParts struct {
	txs    []*chainquery.Transaction
	traces []*chainquery.Trace
}

// readBlockParts reads and decodes the transaction and trace segments of
// the history blocks numbers in one statement. It returns errHistoryMoved
// when a block's stamp is no longer the one in stamps.
func (r reader) readBlockParts(ctx context.Context, numbers []uint64, stamps map[uint64]stamp) (map[uint64]*blockParts, error) {
	got := make(map[uint64]*blockParts, len(numbers))
	var n int64
	var kind int
	var data []byte
	var st stamp
	q, args := r.Dialect.HistoryBlocks(r.chain, numbers)
	err := r.c.Query(ctx, q, args, []any{&n, &st.timestamp, &st.version, &kind, &data}, func() error {
		number := uint64(n)
		if st != stamps[number] {
			return errHistoryMoved
		}
		p := got[number]
		if p == nil {
			p = &blockParts{}
			got[number] = p
		}
		var err error
		switch kind {
		case segmentTransactions:
			p.txs, err = decodeSegment(ctx, r.Store, data, number, history.DecodeTransactions)
		case segmentTraces:
			p.traces, err = decodeSegment(ctx, r.Store, data, number, history.DecodeTraces)
		}
		return err
	})
	return got, err
}

// join makes a block's traces whole, in rows' form: each with its block's
// stamp st and its transaction's fields. A nil p, or traces without their
// transactions, is a block that moved out of history meanwhile.
func (p *blockParts) join(st stamp) (*historyBlock, error) {
	if p == nil || p.txs == nil && len(p.traces) > 0 {
		return nil, errHistoryMoved
	}
	byIndex := make(map[int]*chainquery.Transaction, len(p.txs))
	for _, t := range p.txs {
		byIndex[t.Index] = t
	}
	hb := &historyBlock{traces: p.traces, first: map[int]int{}}
	for i, t := range p.traces {
		x := byIndex[t.TransactionIndex]
		if x == nil {
			return nil, history.ErrCorrupt
		}
		if _, ok := hb.first[t.TransactionIndex]; !ok {
			hb.first[t.TransactionIndex] = i
		}
		t.Timestamp, t.Version = st.timestamp, st.version
		if len(t.TraceAddress) == 0 {
			t.TraceAddress = nil // as rows give it
		}
		t.TransactionHash, t.TransactionFrom, t.TransactionTo, t.TransactionStatus = x.Hash, x.From, x.To, x.Status
	}
	return hb, nil
}

// errHistoryMoved is the error of a read that found a block neither in
// rows nor in history: a thaw or a rewind changed it between two
// statements that are not in one snapshot.
var errHistoryMoved = errors.New("a block moved between rows and history during the read; try again")

// qHistorySegments: chain, lo, hi → number, kind, data of every segment
// of the blocks from lo to hi, in number order. qHistorySegment: chain,
// number, kind → data.
const (
	qHistorySegments = `SELECT number, kind, data FROM history_segments WHERE chain = $1 AND number BETWEEN $2 AND $3
		ORDER BY number, kind`
	qHistorySegment = `SELECT data FROM history_segments WHERE chain = $1 AND number = $2 AND kind = $3`
)
