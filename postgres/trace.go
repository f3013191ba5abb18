package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery/sqlstore"
)

// args collects a statement's arguments; add returns the placeholder of v.
// Every statement of a Filter Traces plan (sqlstore.TracePlan) below takes
// $1 chain and $2, $3 the block range; the rest are numbered as each
// statement adds them. docs/storage-plans-postgres.md shows the plans.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d", len(*a))
}

// walkColumn is the column of the plan's walks.
func walkColumn(p *sqlstore.TracePlan) string {
	if p.FromIndex {
		return "from_addr"
	}
	return "to_addr"
}

// alsoSQL is the condition on the side not walked of a from+to filter: a
// filter on the column that the walked index carries (traces_from includes
// to_addr, traces_to from_addr), so the walk stays in the index.
func alsoSQL(p *sqlstore.TracePlan, a *args) string {
	if len(p.Also) == 0 {
		return ""
	}
	return ` AND ` + p.AlsoColumn() + ` = ANY(` + a.add(p.Also) + `)`
}

// traceCountSQL returns the count statement and its arguments. With
// addresses it adds up one count per address walked (NewTracePlan walks an
// address once), each a walk of its own (walkSQL): with every address in
// one = ANY($n), a planner without statistics rated that index below the
// primary key's walk of the whole block range (it prices an array of
// unknown length as ten index searches), and counted by reading every
// trace of the range.
func traceCountSQL(p *sqlstore.TracePlan) (string, []any) {
	a := args{p.Chain, p.Lo, p.Hi}
	also, dir := alsoSQL(p, &a), a.add(p.Dir())
	var parts []string
	for _, addr := range p.Walk {
		parts = append(parts, `SELECT count(*) FROM (`+walkSQL(p, "traces", addr, &a, dir, also, "c.n")+`) w`)
	}
	return `SELECT sum(n)::bigint FROM (` + strings.Join(parts, " UNION ALL ") + `) walks (n)`, a
}

// walkSQL walks one address's entries of the plan's index in the plan's
// range, bucket by bucket: the address indexes lead with the bucket of
// trace_counts (migration 0007), so trace_counts says, bucket by bucket,
// where the address has traces (n > 0), and the index is searched at each,
// in table (traces, or the one partition of a page's range: searchTable).
// trace_counts is keyed by bucket first (migration 0010), so each bucket is
// a search of its own (bucketRow). Each search is a LATERAL subquery that
// its LIMIT keeps PostgreSQL from flattening into a join, so that the walk
// is a nested loop driven by the buckets whatever the statistics. A page's
// walk limits each search to offset+limit entries; a count's to the
// bucket's n, all of them, and its ORDER BY (the walked index's order)
// keeps a planner without statistics from searching the other address
// index, which also leads with the bucket, and filtering
// (TestReadsWithoutStatistics). PostgreSQL does not know that the loop
// keeps the searches' order within a bucket, so a page sorts the walk's
// rows, which the store bounds by ending the range at the page's last
// bucket (Dialect.NarrowWalks). dir is the placeholder of the plan's
// direction.
func walkSQL(p *sqlstore.TracePlan, table string, addr []byte, a *args, dir, also, limit string) string {
	ph := a.add(addr)
	b := strconv.Itoa(sqlstore.TraceCountBlocks)
	return `SELECT t.block_number, t.tx_index, t.trace_pos FROM ` + bucketRow("($2 / "+b+")", "($3 / "+b+")", "bucket, n", dir, ph, "n > 0") + `
		CROSS JOIN LATERAL (SELECT block_number, tx_index, trace_pos FROM ` + table + `
			WHERE chain = $1 AND block_number / ` + b + ` = c.bucket AND ` + walkColumn(p) + ` = ` + ph + also + `
				AND block_number BETWEEN $2 AND $3 ORDER BY block_number, tx_index, trace_pos LIMIT ` + limit + `) t`
}

