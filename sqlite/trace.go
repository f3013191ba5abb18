package sqlite

import (
	"strconv"
	"strings"

	"github.com/chainquery/chainquery/sqlstore"
)

// traceCountSQL counts the plan's traces by their index entries (walkSQL).
// It and the other statements of a Filter Traces plan (sqlstore.TracePlan)
// below are SQLite's: the address walks name their index.
// docs/storage-plans.md shows the plans.
func traceCountSQL(p *sqlstore.TracePlan) (string, []any) {
	from, args := walkSQL(p, p.Walk)
	return `SELECT count(*) ` + from, args
}

// walkSQL is the FROM and WHERE of a walk of the plan's index for the
// addresses in walk, in the plan's range, and its arguments. The address
// indexes lead with the bucket of trace_counts (migration 0007), so a walk
// seeks once per bucket and address: trace_counts says, bucket by bucket
// (its key leads with the bucket: inBuckets), where each address has
// traces (n > 0), and the index is searched at each. The unary + keeps
// SQLite from taking the join term for a constraint on c, so that it
// matches the index's block_number / 100. Rows come in bucket order, then
// the index's (block_number, tx_index, trace_pos) within a bucket: API
// order, when walk is one address.
func walkSQL(p *sqlstore.TracePlan, walk [][]byte) (string, []any) {
	const b = sqlstore.TraceCountBlocks
	args := appendBlobs([]any{p.Chain, p.Lo / b, p.Hi / b, p.Dir()}, walk)
	args = appendBlobs(append(args, p.Lo, p.Hi), p.Also)
	return `FROM trace_counts c CROSS JOIN traces t INDEXED BY ` + traceIndex(p) +
		` ON t.chain = c.chain AND t.block_number / ` + strconv.Itoa(b) + ` = +c.bucket AND t.` + walkColumn(p) + ` = c.address
		WHERE c.chain = ? AND c.bucket IN (` + bucketSeries + `) AND c.dir = ? AND c.address IN (` + placeholders(len(walk)) + `)
			AND c.n > 0 AND t.block_number BETWEEN ? AND ?` + alsoSQL(p), args
}

// bucketSeries is the buckets from its first argument to its second, for
// the IN of a search of trace_counts. trace_counts is keyed by bucket
// first (migration 0010), so that a write's rows are the ones at its end:
// a read that names its buckets one by one seeks each bucket's row of an
// address, where a BETWEEN on the bucket would read every address's rows
// of the range. SQLite reads an IN's values in order, so the rows still
// come in key order, and the query plans show no sort for it.
const bucketSeries = `WITH RECURSIVE k (b, last) AS (SELECT ?, ? UNION ALL SELECT b + 1, last FROM k WHERE b < last)
	SELECT b FROM k WHERE b <= last`

// traceBucketSumSQL adds up trace_counts over the plan's whole buckets.
func traceBucketSumSQL(p *sqlstore.TracePlan) (string, []any) {
	where, args := bucketWhere(p)
	return `SELECT coalesce(sum(n), 0) FROM trace_counts WHERE ` + where, args
}

// traceBucketsSQL gives the plan's whole buckets one by one.
func traceBucketsSQL(p *sqlstore.TracePlan) (string, []any) {
	where, args := bucketWhere(p)
	if len(p.Walk) <= 1 {
		// One address: the primary key's order is bucket order.
		return `SELECT bucket, n FROM trace_counts WHERE ` + where + ` ORDER BY bucket`, args
	}
	return `SELECT bucket, sum(n) FROM trace_counts WHERE ` + where + ` GROUP BY bucket ORDER BY bucket`, args
}

// bucketWhere selects the rows of trace_counts of the plan's direction,
// addresses and whole buckets.
func bucketWhere(p *sqlstore.TracePlan) (string, []any) {
	args := []any{p.Chain, p.FirstBucket, p.LastBucket, p.Dir()}
	if len(p.Walk) == 0 {
		return `chain = ? AND bucket IN (` + bucketSeries + `) AND dir = ? AND address = x''`, args
	}
	return `chain = ? AND bucket IN (` + bucketSeries + `) AND dir = ? AND address IN (` + placeholders(len(p.Walk)) + `)`,
		appendBlobs(args, p.Walk)
}

