package postgres

import (
	"context"
	"fmt"

	"github.com/chainquery/chainquery/sqlstore"
	"github.com/jackc/pgx/v5"
)

// writeLockClass is the first key of the per-chain pg_advisory_xact_lock
// (the second is the chain id) that makes writers of one chain take turns,
// as SQLite's single writer does: two writers computing versions from the
// same snapshot would otherwise collide.
const writeLockClass int32 = 0x6371 // "cq"

// blockBatch is the write transaction of one batch of blocks
// (sqlstore.BlockBatch) on the primary: a few statements over arrays of
// heights, and one COPY per table.
type blockBatch struct {
	txConn
	chain int64
}

// beginBlocks creates the partitions the heights need (partition.go), then
// begins the transaction and takes the chain's write lock.
func (db *DB) beginBlocks(ctx context.Context, chain int64, heights []uint64) (sqlstore.BlockBatch, error) {
	if err := db.ensurePartitions(ctx, heights); err != nil {
		return nil, err
	}
	tx, err := db.write.Begin(ctx)
	if err != nil {
		return nil, wrap(err)
	}
	b := &blockBatch{txConn{conn{tx}, tx}, chain}
	if _, err := b.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, writeLockClass, chain); err != nil {
		b.Rollback()
		return nil, err
	}
	return b, nil
}

// PriorVersions asks for all heights in one statement.
func (b *blockBatch) PriorVersions(ctx context.Context, heights []uint64) (map[uint64]int, error) {
	prior := map[uint64]int{}
	var n int64
	var v int
	err := b.Query(ctx, `SELECT number, max(version) FROM (
			SELECT number, version FROM blocks WHERE chain = $1 AND number = ANY($2)
			UNION ALL SELECT number, version FROM orphaned_blocks WHERE chain = $1 AND number = ANY($2)) v
		GROUP BY number`, []any{b.chain, int64s(heights)}, []any{&n, &v}, func() error {
		prior[uint64(n)] = v
		return nil
	})
	return prior, err
}

// DeleteHeights runs one statement per table over all heights.
func (b *blockBatch) DeleteHeights(ctx context.Context, heights []uint64) error {
	for _, q := range []string{
		uncountTracesSQL("= ANY($2)"),
		uncountLogsSQL("= ANY($2)"),
		`DELETE FROM log_counts WHERE chain = $1 AND bucket IN (SELECT h / 1000 FROM unnest($2::bigint[]) h) AND n = 0`,
		`DELETE FROM traces WHERE chain = $1 AND block_number = ANY($2)`,
		`DELETE FROM logs WHERE chain = $1 AND block_number = ANY($2)`,
		`DELETE FROM transactions WHERE chain = $1 AND block_number = ANY($2)`,
		`DELETE FROM blocks WHERE chain = $1 AND number = ANY($2)`,
		`DELETE FROM orphaned_blocks WHERE chain = $1 AND number = ANY($2)`,
	} {
		if _, err := b.Exec(ctx, q, b.chain, int64s(heights)); err != nil {
			return err
		}
	}
	return nil
}

// Insert sends each table's rows with one COPY.
func (b *blockBatch) Insert(ctx context.Context, tables []sqlstore.StoreTable) error {
	for _, t := range tables {
		cols := len(t.Columns)
		rows := pgx.CopyFromSlice(t.Rows(), func(i int) ([]any, error) { return t.Values[i*cols : (i+1)*cols], nil })
		if _, err := b.pgxTx.CopyFrom(ctx, pgx.Identifier{t.Name}, t.Columns, rows); err != nil {
			return wrap(fmt.Errorf("copy %s: %w", t.Name, err))
		}
	}
	return nil
}

