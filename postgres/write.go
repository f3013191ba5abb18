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

// beginWrite begins a write transaction on the primary.
func (db *DB) beginWrite(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := db.write.Begin(ctx)
	if err != nil {
		return nil, wrap(err)
	}
	return txConn{conn{tx}, tx}, nil
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

// Insert sends each table's rows with one COPY; a table without rows costs
// nothing (the history's blocks leave the tip's tables empty, and each
// COPY is two round trips).
func (b *blockBatch) Insert(ctx context.Context, tables []sqlstore.Table) error {
	for _, t := range tables {
		cols := len(t.Columns)
		if len(t.Values) == 0 {
			continue
		}
		rows := pgx.CopyFromSlice(t.Rows(), func(i int) ([]any, error) { return t.Values[i*cols : (i+1)*cols], nil })
		if _, err := b.pgxTx.CopyFrom(ctx, pgx.Identifier{t.Name}, t.Columns, rows); err != nil {
			return wrap(fmt.Errorf("copy %s: %w", t.Name, err))
		}
	}
	return nil
}

// AddTraceCounts upserts the rows in one statement over arrays.
func (b *blockBatch) AddTraceCounts(ctx context.Context, rows []sqlstore.BucketRow) error {
	dirs, addrs, buckets, ns := make([]int16, len(rows)), make([][]byte, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
	lists := make([][]byte, len(rows)) // nil elements are NULL: the row's list stays as it is
	for i, r := range rows {
		dirs[i], addrs[i], buckets[i], ns[i], lists[i] = int16(r.Kind), r.Key, r.Bucket, r.N, r.List
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
func (b *blockBatch) AddLogPostings(ctx context.Context, rows []sqlstore.BucketRow) error {
	kinds, keys, buckets, ns := make([]int16, len(rows)), make([][]byte, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
	topics, lists, tags := make([][]byte, len(rows)), make([][]byte, len(rows)), make([][]byte, len(rows))
	for i, r := range rows {
		kinds[i], keys[i], buckets[i], ns[i] = int16(r.Kind), r.Key, r.Bucket, r.N
		topics[i], lists[i], tags[i] = r.Topics, r.List, r.Tags
	}
	_, err := b.Exec(ctx, `INSERT INTO log_postings (chain, kind, key, bucket, n, topics, list, tags)
		SELECT $1, d, a, k, n, t, l, g FROM unnest($2::smallint[], $3::bytea[], $4::bigint[], $5::bigint[], $6::bytea[], $7::bytea[], $8::bytea[]) AS u (d, a, k, n, t, l, g)
		ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = log_postings.n + excluded.n,
			topics = log_postings.topics || excluded.topics, list = log_postings.list || excluded.list,
			tags = log_postings.tags || excluded.tags`,
		b.chain, kinds, keys, buckets, ns, topics, lists, tags)
	return err
}

// AddLogCounts upserts the rows in one statement over arrays.
func (b *blockBatch) AddLogCounts(ctx context.Context, rows []sqlstore.BucketRow) error {
	kinds, keys, buckets, ns := make([]int16, len(rows)), make([][]byte, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
	for i, r := range rows {
		kinds[i], keys[i], buckets[i], ns[i] = int16(r.Kind), r.Key, r.Bucket, r.N
	}
	_, err := b.Exec(ctx, `INSERT INTO log_counts (chain, kind, key, bucket, n)
		SELECT $1, d, a, k, n FROM unnest($2::smallint[], $3::bytea[], $4::bigint[], $5::bigint[]) AS u (d, a, k, n)
		ON CONFLICT (chain, bucket, kind, key) DO UPDATE SET n = log_counts.n + excluded.n`,
		b.chain, kinds, keys, buckets, ns)
	return err
}

// int64s returns heights as the bigints they are stored as.
func int64s(heights []uint64) []int64 {
	out := make([]int64, len(heights))
	for i, h := range heights {
		out[i] = int64(h)
	}
	return out
}
