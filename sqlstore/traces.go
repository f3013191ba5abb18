package sqlstore

import (
	"context"
	"math"
	"slices"

	"github.com/chainquery/chainquery"
)

// TracePlan is how a SQL store finds the traces of one Filter Traces request
// once its range is a block range. Every statement of the plan is bounded by
// what it returns: without addresses, the page is a primary-key range scan
// and the count sums the blocks' trace counts; with addresses, each address
// is one walk of at most offset+limit entries of an index in API order, the
// walks merged, and the count counts index entries without touching trace
// rows. docs/storage.md shows the plans.
type TracePlan struct {
	Chain  int64 // the chain's key (its EIP-155 id)
	Lo, Hi int64 // the block range, both ends inclusive
	Page   chainquery.Page

	// FromIndex says which index the walks use: the sender's (traces_from)
	// when set, else the recipient's (traces_to).
	FromIndex bool

	// Walk holds the addresses walked, one walk each; it is empty without
	// an address filter.
	Walk [][]byte

	// Also holds, with both from_address and to_address, the addresses of
	// the side not walked that a trace must have too: the recipients when
	// FromIndex, else the senders. traces_from carries to_addr and
	// traces_to from_addr, so the walks stay in the index either way.
	Also [][]byte

	// HistoryBelow is the chain's boundary of history (history.go): the
	// blocks below it are read from segments and posting lists, those at or
	// above it from rows.
	HistoryBelow int64

	// EpochsBelow is the chain's trace_epochs_below (trace_epochs.go): the
	// whole epochs below it have their counts in epoch_counts.
	EpochsBelow int64

	// Thaws is the chain's history.thaws: the generation of the pages of
	// history that the store keeps in memory (page_cache.go).
	Thaws int64

	// lists keeps the posting lists the request has read (nil: none kept).
	lists *listCache

	// FirstBucket and LastBucket are the first and the last bucket of
	// trace_counts (trace_count.go) that lie wholly in the range; there is
	// none when FirstBucket > LastBucket.
	FirstBucket, LastBucket int64
}

// NewTracePlan returns the plan of f on the chain keyed chain over the blocks
// lo to hi. An address given twice is walked once.
func NewTracePlan(chain int64, lo, hi uint64, f chainquery.TraceFilter) *TracePlan {
	hi = min(hi, math.MaxInt64) // heights are stored as int64
	p := &TracePlan{Chain: chain, Lo: int64(lo), Hi: int64(hi), Page: f.Page}
	p.setBuckets()
	from, to := uniqueAddresses(f.FromAddresses), uniqueAddresses(f.ToAddresses)
	if len(from) > 0 {
		p.FromIndex, p.Walk, p.Also = true, addressBytes(from), addressBytes(to)
	} else if len(to) > 0 {
		p.Walk = addressBytes(to)
	}
	return p
}

// AlsoColumn is the column that Also filters: to_addr when the walks go
// through the senders' index, else from_addr.
func (p *TracePlan) AlsoColumn() string {
	if p.FromIndex {
		return "to_addr"
	}
	return "from_addr"
}

// WalkRecipients turns a from+to plan into one that walks the recipients'
// index and keeps the traces whose sender is one of the senders.
func (p *TracePlan) WalkRecipients() {
	if p.FromIndex && len(p.Also) > 0 {
		p.FromIndex, p.Walk, p.Also = false, p.Also, p.Walk
	}
}

func uniqueAddresses(addrs []chainquery.Address) []chainquery.Address {
	var out []chainquery.Address
	for i, a := range addrs {
		if !slices.Contains(addrs[:i], a) {
			out = append(out, a)
		}
	}
	return out
}

func addressBytes(addrs []chainquery.Address) [][]byte {
	out := make([][]byte, len(addrs))
	for i := range addrs {
		out[i] = addrs[i][:]
	}
	return out
}

// Trace types and call types are stored as small integers: each one's code
// is its position here, in every store (the migrations' comments say them
// too).
var (
	traceTypeCodes = []string{chainquery.TraceCall, chainquery.TraceCreate, chainquery.TraceSuicide}
	callTypeCodes  = []string{chainquery.CallTypeCall, chainquery.CallTypeDelegateCall, chainquery.CallTypeStaticCall, chainquery.CallTypeCreate}
)