// bucketRow is the FROM of a search of trace_counts, one bucket at a time
// from first to last, for the row of direction dir and address addr (all
// SQL expressions) meeting cond, as c with the columns cols. trace_counts
// is keyed by bucket first, so that a write's rows are the ones at its
// end; a BETWEEN on the bucket would read every address's rows of the
// range, where a search per bucket reads the address's row of each.
func bucketRow(first, last, cols, dir, addr, cond string) string {
	return `generate_series(` + first + `::bigint, ` + last + `::bigint) k (b)
		CROSS JOIN LATERAL (SELECT ` + cols + ` FROM trace_counts
			WHERE chain = $1 AND bucket = k.b AND dir = ` + dir + ` AND address = ` + addr + ` AND ` + cond + ` LIMIT 1) c`
}

// traceBucketSumSQL adds up trace_counts over the plan's whole buckets,
// one sum per address as the count's walks are (traceCountSQL says why).
func traceBucketSumSQL(p *sqlstore.TracePlan) (string, []any) {
	a := args{p.Chain, p.Dir(), p.FirstBucket, p.LastBucket}
	if len(p.Walk) == 0 {
		return `SELECT coalesce(sum(c.n), 0)::bigint FROM ` + bucketRow("$3", "$4", "n", "$2", `'\x'::bytea`, "true"), a
	}
	var parts []string
	for _, addr := range p.Walk {
		parts = append(parts, `SELECT sum(c.n) FROM `+bucketRow("$3", "$4", "n", "$2", a.add(addr), "true"))
	}
	return `SELECT coalesce(sum(n), 0)::bigint FROM (` + strings.Join(parts, " UNION ALL ") + `) buckets (n)`, a
}

// traceBucketsSQL gives the plan's whole buckets one by one.
func traceBucketsSQL(p *sqlstore.TracePlan) (string, []any) {
	a := args{p.Chain, p.Dir(), p.FirstBucket, p.LastBucket}
	switch len(p.Walk) {
	case 0:
		return `SELECT k.b, c.n FROM ` + bucketRow("$3", "$4", "n", "$2", `'\x'::bytea`, "true") + ` ORDER BY k.b`, a
	case 1:
		return `SELECT k.b, c.n FROM ` + bucketRow("$3", "$4", "n", "$2", a.add(p.Walk[0]), "true") + ` ORDER BY k.b`, a
	}
	// One walk per address, as the sums are: with address = ANY($n), the
	// generic plan without statistics read every row of the direction in
	// the bucket range and filtered the addresses (TestReadsWithoutStatistics).
	var parts []string
	for _, addr := range p.Walk {
		parts = append(parts, `SELECT k.b, c.n FROM `+bucketRow("$3", "$4", "n", "$2", a.add(addr), "true"))
	}
	return `SELECT b, sum(n)::bigint FROM (` + strings.Join(parts, " UNION ALL ") + `) buckets (b, n)
		GROUP BY b ORDER BY b`, a
}

// traceKeysSQL selects the primary keys of the page. With addresses, each
// address contributes its first offset+limit matches in API order, read
// from its index bucket by bucket (walkSQL); the union of those holds the
// page.
func traceKeysSQL(p *sqlstore.TracePlan) (string, []any) {
	const order = ` ORDER BY block_number, tx_index, trace_pos`
	a := args{p.Chain, p.Lo, p.Hi}
	if len(p.Walk) == 0 {
		s := `SELECT block_number, tx_index, trace_pos FROM traces
			WHERE chain = $1 AND block_number BETWEEN $2 AND $3` + order +
			` LIMIT ` + a.add(p.Page.Limit) + ` OFFSET ` + a.add(p.Page.Offset)
		return s, a
	}
	const walkOrder = ` ORDER BY k.b, t.block_number, t.tx_index, t.trace_pos LIMIT `
	walkLimit, also, dir := a.add(p.Page.Offset+p.Page.Limit), alsoSQL(p, &a), a.add(p.Dir())
	table := searchTable(p)
	if len(p.Walk) == 1 { // the walk is the page
		s := walkSQL(p, table, p.Walk[0], &a, dir, also, walkLimit) + walkOrder + a.add(p.Page.Limit) + ` OFFSET ` + a.add(p.Page.Offset)
		return s, a
	}
	var parts []string
	for _, addr := range p.Walk {
		parts = append(parts, `(`+walkSQL(p, table, addr, &a, dir, also, walkLimit)+walkOrder+walkLimit+`)`)
	}
	s := `SELECT * FROM (` + strings.Join(parts, " UNION ALL ") + `) walks ORDER BY 1, 2, 3 LIMIT ` +
		a.add(p.Page.Limit) + ` OFFSET ` + a.add(p.Page.Offset)
	return s, a
}

