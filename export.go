package chainquery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
)

// Sizes of an export's reads.
const (
	// ExportChunkRows is the most rows one chunk reads: a few hundred
	// kilobytes of answer, a read of the size of a deep filter page (the
	// stores take limits above MaxLimit; only the API bounds a page).
	ExportChunkRows = 2000

	// ExportChunkBlocks is the most blocks a chunk walks when its filter is
	// read in windows (exportWindow) and finds few matches: a sparse filter
	// over a long range still gives a checkpoint, and gives back the
	// store, every so many blocks.
	ExportChunkBlocks = 100 * MaxBlockRange
)

// TraceExportStore is what a Filter Traces export reads.
type TraceExportStore interface {
	TraceService
	BlockService
}

// LogExportStore is what a Filter Logs export reads.
type LogExportStore interface {
	LogRangeService
	BlockService
}

// Export is one response's walk over the rows of a filter, from a cursor on:
// the whole result of a Filter Traces or Filter Logs, read by the filter
// endpoints' own store reads a chunk at a time, each chunk starting where a
// cursor says the last one ended. Next reads a chunk; Cursor names the
// position after it and Done says whether the filter's rows are all read.
//
// The cursor names a block and how many of that block's matching rows were
// already sent, never an offset into the whole result: resuming costs what
// the first chunk did, however deep into the export it is.
type Export[T any] struct {
	// ChunkRows is the most rows a Next returns; 0 means ExportChunkRows.
	ChunkRows int

	hash    [8]byte      // of the filter (exportHash)
	pos     exportPos    // the next row to read
	started bool         // span was asked: hi is set
	done    bool         // every row of the range is read
	hi      uint64       // the range's last block, at most the latest stored
	window  uint64       // the most blocks of one store read; 0: the whole rest of the range
	most    uint64       // the most window may grow to: the filter's range bound
	chain   Chain        // whose stored blocks bound the range
	blocks  BlockService // which stores them
	span    func(ctx context.Context) (lo, hi uint64, ok bool, err error)
	find    func(ctx context.Context, from, to uint64, offset, limit int) ([]T, int, error) // rows, and the count of from..to
	blockOf func(T) uint64
}

// exportPos is a position in an export: the next block to read, and how many
// of its matching rows were already sent.
type exportPos struct {
	block uint64
	sent  uint64
}