// FindTraces returns one page of the traces matching f in API order and the
// number of matches over all pages (TraceService). The datetime range
// becomes a block range with two seeks on the blocks' timestamps
// (TraceFilter.BlockRange); then TracePlan says how the traces are found,
// and trace_counts gives the count and where the offset starts
// (trace_count.go).
func (s *Store) FindTraces(ctx context.Context, f chainquery.TraceFilter) ([]*chainquery.Trace, int, error) {
	tx, r, err := s.readChain(ctx, f.Chain)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()

	var below, epochsBelow, thaws int64
	q, asks := f.TimeSeek()
	at, err := r.historyBounds(ctx, q, asks, traceBounds, &below, &epochsBelow, &thaws)
	if err != nil {
		return nil, 0, err
	}
	lo, hi, ok, err := f.BlockRange(func(chainquery.TimeSeek) (chainquery.TimeBlocks, error) { return at, nil })
	if err != nil || !ok {
		return []*chainquery.Trace{}, 0, err
	}
	p := NewTracePlan(r.chain, lo, hi, f)
	p.HistoryBelow, p.EpochsBelow, p.Thaws = below, epochsBelow, thaws
	p.lists = &listCache{}
	if err := s.chooseSide(ctx, tx, p); err != nil {
		return nil, 0, err
	}
	count, err := s.countTraces(ctx, tx, p)
	if err != nil {
		return nil, 0, err
	}
	if f.Offset >= count {
		return []*chainquery.Trace{}, count, nil
	}
	narrowed, err := s.skipOffset(ctx, tx, p)
	if err != nil {
		return nil, 0, err
	}
	if !narrowed {
		if err := s.narrowWalks(ctx, tx, p); err != nil {
			return nil, 0, err
		}
	}
	out, err := s.tracePage(ctx, tx, p)
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// tracePage returns the plan's page: from history up to its boundary,
// then from rows, where the page goes on past it.
func (s *Store) tracePage(ctx context.Context, tx Tx, p *TracePlan) ([]*chainquery.Trace, error) {
	var out []*chainquery.Trace
	rows := p
	if p.Lo < p.HistoryBelow {
		hist := p.over(p.Lo, min(p.Hi, p.HistoryBelow-1))
		page, total, err := s.historyTracePage(ctx, tx, hist)
		if err != nil || total < 0 || p.Hi < p.HistoryBelow {
			return page, err
		}
		// The range's history holds fewer than offset+limit matches: the
		// page goes on in the rows, past those.
		out = page
		rows = p.over(p.HistoryBelow, p.Hi)
		rows.Page.Offset = max(0, p.Page.Offset-total)
		rows.Page.Limit = p.Page.Limit - len(page)
		if rows.Page.Limit == 0 {
			return out, nil
		}
	}
	var t chainquery.Trace
	q, args := s.Dialect.TracePage(rows)
	page, err := queryRows(ctx, tx, q, args, s.traceScan(&t), &t)
	if out == nil {
		return page, err
	}
	return append(out, page...), err
}

// rangeCount counts the plan's traces in its range: from the blocks'
// trace counts without an address, else by walking the index entries of
// its rows and the posting lists of its history.
func (s *Store) rangeCount(ctx context.Context, tx Tx, p *TracePlan) (int, error) {
	n := 0
	if len(p.Walk) == 0 || p.Hi >= p.HistoryBelow {
		rows := p
		if len(p.Walk) > 0 && p.Lo < p.HistoryBelow {
			rows = p.over(p.HistoryBelow, p.Hi)
		}
		query, args := s.Dialect.CountTraces(rows)
		if _, err := queryRow(ctx, tx, query, args, &n); err != nil || len(p.Walk) == 0 {
			return n, err
		}
	}
	if p.Lo >= p.HistoryBelow {
		return n, nil
	}
	m, err := s.historyCount(ctx, tx, p.over(p.Lo, min(p.Hi, p.HistoryBelow-1)))
	return n + m, err
}

// FindTransactionTraces returns one page of the transaction's traces and
// their count (TransactionService). From rows, the count and the page are
// two statements on the primary key of traces; from history, the block's
// traces segment is decoded (or found in the cache) and the transaction's
// run of it paged.
func (s *Store) FindTransactionTraces(ctx context.Context, f chainquery.TransactionFilter) ([]*chainquery.Trace, int, error) {
	tx, r, err := s.readChain(ctx, f.Chain)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	found, err := r.findTransaction(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	t := found.Transaction
	if !f.MinTime.IsZero() && t.Timestamp < f.MinTime.Unix() {
		return []*chainquery.Trace{}, 0, nil // before the chain's trace history
	}
	if found.history {
		return r.historyTransactionTraces(ctx, t, f.Page)
	}
	args := []any{r.chain, int64(t.BlockNumber), t.Index}
	var count int
	if _, err := queryRow(ctx, tx, s.Dialect.TransactionTraceCount, args, &count); err != nil {
		return nil, 0, err
	}
	out := []*chainquery.Trace{}
	if f.Offset >= count { // none past the end, and none for a block stored without traces
		return out, count, nil
	}
	var tr chainquery.Trace
	sc := s.traceRowScan(&tr)
	err = tx.Query(ctx, s.Dialect.TransactionTraces, append(args, f.Limit, f.Offset), sc.dest, sc.each(func() error {
		row := tr
		row.Timestamp, row.Version = t.Timestamp, found.version
		row.TransactionHash, row.TransactionFrom, row.TransactionTo, row.TransactionStatus = t.Hash, t.From, t.To, t.Status
		out = append(out, &row)
		return nil
	}))
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// historyTransactionTraces returns the page of t's traces and their count
// from its history block's traces: none when the block was stored without
// traces.
func (r reader) historyTransactionTraces(ctx context.Context, t *chainquery.Transaction, page chainquery.Page) ([]*chainquery.Trace, int, error) {
	out := []*chainquery.Trace{}
	blocks, err := r.loadHistoryBlocks(ctx, []uint64{t.BlockNumber})
	if err != nil {
		return nil, 0, err
	}
	hb := blocks[t.BlockNumber]
	first, ok := hb.first[t.Index]
	if !ok {
		return out, 0, nil
	}
	end := first
	for end < len(hb.traces) && hb.traces[end].TransactionIndex == t.Index {
		end++
	}
	run := hb.traces[first:end]
	for _, tr := range run[min(page.Offset, len(run)):min(page.Offset+page.Limit, len(run))] {
		row := *tr
		out = append(out, &row)
	}
	return out, len(run), nil
}

// CountTraces returns the statement counting the traces of p and its
// arguments: without addresses, the sum of the range's per-block trace
// counts; with them, the dialect's walks of the address indexes
// (TraceCount).
func (d *Dialect) CountTraces(p *TracePlan) (string, []any) {
	if len(p.Walk) == 0 {
		return `SELECT coalesce(sum(trace_count), 0) FROM blocks WHERE chain = $1 AND number BETWEEN $2 AND $3`,
			[]any{p.Chain, p.Lo, p.Hi}
	}
	return d.TraceCount(p)
}
