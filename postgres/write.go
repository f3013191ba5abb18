package postgres

import (
	"context"
	"fmt"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
)

// writeLockClass is the first key of the per-chain pg_advisory_xact_lock
// (the second is the chain id) that makes writers of one chain take turns,
// as SQLite's single writer does: two writers computing versions from the
// same snapshot would otherwise collide.
const writeLockClass int32 = 0x6371 // "cq"

// blockBatch is the write transaction of one batch of blocks
// (chainquery.BlockBatch) on the primary: a few statements over arrays of
// heights, and one COPY per table.
type blockBatch struct {
	txConn
	chain int64
}

// beginBlocks creates the partitions the heights need (partition.go), then
// begins the transaction and takes the chain's write lock.
func (db *DB) beginBlocks(ctx context.Context, chain int64, heights []uint64) (chainquery.BlockBatch, error) {
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
func (b *blockBatch) Insert(ctx context.Context, tables []chainquery.StoreTable) error {
	for _, t := range tables {
		cols := len(t.Columns)
		rows := pgx.CopyFromSlice(t.Rows(), func(i int) ([]any, error) { return t.Values[i*cols : (i+1)*cols], nil })
		if _, err := b.pgxTx.CopyFrom(ctx, pgx.Identifier{t.Name}, t.Columns, rows); err != nil {
			return wrap(fmt.Errorf("copy %s: %w", t.Name, err))
		}
	}
	return nil
}

// int64s returns heights as the bigints they are stored as.
func int64s(heights []uint64) []int64 {
	out := make([]int64, len(heights))
	for i, h := range heights {
		out[i] = int64(h)
	}
	return out
}