// NewTraceExport returns the export of f's traces from cursor ("" for the
// start). f must hold Filter Traces' values (Validate's rules but the
// length of a block range, and no page); a cursor must be one an export of
// the same filter gave. It returns EINVALID otherwise.
func NewTraceExport(s TraceExportStore, f TraceFilter, cursor string) (*Export[*Trace], error) {
	g := f
	if g.FromBlock != nil && g.ToBlock != nil && *g.ToBlock >= *g.FromBlock {
		g.ToBlock = g.FromBlock // any length: each store read holds at most MaxBlockRange blocks
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	e := &Export[*Trace]{hash: f.exportHash(), window: MaxBlockRange, most: MaxBlockRange, chain: f.Chain, blocks: s}
	if err := e.resume(cursor); err != nil {
		return nil, err
	}
	e.span = func(ctx context.Context) (uint64, uint64, bool, error) {
		return f.BlockRange(e.seeks(ctx))
	}
	e.find = func(ctx context.Context, from, to uint64, offset, limit int) ([]*Trace, int, error) {
		w := f
		w.FromBlock, w.ToBlock, w.FromTime, w.ToTime = &from, &to, nil, nil
		w.Page = Page{Offset: offset, Limit: limit}
		return s.FindTraces(ctx, w)
	}
	e.blockOf = func(t *Trace) uint64 { return t.BlockNumber }
	return e, nil
}

// NewLogExport returns the export of f's logs from cursor ("" for the
// start), as NewTraceExport does for traces: f must hold Filter Logs'
// values, of any range length. A filter with an address or a topic0 is read
// over its whole range at once, any other in windows of MaxLogRangeBlocks.
func NewLogExport(s LogExportStore, f LogRangeFilter, cursor string) (*Export[*Log], error) {
	g := f
	if g.FromBlock != nil && g.ToBlock != nil && *g.ToBlock >= *g.FromBlock {
		g.ToBlock = g.FromBlock
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	e := &Export[*Log]{hash: f.exportHash(), window: MaxLogRangeBlocks, most: MaxLogRangeBlocks, chain: f.Chain, blocks: s}
	if f.Keyed() {
		e.window, e.most = 0, 0 // the stores read a keyed filter by index over any range
	}
	if err := e.resume(cursor); err != nil {
		return nil, err
	}
	e.span = func(ctx context.Context) (uint64, uint64, bool, error) {
		// The range rules without the length of Filter Logs' BlockRange:
		// the windows keep each read within it.
		return f.traceRange().BlockRange(e.seeks(ctx))
	}
	e.find = func(ctx context.Context, from, to uint64, offset, limit int) ([]*Log, int, error) {
		w := f
		w.FromBlock, w.ToBlock, w.FromTime, w.ToTime = &from, &to, nil, nil
		w.Page = Page{Offset: offset, Limit: limit}
		return s.FindLogs(ctx, w)
	}
	e.blockOf = func(l *Log) uint64 { return l.BlockNumber }
	return e, nil
}

// seeks are the datetime range's questions, asked of the stored blocks.
func (e *Export[T]) seeks(ctx context.Context) func(TimeSeek) (TimeBlocks, error) {
	return func(q TimeSeek) (at TimeBlocks, err error) {
		if q.From != math.MinInt64 {
			if at.From, at.FromOK, err = e.blocks.BlockAtTime(ctx, e.chain, q.From, true); err != nil {
				return at, err
			}
		}
		if q.To != math.MaxInt64 {
			if at.To, at.ToOK, err = e.blocks.BlockAtTime(ctx, e.chain, q.To, false); err != nil {
				return at, err
			}
		}
		if q.Min != math.MinInt64 {
			at.Min, at.MinOK, err = e.blocks.BlockAtTime(ctx, e.chain, q.Min, true)
		}
		return at, err
	}
}

// Done reports whether every row of the export has been returned.
func (e *Export[T]) Done() bool { return e.done }

// Next returns the next chunk of rows, in the filter endpoint's order: at
// most ChunkRows of them, and when the filter is read in windows, of at
// most ExportChunkBlocks blocks (a chunk may then be empty without the
// export being done). On an error the position stays where it was, so the
// chunk is read again from the same cursor.
func (e *Export[T]) Next(ctx context.Context) ([]T, error) {
	if e.done {
		return nil, nil
	}
	if !e.started {
		if err := e.start(ctx); err != nil || e.done {
			return nil, err
		}
	}
	limit := e.ChunkRows
	if limit <= 0 {
		limit = ExportChunkRows
	}
	pos, walked := e.pos, uint64(0)
	var out []T
	for len(out) < limit {
		to := e.hi
		if e.window > 0 && to-pos.block >= e.window {
			to = pos.block + e.window - 1
		}
		want := limit - len(out)
		rows, count, err := e.find(ctx, pos.block, to, int(pos.sent), want)
		if err != nil {
			return nil, err
		}
		e.fit(to-pos.block+1, count, limit)
		out = append(out, rows...)
		if len(rows) < want { // the window is read
			if to == e.hi {
				e.done = true
				break
			}
			walked += to - pos.block + 1
			pos = exportPos{block: to + 1}
			if walked >= ExportChunkBlocks {
				break
			}
			continue
		}
		// The chunk is full: it ends inside the block of its last row.
		last := e.blockOf(rows[len(rows)-1])
		n := uint64(0)
		for i := len(rows) - 1; i >= 0 && e.blockOf(rows[i]) == last; i-- {
			n++
		}
		if last == pos.block {
			pos.sent += n
		} else {
			pos = exportPos{block: last, sent: n}
		}
	}
	e.pos = pos
	return out, nil
}

// fit sizes the next window to hold about limit rows, by the count of the
// window just read (span blocks): a store read of an unindexed filter
// matches every row of its window, whatever the page it returns, so a
// window of Filter Logs' whole bound read for chunks of ExportChunkRows was
// matched whole many times over (docs/benchmarks.md, "Exports against the
// raw read of the same rows"). Windows stay between 1 block and the
// filter's bound.
func (e *Export[T]) fit(span uint64, count, limit int) {
	if e.window == 0 {
		return
	}
	w := e.most
	if count > 0 {
		w = min(e.most, max(1, span*uint64(limit)/uint64(count)))
	}
	e.window = w
}

// start reads the range's blocks, within those stored: a range past the
// latest stored block ends there, one below the first starts there, so an
// export never walks heights the store has nothing of.
func (e *Export[T]) start(ctx context.Context) error {
	lo, hi, ok, err := e.span(ctx)
	if err != nil {
		return err
	}
	first, okFirst, err := e.blocks.BlockAtTime(ctx, e.chain, math.MinInt64, true)
	if err != nil {
		return err
	}
	latest, err := e.blocks.LatestBlock(ctx, e.chain)
	if ErrorCode(err) == ENOTFOUND {
		okFirst = false
	} else if err != nil {
		return err
	}
	e.started = true
	lo, hi = max(lo, first), min(hi, latest)
	if !ok || !okFirst || lo > hi || e.pos.block > hi {
		e.done = true
		return nil
	}
	if e.pos.block < lo {
		e.pos = exportPos{block: lo}
	}
	e.hi = hi
	return nil
}

// cursorVersion is the first byte of a cursor: a cursor of another layout
// is malformed rather than misread.
const cursorVersion = 1

// Cursor returns the opaque token of the export's position: sent back with
// the same filter, it resumes the export there.
func (e *Export[T]) Cursor() string {
	b := make([]byte, 0, 1+len(e.hash)+2*binary.MaxVarintLen64)
	b = append(b, cursorVersion)
	b = append(b, e.hash[:]...)
	b = binary.AppendUvarint(b, e.pos.block)
	b = binary.AppendUvarint(b, e.pos.sent)
	return base64.RawURLEncoding.EncodeToString(b)
}

// resume sets the position of cursor, which must be one of an export of
// the same filter; "" is the start.
func (e *Export[T]) resume(cursor string) error {
	if cursor == "" {
		return nil
	}
	malformed := Errorf(EINVALID, "cursor is malformed: send the cursor of a checkpoint line exactly as the export gave it")
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) < 1+len(e.hash) || b[0] != cursorVersion {
		return malformed
	}
	hash, rest := b[1:1+len(e.hash)], b[1+len(e.hash):]
	block, n := binary.Uvarint(rest)
	if n <= 0 {
		return malformed
	}
	sent, m := binary.Uvarint(rest[n:])
	if m <= 0 || n+m != len(rest) || block > MaxBlockNumber || sent > math.MaxInt64 {
		return malformed
	}
	if !bytes.Equal(hash, e.hash[:]) {
		return Errorf(EINVALID, "cursor does not belong to this filter: resume an export with the request body it was started with")
	}
	e.pos = exportPos{block: block, sent: sent}
	return nil
}

// filterHash hashes the canonical form of a filter: its kind, chain and
// range, and each list of values sorted, so that equal filters written
// differently (addresses reordered or in another case, a datetime in another
// zone) give the same hash and a cursor resumes either.
type filterHash struct{ b []byte }

func (h *filterHash) u64(v uint64) { h.b = binary.BigEndian.AppendUint64(h.b, v) }
func (h *filterHash) str(s string) { h.u64(uint64(len(s))); h.b = append(h.b, s...) }
func (h *filterHash) list(v [][]byte) {
	h.u64(uint64(len(v)))
	slices.SortFunc(v, bytes.Compare)
	h.b = append(h.b, bytes.Join(v, nil)...)
}

func (h *filterHash) rng(f *TraceFilter) {
	switch {
	case f.FromBlock != nil && f.ToBlock != nil:
		h.str("blocks")
		h.u64(*f.FromBlock)
		h.u64(*f.ToBlock)
	case f.FromTime != nil && f.ToTime != nil:
		h.str("datetimes")
		h.u64(uint64(f.FromTime.UnixNano()))
		h.u64(uint64(f.ToTime.UnixNano()))
	}
}

func (h *filterHash) sum() (out [8]byte) {
	s := sha256.Sum256(h.b)
	copy(out[:], s[:])
	return out
}

func addressList(a []Address) [][]byte {
	out := make([][]byte, len(a))
	for i := range a {
		out[i] = a[i][:]
	}
	return out
}

// exportHash is the hash of f's canonical form. MinTime is the server's,
// not the filter's: it is left out.
func (f *TraceFilter) exportHash() [8]byte {
	h := &filterHash{}
	h.str("traces")
	h.str(string(f.Chain))
	h.rng(f)
	h.list(addressList(f.FromAddresses))
	h.list(addressList(f.ToAddresses))
	return h.sum()
}

// exportHash is the hash of f's canonical form.
func (f *LogRangeFilter) exportHash() [8]byte {
	h := &filterHash{}
	h.str("logs")
	h.str(string(f.Chain))
	h.rng(f.traceRange())
	h.list(addressList(f.Addresses))
	for _, t := range f.Topics {
		vs := make([][]byte, len(t))
		for i := range t {
			vs[i] = t[i][:]
		}
		h.list(vs)
	}
	return h.sum()
}