// AddTraceCounts upserts the rows in one statement over arrays.
func (b *blockBatch) AddTraceCounts(ctx context.Context, rows []sqlstore.TraceCountRow) error {
	dirs, addrs, buckets, ns := make([]int16, len(rows)), make([][]byte, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
	lists := make([][]byte, len(rows)) // nil elements are NULL: the row's list stays as it is
	for i, r := range rows {
		dirs[i], addrs[i], buckets[i], ns[i], lists[i] = int16(r.Dir), r.Address, r.Bucket, r.N, r.List
	}
	// A list given is appended to the row's (its bytes after those there:
	// history.DecodePostings reads them as runs).
	_, err := b.Exec(ctx, `INSERT INTO trace_counts (chain, dir, address, bucket, n, list)
		SELECT $1, d, a, k, n, l FROM unnest($2::smallint[], $3::bytea[], $4::bigint[], $5::bigint[], $6::bytea[]) AS u (d, a, k, n, l)
		ON CONFLICT (chain, bucket, dir, address) DO UPDATE SET n = trace_counts.n + excluded.n,
			list = CASE WHEN excluded.list IS NULL THEN trace_counts.list ELSE coalesce(trace_counts.list, '\x'::bytea) || excluded.list END`,
		b.chain, dirs, addrs, buckets, ns, lists)
	return err
}

// AddLogPostings upserts the rows in one statement over arrays.
func (b *blockBatch) AddLogPostings(ctx context.Context, rows []sqlstore.TraceCountRow) error {
	kinds, keys, buckets, ns := make([]int16, len(rows)), make([][]byte, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
	lists := make([][]byte, len(rows))
	for i, r := range rows {
		kinds[i], keys[i], buckets[i], ns[i], lists[i] = int16(r.Dir), r.Address, r.Bucket, r.N, r.List
	}
	_, err := b.Exec(ctx, `INSERT INTO log_postings (chain, kind, key, bucket, n, list)
		SELECT $1, d, a, k, n, l FROM unnest($2::smallint[], $3::bytea[], $4::bigint[], $5::bigint[], $6::bytea[]) AS u (d, a, k, n, l)
		ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = log_postings.n + excluded.n,
			list = log_postings.list || excluded.list`,
		b.chain, kinds, keys, buckets, ns, lists)
	return err
}

// AddLogCounts upserts the rows in one statement over arrays.
func (b *blockBatch) AddLogCounts(ctx context.Context, rows []sqlstore.TraceCountRow) error {
	kinds, keys, buckets, ns := make([]int16, len(rows)), make([][]byte, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
	for i, r := range rows {
		kinds[i], keys[i], buckets[i], ns[i] = int16(r.Dir), r.Address, r.Bucket, r.N
	}
	_, err := b.Exec(ctx, `INSERT INTO log_counts (chain, kind, key, bucket, n)
		SELECT $1, d, a, k, n FROM unnest($2::smallint[], $3::bytea[], $4::bigint[], $5::bigint[]) AS u (d, a, k, n)
		ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = log_counts.n + excluded.n`,
		b.chain, kinds, keys, buckets, ns)
	return err
}

// uncountLogsSQL takes the logs of the blocks whose number matches cond (on
// $2 and on; $1 is the chain) off log_counts, before they are deleted; the
// rows it leaves at 0 are deleted by dropZeroLogCountsSQL, which is given
// the buckets that cond's blocks lie in.
func uncountLogsSQL(cond string) string {
	return `INSERT INTO log_counts (chain, bucket, kind, key, n)
		SELECT $1::integer, block_number / 1000, 0, address, -count(*) FROM logs
			WHERE chain = $1 AND block_number ` + cond + ` GROUP BY block_number / 1000, address
		UNION ALL SELECT $1::integer, block_number / 1000, 1, topic0, -count(*) FROM logs
			WHERE chain = $1 AND block_number ` + cond + ` AND topic0 IS NOT NULL GROUP BY block_number / 1000, topic0
		UNION ALL SELECT $1::integer, block_number / 1000, 2, address || topic0, -count(*) FROM logs
			WHERE chain = $1 AND block_number ` + cond + ` AND topic0 IS NOT NULL GROUP BY block_number / 1000, address, topic0
		ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = log_counts.n + excluded.n`
}

// dropZeroLogCountsSQL deletes the rows of log_counts at 0 in the buckets
// that match cond (on $2 and on).
func dropZeroLogCountsSQL(cond string) string {
	return `DELETE FROM log_counts WHERE chain = $1 AND bucket ` + cond + ` AND n = 0`
}

// uncountTracesSQL takes the traces of the blocks whose number matches cond
// (on $2; $1 is the chain) off trace_counts, before they are deleted.
func uncountTracesSQL(cond string) string {
	return `INSERT INTO trace_counts (chain, dir, address, bucket, n)
		SELECT $1::integer, 0, from_addr, block_number / 100, -count(*) FROM traces
			WHERE chain = $1 AND block_number ` + cond + ` GROUP BY from_addr, block_number / 100
		UNION ALL SELECT $1::integer, 1, to_addr, block_number / 100, -count(*) FROM traces
			WHERE chain = $1 AND block_number ` + cond + ` AND to_addr IS NOT NULL GROUP BY to_addr, block_number / 100
		UNION ALL SELECT $1::integer, 2, '\x'::bytea, number / 100, -sum(trace_count) FROM blocks
			WHERE chain = $1 AND number ` + cond + ` AND trace_count > 0 GROUP BY number / 100
		ON CONFLICT (chain, bucket, dir, address) DO UPDATE SET n = trace_counts.n + excluded.n`
}

// int64s returns heights as the bigints they are stored as.
func int64s(heights []uint64) []int64 {
	out := make([]int64, len(heights))
	for i, h := range heights {
		out[i] = int64(h)
	}
	return out
}
