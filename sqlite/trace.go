package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/chainquery/chainquery"
)

// FindTraces returns one page of the traces matching f in API order and the
// number of matches over all pages.
//
// Every query is bounded by what it returns: the page is a primary-key range
// scan (no address) or one index walk per address of at most offset+limit
// entries, merged; the count sums per-block trace counts (no address) or
// counts index entries without touching trace rows. docs/storage.md shows
// the plans.
func (db *DB) FindTraces(ctx context.Context, f chainquery.TraceFilter) ([]*chainquery.Trace, int, error) {
	id, err := chainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	tx, err := db.rdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, wrap(err)
	}
	defer tx.Rollback()

	lo, hi, ok, err := traceBlockRange(ctx, tx, id, &f)
	if err != nil || !ok {
		return []*chainquery.Trace{}, 0, wrap(err)
	}
	q := newTraceQuery(id, lo, hi, f)
	var count int
	if err := tx.QueryRowContext(ctx, q.countSQL(), q.countArgs()...).Scan(&count); err != nil {
		return nil, 0, wrap(err)
	}
	if f.Offset >= count {
		return []*chainquery.Trace{}, count, nil
	}
	sqlText, args := q.pageSQL()
	rows, err := tx.QueryContext(ctx, sqlText, args...)
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
func traceBlockRange(ctx context.Context, tx *sql.Tx, chain int64, f *chainquery.TraceFilter) (lo, hi uint64, ok bool, err error) {
	seek := func(q string) func(int64) (uint64, bool, error) {
		return func(ts int64) (uint64, bool, error) {
			var n int64
			err := tx.QueryRowContext(ctx, q, chain, ts).Scan(&n)
			if errors.Is(err, sql.ErrNoRows) {
				return 0, false, nil
			}
			return uint64(n), err == nil, err
		}
	}
	return f.BlockRange(seek(qFirstBlockAtOrAfter), seek(qLastBlockAtOrBefore))
}

// traceQuery builds the count and page statements of one Filter Traces request.
type traceQuery struct {
	chain    int64
	lo, hi   int64
	page     chainquery.Page
	walk     string   // the address column walked per address: "" (none), from_addr or to_addr
	walkAddr [][]byte // the addresses walked
	also     [][]byte // with walk = from_addr: to_addr must be one of these
}

func newTraceQuery(chain int64, lo, hi uint64, f chainquery.TraceFilter) *traceQuery {
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

func (q *traceQuery) index() string {
	if q.walk == "from_addr" {
		return "traces_from"
	}
	return "traces_to"
}

// alsoSQL is the to_addr condition of a from+to filter.
func (q *traceQuery) alsoSQL() string {
	if len(q.also) == 0 {
		return ""
	}
	return ` AND to_addr IN (` + placeholders(len(q.also)) + `)`
}

func (q *traceQuery) countSQL() string {
	if q.walk == "" {
		return `SELECT coalesce(sum(trace_count), 0) FROM blocks WHERE chain = ? AND number BETWEEN ? AND ?`
	}
	return `SELECT count(*) FROM traces INDEXED BY ` + q.index() + ` WHERE chain = ? AND ` + q.walk +
		` IN (` + placeholders(len(q.walkAddr)) + `)` + q.alsoSQL() + ` AND block_number BETWEEN ? AND ?`
}

func (q *traceQuery) countArgs() []any {
	args := []any{q.chain}
	if q.walk != "" {
		args = appendBlobs(args, q.walkAddr)
		args = appendBlobs(args, q.also)
	}
	return append(args, q.lo, q.hi)
}

// keysSQL selects the primary keys of the page. With addresses, each address
// contributes its first offset+limit matches in API order, read from its
// index; the union of those holds the page.
func (q *traceQuery) keysSQL() (string, []any) {
	const order = ` ORDER BY block_number, tx_index, trace_pos`
	if q.walk == "" {
		return `SELECT block_number, tx_index, trace_pos FROM traces
			WHERE chain = ? AND block_number BETWEEN ? AND ?` + order + ` LIMIT ? OFFSET ?`,
			[]any{q.chain, q.lo, q.hi, q.page.Limit, q.page.Offset}
	}
	var parts []string
	var args []any
	for _, a := range q.walkAddr {
		parts = append(parts, `SELECT * FROM (SELECT block_number, tx_index, trace_pos FROM traces INDEXED BY `+q.index()+
			` WHERE chain = ? AND `+q.walk+` = ?`+q.alsoSQL()+` AND block_number BETWEEN ? AND ?`+order+` LIMIT ?)`)
		args = append(args, q.chain, a)
		args = appendBlobs(args, q.also)
		args = append(args, q.lo, q.hi, q.page.Offset+q.page.Limit)
	}
	return strings.Join(parts, " UNION ALL ") + ` ORDER BY 1, 2, 3 LIMIT ? OFFSET ?`,
		append(args, q.page.Limit, q.page.Offset)
}

func (q *traceQuery) pageSQL() (string, []any) {
	keys, args := q.keysSQL()
	return `WITH page (block_number, tx_index, trace_pos) AS (` + keys + `)
		SELECT t.block_number, b.timestamp, b.version, x.hash, t.tx_index, t.trace_address, x.from_addr, x.to_addr,
			x.status, t.type, t.call_type, t.from_addr, t.to_addr, t.gas, t.gas_used, t.value, t.subtraces,
			t.input, t.output, t.error
		FROM page p
		JOIN traces t ON t.chain = ? AND t.block_number = p.block_number AND t.tx_index = p.tx_index AND t.trace_pos = p.trace_pos
		JOIN transactions x ON x.chain = t.chain AND x.block_number = t.block_number AND x.tx_index = t.tx_index
		JOIN blocks b ON b.chain = t.chain AND b.number = t.block_number
		ORDER BY p.block_number, p.tx_index, p.trace_pos`, append(args, q.chain)
}

func appendBlobs(args []any, blobs [][]byte) []any {
	for _, b := range blobs {
		args = append(args, b)
	}
	return args
}

func scanTrace(rows *sql.Rows) (*chainquery.Trace, error) {
	t := &chainquery.Trace{}
	var addr string
	var typ, callType int
	var errText sql.NullString
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
	if typ < 0 || typ >= len(traceTypeNames) || callType < 0 || callType >= len(callTypeNames) {
		return nil, errors.New("sqlite: unknown trace type code")
	}
	t.Type, t.CallType, t.Error = traceTypeNames[typ], callTypeNames[callType], errText.String
	return t, nil
}