// searchTable is the table a page's walk searches bucket by bucket: the
// one partition of traces holding the plan's range when there is one
// (after NarrowWalks, nearly always), else traces. Searched through the
// partitioned parent, each bucket's search is an Append over its
// partitions, and on analyzed tables the generic plan sorted the
// address's entries of the whole bucket under it (a top-N heapsort of
// the hot address's thousands of entries for a page of 50) rather than read the
// index in order up to the LIMIT; a partition alone is one index, whose
// order the LIMIT stops. The partition exists: a page is read only when
// the range holds matches.
func searchTable(p *sqlstore.TracePlan) string {
	if r := p.Lo / PartitionBlocks; r == p.Hi/PartitionBlocks {
		return partitionName("traces", r)
	}
	return "traces"
}

// tracePageSQL fetches the rows of the page's keys (at most 50): each key
// looks up its trace, its transaction and its block by primary key, in
// LATERAL subqueries that LIMIT 1 keeps PostgreSQL from flattening into a
// join. The lookups are then nested loops driven by the keys whatever the
// statistics: as a join, the planner was free to choose its order, and on
// tables not yet analyzed (every estimate one row) it drove the join from
// the blocks and transactions instead, rescanning the block range's traces
// once per key (docs/storage.md, "Plans without statistics"). The block
// range is repeated on the traces lookup so that partitions outside it are
// pruned once, when the statement starts (a generic plan's "Subplans
// Removed"), rather than probed for every key.
func tracePageSQL(p *sqlstore.TracePlan) (string, []any) {
	keys, args := traceKeysSQL(p)
	return `WITH page (block_number, tx_index, trace_pos) AS (` + keys + `)
		SELECT p.block_number, b.timestamp, b.version, x.hash, p.tx_index, t.trace_address, x.from_addr, x.to_addr,
			x.status, t.type, t.call_type, t.from_addr, t.to_addr, t.gas, t.gas_used, t.value, t.subtraces,
			t.input, t.output, t.error
		FROM page p
		CROSS JOIN LATERAL (SELECT trace_address, type, call_type, from_addr, to_addr, gas, gas_used, value, subtraces,
				input, output, error
			FROM traces WHERE chain = $1 AND block_number BETWEEN $2 AND $3
				AND block_number = p.block_number AND tx_index = p.tx_index AND trace_pos = p.trace_pos LIMIT 1) t
		CROSS JOIN LATERAL (SELECT hash, from_addr, to_addr, status FROM transactions
			WHERE chain = $1 AND block_number = p.block_number AND tx_index = p.tx_index LIMIT 1) x
		CROSS JOIN LATERAL (SELECT timestamp, version FROM blocks
			WHERE chain = $1 AND number = p.block_number LIMIT 1) b
		ORDER BY p.block_number, p.tx_index, p.trace_pos`, args
}

// logPostingsFrom is the FROM of a search of log_postings for the cols of
// the rows of keys ($3) of kind ($2), one bucket at a time from $4 to $5,
// as c, in bucket order (bucketRow says why a search per bucket).
func logPostingsFrom(cols string) string {
	return logPostingsWhere(cols, "")
}