// tracePageSQL joins the page's keys to their rows: the trace by its rowid,
// which every index entry ends with.
func tracePageSQL(p *sqlstore.TracePlan) (string, []any) {
	keys, args := traceKeysSQL(p)
	return `WITH page (block_number, tx_index, trace_pos, id) AS (` + keys + `)
		SELECT t.block_number, b.timestamp, b.version, x.hash, t.tx_index, t.trace_address, x.from_addr, x.to_addr,
			x.status, t.type, t.call_type, t.from_addr, t.to_addr, t.gas, t.gas_used, t.value, t.subtraces,
			t.input, t.output, t.error
		FROM page p
		JOIN traces t ON t.rowid = p.id
		JOIN transactions x ON x.chain = ? AND x.block_number = p.block_number AND x.tx_index = p.tx_index
		JOIN blocks b ON b.chain = x.chain AND b.number = p.block_number
		ORDER BY p.block_number, p.tx_index, p.trace_pos`, append(args, p.Chain)
}

// traceKeysSQL selects the keys and rowids of the page. With addresses, each
// address contributes its first offset+limit matches in API order, read
// from its index bucket by bucket (walkSQL); the union of those holds the
// page.
func traceKeysSQL(p *sqlstore.TracePlan) (string, []any) {
	const order = ` ORDER BY block_number, tx_index, trace_pos`
	if len(p.Walk) == 0 {
		return `SELECT block_number, tx_index, trace_pos, rowid FROM traces INDEXED BY traces_key
			WHERE chain = ? AND block_number BETWEEN ? AND ?` + order + ` LIMIT ? OFFSET ?`,
			[]any{p.Chain, p.Lo, p.Hi, p.Page.Limit, p.Page.Offset}
	}
	if len(p.Walk) == 1 {
		// One walk is the page in API order already: no merge, and no
		// sort of its offset+limit rows.
		from, args := walkSQL(p, p.Walk)
		return `SELECT t.block_number, t.tx_index, t.trace_pos, t.rowid ` + from +
			` ORDER BY c.bucket, t.block_number, t.tx_index, t.trace_pos LIMIT ? OFFSET ?`, append(args, p.Page.Limit, p.Page.Offset)
	}
	var parts []string
	var args []any
	for _, a := range p.Walk {
		from, walkArgs := walkSQL(p, [][]byte{a})
		parts = append(parts, `SELECT * FROM (SELECT t.block_number, t.tx_index, t.trace_pos, t.rowid `+from+
			` ORDER BY c.bucket, t.block_number, t.tx_index, t.trace_pos LIMIT ?)`)
		args = append(append(args, walkArgs...), p.Page.Offset+p.Page.Limit)
	}
	return strings.Join(parts, " UNION ALL ") + ` ORDER BY 1, 2, 3 LIMIT ? OFFSET ?`,
		append(args, p.Page.Limit, p.Page.Offset)
}

// walkColumn and traceIndex are the column and the index of the plan's
// walks.
func walkColumn(p *sqlstore.TracePlan) string {
	if p.FromIndex {
		return "from_addr"
	}
	return "to_addr"
}

func traceIndex(p *sqlstore.TracePlan) string {
	if p.FromIndex {
		return "traces_from"
	}
	return "traces_to"
}

// alsoSQL is the condition on the side not walked of a from+to filter.
func alsoSQL(p *sqlstore.TracePlan) string {
	if len(p.Also) == 0 {
		return ""
	}
	return ` AND t.` + p.AlsoColumn() + ` IN (` + placeholders(len(p.Also)) + `)`
}

// appendBlobs appends each of blobs as an argument of its own.
func appendBlobs(args []any, blobs [][]byte) []any {
	for _, b := range blobs {
		args = append(args, b)
	}
	return args
}

