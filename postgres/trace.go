package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
)

// FindTraces returns one page of the traces matching f in API order and the
// number of matches over all pages.
//
// Every query is bounded by what it returns, as in the SQLite store: the
// page is a primary-key range scan (no address) or one index walk per
// address of at most offset+limit entries, merged; the count sums per-block
// trace counts (no address) or counts index entries without touching trace
// rows. docs/storage-plans-postgres.md shows the plans.
func (db *DB) FindTraces(ctx context.Context, f chainquery.TraceFilter) ([]*chainquery.Trace, int, error) {
	id, err := chainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	tx, err := db.readTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer rollback(tx)

	lo, hi, ok, err := traceBlockRange(ctx, tx, id, &f)
	if err != nil || !ok {
		return []*chainquery.Trace{}, 0, wrap(err)
	}
	q := newTraceQuery(id, lo, hi, f)
	var count int
	countText, countArgs := q.countSQL()
	if err := tx.QueryRow(ctx, countText, countArgs...).Scan(&count); err != nil {
		return nil, 0, wrap(err)
	}
	if f.Offset >= count {
		return []*chainquery.Trace{}, count, nil
	}
	sqlText, args := q.pageSQL()
	rows, err := tx.Query(ctx, sqlText, args...)
	if err != nil {
		return nil, 0, wrap(err)
	}
	defer rows.Close()
	out := []*chainquery.Trace{}
	for rows.Next() {
		t, err := scanTrace(rows)
		if err != nil {
			return nil, 0, wrap(err)
		}
		out = append(out, t)
	}
	return out, count, wrap(rows.Err())
}

// traceBlockRange resolves the filter's range to blocks with two seeks on
// blocks_timestamp (chainquery.TraceFilter.BlockRange says how).
func traceBlockRange(ctx context.Context, tx pgx.Tx, chain int32, f *chainquery.TraceFilter) (lo, hi uint64, ok bool, err error) {
	seek := func(q string) func(int64) (uint64, bool, error) {
		return func(ts int64) (uint64, bool, error) {
			var n int64
			err := tx.QueryRow(ctx, q, chain, ts).Scan(&n)
			if errors.Is(err, pgx.ErrNoRows) {
				return 0, false, nil
			}
			return uint64(n), err == nil, err
		}
	}
	return f.BlockRange(seek(qFirstBlockAtOrAfter), seek(qLastBlockAtOrBefore))
}

// traceQuery builds the count and page statements of one Filter Traces
// request. Every statement takes $1 chain and $2, $3 the block range; the
// rest are numbered as each statement adds them (args).
type traceQuery struct {
	chain    int32
	lo, hi   int64
	page     chainquery.Page
	walk     string   // the address column walked per address: "" (none), from_addr or to_addr
	walkAddr [][]byte // the addresses walked
	also     [][]byte // with walk = from_addr: to_addr must be one of these
}

// args collects a statement's arguments; add returns the placeholder of v.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d", len(*a))
}

func newTraceQuery(chain int32, lo, hi uint64, f chainquery.TraceFilter) *traceQuery {
	q := &traceQuery{chain: chain, lo: int64(lo), hi: int64(hi), page: f.Page}
	fromIndex, walk, also := f.AddressWalk()
	if len(walk) > 0 {
		q.walk, q.walkAddr, q.also = "to_addr", blobs(walk), blobs(also)
		if fromIndex {
			q.walk = "from_addr"
		}
	}
	return q
}

func blobs(addrs []chainquery.Address) [][]byte {
	out := make([][]byte, len(addrs))
	for i := range addrs {
		out[i] = addrs[i][:]
	}
	return out
}

// alsoSQL is the to_addr condition of a from+to filter: a filter on the
// column that traces_from carries, so the walk stays in the index.
func (q *traceQuery) alsoSQL(a *args) string {
	if len(q.also) == 0 {
		return ""
	}
	return ` AND to_addr = ANY(` + a.add(q.also) + `)`
}