// logPostingsWhere is logPostingsFrom of the rows that meet and (SQL after
// AND).
func logPostingsWhere(cols, and string) string {
	return `generate_series($4::bigint, $5::bigint) k (b) CROSS JOIN unnest($3::bytea[]) a (key)
		CROSS JOIN LATERAL (SELECT ` + cols + ` FROM log_postings
			WHERE chain = $1 AND bucket = k.b AND kind = $2 AND key = a.key ` + and + ` LIMIT 1) c`
}

// logPostingCountsSQL counts the logs of keys of kind in each bucket from
// first to last.
func logPostingCountsSQL(chain int64, kind int, keys [][]byte, first, last int64) (string, []any) {
	return `SELECT k.b, sum(c.n)::bigint FROM ` + logPostingsFrom("n") + ` GROUP BY k.b ORDER BY k.b`,
		[]any{chain, kind, keys, first, last}
}

// logPostingsSQL reads the posting lists of keys of kind over the buckets
// first to last.
func logPostingsSQL(chain int64, kind int, keys [][]byte, first, last int64) (string, []any) {
	return `SELECT k.b, c.list FROM ` + logPostingsFrom("list") + ` ORDER BY k.b`, []any{chain, kind, keys, first, last}
}

// logPostingsPrefixSQL is logPostingsSQL with the first n bytes of each
// list: substring on the stored value (EXTERNAL, migration 0012) fetches
// the TOAST chunks of those bytes alone.
func logPostingsPrefixSQL(chain int64, kind int, keys [][]byte, first, last int64, n int) (string, []any) {
	return `SELECT k.b, c.list FROM ` + logPostingsFrom("substring(list FROM 1 FOR $6) AS list") + ` ORDER BY k.b`,
		[]any{chain, kind, keys, first, last, n}
}

// logTopicsSQL reads the topics of the lists of addrs (log_postings' kind
// 0) over the buckets first to last.
func logTopicsSQL(chain int64, addrs [][]byte, first, last int64) (string, []any) {
	return `SELECT k.b, c.topics FROM ` + logPostingsFrom("topics") + ` ORDER BY k.b`, []any{chain, 0, addrs, first, last}
}

// logTaggedPostingsSQL reads the lists of addrs with their topics and tags
// over the buckets first to last, those with tags: a list whose pieces
// all have their pairs' lists has none, and is not read (octet_length
// reads a TOAST pointer's size, not its value).
func logTaggedPostingsSQL(chain int64, addrs [][]byte, first, last int64) (string, []any) {
	return `SELECT k.b, c.topics, c.list, c.tags FROM ` + logPostingsWhere("topics, list, tags", "AND octet_length(tags) > 0") + ` ORDER BY k.b`,
		[]any{chain, 0, addrs, first, last}
}

// historyBlocksSQL returns the statement reading the segments of kinds
// (the transactions' and the traces', or the transactions' and the logs')
// of history blocks, with their stamps.
func historyBlocksSQL(kinds string) func(chain int64, numbers []uint64) (string, []any) {
	return func(chain int64, numbers []uint64) (string, []any) {
		ns := make([]int64, len(numbers))
		for i, n := range numbers {
			ns[i] = int64(n)
		}
		return `SELECT n.number, b.timestamp, b.version, s.kind, s.data FROM unnest($2::bigint[]) AS n (number)
		CROSS JOIN LATERAL (SELECT timestamp, version FROM blocks WHERE chain = $1 AND number = n.number LIMIT 1) b
		CROSS JOIN LATERAL (SELECT kind, data FROM history_segments
			WHERE chain = $1 AND number = n.number AND kind IN (` + kinds + `) LIMIT 2) s`, []any{chain, ns}
	}
}

// historyStampsSQL reads the timestamps and versions of blocks.
func historyStampsSQL(chain int64, numbers []uint64) (string, []any) {
	ns := make([]int64, len(numbers))
	for i, n := range numbers {
		ns[i] = int64(n)
	}
	return `SELECT n.number, b.timestamp, b.version FROM unnest($2::bigint[]) AS n (number)
		CROSS JOIN LATERAL (SELECT timestamp, version FROM blocks WHERE chain = $1 AND number = n.number LIMIT 1) b`,
		[]any{chain, ns}
}