// logPostingCountsSQL counts the logs of keys of kind in each bucket from
// first to last: a seek per bucket and key, in bucket order (bucketsIn).
func logPostingCountsSQL(chain int64, kind int, keys [][]byte, first, last int64) (string, []any) {
	in, args := bucketsIn([]any{chain}, first, last)
	return `SELECT bucket, sum(n) FROM log_postings
		WHERE chain = ? AND bucket IN (` + in + `) AND kind = ? AND key IN (` + placeholders(len(keys)) + `)
		GROUP BY bucket ORDER BY bucket`, appendBlobs(append(args, kind), keys)
}

// logPostingsSQL reads the posting lists of keys of kind over the buckets
// first to last: a seek per bucket and key, in bucket order.
func logPostingsSQL(chain int64, kind int, keys [][]byte, first, last int64) (string, []any) {
	return logPostingRowsSQL("list", chain, kind, keys, first, last, "")
}

// logTopicsSQL reads the topics of the lists of addrs (log_postings' kind
// 0) over the buckets first to last.
func logTopicsSQL(chain int64, addrs [][]byte, first, last int64) (string, []any) {
	return logPostingRowsSQL("topics", chain, 0, addrs, first, last, "")
}

// logTaggedPostingsSQL reads the lists of addrs with their topics and tags
// over the buckets first to last, those with tags: a list whose pieces
// all have their pairs' lists has none, and is not read (length reads the
// record's header alone).
func logTaggedPostingsSQL(chain int64, addrs [][]byte, first, last int64) (string, []any) {
	return logPostingRowsSQL("topics, list, tags", chain, 0, addrs, first, last, "AND length(tags) > 0")
}

// logPostingRowsSQL reads the bucket and cols of the rows of keys of kind
// over the buckets first to last that meet and (SQL after AND, or ""): a
// seek per bucket and key, in bucket order.
func logPostingRowsSQL(cols string, chain int64, kind int, keys [][]byte, first, last int64, and string) (string, []any) {
	in, args := bucketsIn([]any{chain}, first, last)
	return `SELECT bucket, ` + cols + ` FROM log_postings
		WHERE chain = ? AND bucket IN (` + in + `) AND kind = ? AND key IN (` + placeholders(len(keys)) + `) ` + and + `
		ORDER BY bucket`, appendBlobs(append(args, kind), keys)
}

// shortBuckets is the longest stretch of buckets that bucketsIn names one
// by one.
const shortBuckets = 4

// bucketsIn returns the list of an IN of the buckets first to last, and
// args with its arguments appended: the buckets themselves when they are
// few (a range of 100 blocks touches one or two), else bucketSeries, whose
// recursive query SQLite runs into a temporary table on every execution
// (on a cold address's Filter Traces, much of serve's CPU went to the
// statement that reads its lists: docs/benchmarks.md).
func bucketsIn(args []any, first, last int64) (string, []any) {
	if last < first || last-first >= shortBuckets {
		return bucketSeries, append(args, first, last)
	}
	for b := first; b <= last; b++ {
		args = append(args, b)
	}
	return placeholders(int(last - first + 1)), args
}

// historyBlocksSQL returns the statement reading the segments of kinds
// (the transactions' and the traces', or the transactions' and the logs')
// of history blocks, with their stamps.
func historyBlocksSQL(kinds string) func(chain int64, numbers []uint64) (string, []any) {
	return func(chain int64, numbers []uint64) (string, []any) {
		args := []any{chain}
		for _, n := range numbers {
			args = append(args, int64(n))
		}
		return `SELECT s.number, b.timestamp, b.version, s.kind, s.data
		FROM history_segments s JOIN blocks b ON b.chain = s.chain AND b.number = s.number
		WHERE s.chain = ? AND s.number IN (` + placeholders(len(numbers)) + `) AND s.kind IN (` + kinds + `)`, args
	}
}

// historyStampsSQL reads the timestamps and versions of blocks.
func historyStampsSQL(chain int64, numbers []uint64) (string, []any) {
	args := []any{chain}
	for _, n := range numbers {
		args = append(args, int64(n))
	}
	return `SELECT number, timestamp, version FROM blocks WHERE chain = ? AND number IN (` + placeholders(len(numbers)) + `)`, args
}