// countSQL returns the count statement and its arguments.
func (q *traceQuery) countSQL() (string, []any) {
	a := args{q.chain, q.lo, q.hi}
	if q.walk == "" {
		return `SELECT coalesce(sum(trace_count), 0) FROM blocks WHERE chain = $1 AND number BETWEEN $2 AND $3`, a
	}
	s := `SELECT count(*) FROM traces WHERE chain = $1 AND ` + q.walk + ` = ANY(` + a.add(q.walkAddr) + `)` +
		q.alsoSQL(&a) + ` AND block_number BETWEEN $2 AND $3`
	return s, a
}

// keysSQL selects the primary keys of the page. With addresses, each address
// contributes its first offset+limit matches in API order, read from its
// index; the union of those holds the page.
func (q *traceQuery) keysSQL() (string, []any) {
	const order = ` ORDER BY block_number, tx_index, trace_pos`
	a := args{q.chain, q.lo, q.hi}
	if q.walk == "" {
		s := `SELECT block_number, tx_index, trace_pos FROM traces
			WHERE chain = $1 AND block_number BETWEEN $2 AND $3` + order +
			` LIMIT ` + a.add(q.page.Limit) + ` OFFSET ` + a.add(q.page.Offset)
		return s, a
	}
	walkLimit, also := a.add(q.page.Offset+q.page.Limit), q.alsoSQL(&a)
	var parts []string
	for _, addr := range q.walkAddr {
		parts = append(parts, `(SELECT block_number, tx_index, trace_pos FROM traces
			WHERE chain = $1 AND `+q.walk+` = `+a.add(addr)+also+` AND block_number BETWEEN $2 AND $3`+order+` LIMIT `+walkLimit+`)`)
	}
	s := `SELECT * FROM (` + strings.Join(parts, " UNION ALL ") + `) walks ORDER BY 1, 2, 3 LIMIT ` +
		a.add(q.page.Limit) + ` OFFSET ` + a.add(q.page.Offset)
	return s, a
}

// pageSQL joins the page's keys (at most 50) to their rows. The block range
// is repeated on the traces join so that partitions outside it are pruned
// once, when the statement starts (a generic plan's "Subplans Removed"),
// rather than probed for every key.
func (q *traceQuery) pageSQL() (string, []any) {
	keys, args := q.keysSQL()
	return `WITH page (block_number, tx_index, trace_pos) AS (` + keys + `)
		SELECT t.block_number, b.timestamp, b.version, x.hash, t.tx_index, t.trace_address, x.from_addr, x.to_addr,
			x.status, t.type, t.call_type, t.from_addr, t.to_addr, t.gas, t.gas_used, t.value, t.subtraces,
			t.input, t.output, t.error
		FROM page p
		JOIN traces t ON t.chain = $1 AND t.block_number BETWEEN $2 AND $3
			AND t.block_number = p.block_number AND t.tx_index = p.tx_index AND t.trace_pos = p.trace_pos
		JOIN transactions x ON x.chain = t.chain AND x.block_number = t.block_number AND x.tx_index = t.tx_index
		JOIN blocks b ON b.chain = t.chain AND b.number = t.block_number
		ORDER BY p.block_number, p.tx_index, p.trace_pos`, args
}

func scanTrace(rows pgx.Rows) (*chainquery.Trace, error) {
	t := &chainquery.Trace{}
	var addr string
	var typ, callType int16
	var errText *string
	if err := rows.Scan(gasCol{&t.BlockNumber}, &t.Timestamp, &t.Version, fixedCol(t.TransactionHash[:]), &t.TransactionIndex,
		&addr, fixedCol(t.TransactionFrom[:]), addrPtrCol{&t.TransactionTo}, &t.TransactionStatus, &typ, &callType,
		fixedCol(t.From[:]), addrPtrCol{&t.To}, gasCol{&t.Gas}, gasCol{&t.GasUsed}, bigCol{&t.Value}, &t.Subtraces,
		bytesCol{&t.Input}, bytesCol{&t.Output}, &errText); err != nil {
		return nil, err
	}
	var err error
	if t.TraceAddress, err = chainquery.ParseTraceAddress(addr); err != nil {
		return nil, err
	}
	if typ < 0 || int(typ) >= len(traceTypeNames) || callType < 0 || int(callType) >= len(callTypeNames) {
		return nil, errors.New("postgres: unknown trace type code")
	}
	t.Type, t.CallType = traceTypeNames[typ], callTypeNames[callType]
	if errText != nil {
		t.Error = *errText
	}
	return t, nil
}
