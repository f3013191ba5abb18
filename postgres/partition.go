package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// PartitionBlocks is how many block heights one partition of traces and of
// logs holds. The partition key is block_number alone, so a partition holds
// that range for every chain; the chains' heights differ by orders of
// magnitude (ethereum ~2×10^7, polygon ~7×10^7, arbitrum ~3×10^8), so
// their rows mostly fall in different partitions anyway. A million blocks
// is about 23 days of polygon and 140 of ethereum: a partition's indexes
// stay a size that fits in memory while the number of partitions stays in
// the hundreds, where planning is still cheap. It cannot change once a
// database holds partitions.
const PartitionBlocks = 1_000_000

// partitionedTables are the tables partitioned by block range.
var partitionedTables = []string{"traces", "logs"}

// partitionName names the partition of table holding range r (blocks
// r*PartitionBlocks up to (r+1)*PartitionBlocks - 1), e.g. traces_p68.
func partitionName(table string, r int64) string { return fmt.Sprintf("%s_p%d", table, r) }

// ensurePartitions makes sure that every partition the given heights need
// exists, and the one after the highest too, so that an ingester following
// the chain head finds the next range ready before it gets there.
//
// It runs before the write transaction, in its own short transaction:
// CREATE TABLE ... PARTITION OF takes a lock on the parent that conflicts
// with readers, and it must be held for a moment, not for a whole batch.
// Ranges known to exist are remembered, so that most writes skip this.
func (db *DB) ensurePartitions(ctx context.Context, heights []uint64) error {
	var need []int64
	db.partMu.Lock()
	for _, h := range heights {
		r := int64(h / PartitionBlocks)
		for _, r := range []int64{r, r + 1} {
			if !db.parts[r] && !slices.Contains(need, r) {
				need = append(need, r)
			}
		}
	}
	db.partMu.Unlock()
	if len(need) == 0 {
		return nil
	}
	slices.Sort(need)
	err := pgx.BeginFunc(ctx, db.write, func(tx pgx.Tx) error {
		// Writers of other chains may enter the same range at once;
		// the lock makes the second wait and find the tables made.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, partitionLock); err != nil {
			return err
		}
		for _, r := range need {
			for _, table := range partitionedTables {
				lo, hi := r*PartitionBlocks, (r+1)*PartitionBlocks
				if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF %s FOR VALUES FROM (%d) TO (%d)`,
					partitionName(table, r), table, lo, hi)); err != nil {
					return fmt.Errorf("create partition %s: %w", partitionName(table, r), err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return wrap(err)
	}
	db.partMu.Lock()
	for _, r := range need {
		db.parts[r] = true
	}
	db.partMu.Unlock()
	return nil
}

// partitionLock is the pg_advisory_xact_lock key held while partitions are
// created.
const partitionLock = migrationLock + 1
