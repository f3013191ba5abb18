package sqlstore

import (
	"context"
	"strconv"
	"time"

	"github.com/chainquery/chainquery"
)

// IndexStatus returns the indexed range of each EVM chain and the Solana
// cursor, in one read transaction: three index seeks per chain (its lowest
// and highest block, the block about 100 below the highest, and the lowest
// block holding a trace, found through trace_counts' buckets), and the
// cursor's one row.
func (s *Store) IndexStatus(ctx context.Context) (*chainquery.IndexStatus, error) {
	tx, err := s.ReadTx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	st := &chainquery.IndexStatus{Chains: []*chainquery.ChainStatus{}}
	for _, chain := range chainquery.EVMChains {
		cs, err := s.chainStatus(ctx, tx, chain)
		if err != nil {
			return nil, err
		}
		if cs != nil {
			st.Chains = append(st.Chains, cs)
		}
	}
	var c chainquery.SolanaCursor
	var blockTime int64
	var hash *string
	var sc scan
	sc.counter(&c.Slot).to(&blockTime, &hash)
	if found, err := queryRow(ctx, tx, qSolanaCursor, nil, sc.dest...); err != nil {
		return nil, err
	} else if found {
		if err := sc.done(); err != nil {
			return nil, err
		}
		c.BlockTime = time.UnixMilli(blockTime).UTC()
		if hash != nil {
			c.Blockhash = *hash
		}
		st.Solana = &c
	}
	return st, tx.Commit(ctx)
}

// chainStatus returns the indexed range of chain, nil when no block of it is
// stored.
func (s *Store) chainStatus(ctx context.Context, c Conn, chain chainquery.Chain) (*chainquery.ChainStatus, error) {
	id, err := storeChainID(chain)
	if err != nil {
		return nil, err
	}
	cs := &chainquery.ChainStatus{Chain: chain}
	var sc scan
	sc.counter(&cs.FirstBlock).counter(&cs.LastBlock).to(&cs.LastTime)
	if found, err := queryRow(ctx, c, qChainExtent, []any{id}, sc.dest...); err != nil || !found {
		return nil, err
	} else if err := sc.done(); err != nil {
		return nil, err
	}
	if cs.LastBlock > cs.FirstBlock {
		var n uint64
		var t int64
		sc = scan{}
		sc.counter(&n).to(&t)
		below := cs.LastBlock - min(cs.LastBlock-cs.FirstBlock, TraceCountBlocks)
		if found, err := queryRow(ctx, c, qBlockAtOrBelow, []any{id, int64(below)}, sc.dest...); err != nil {
			return nil, err
		} else if found {
			if err := sc.done(); err != nil {
				return nil, err
			}
			if n < cs.LastBlock {
				cs.BlockTime = max(float64(cs.LastTime-t), 0) / float64(cs.LastBlock-n)
			}
		}
	}
	var from uint64
	sc = scan{}
	sc.counter(&from).to(&cs.TracesFromTime)
	if found, err := queryRow(ctx, c, s.statements().tracesFrom, []any{id}, sc.dest...); err != nil {
		return nil, err
	} else if found {
		if err := sc.done(); err != nil {
			return nil, err
		}
		cs.TracesFrom = &from
	}
	return cs, nil
}

// qChainExtent: chain → the lowest number, the highest number and its
// timestamp; no row when none is stored. qBlockAtOrBelow: chain, number →
// number, timestamp of the highest block at or below it.
const (
	qChainExtent = `SELECT f.number, l.number, l.timestamp
		FROM (SELECT number FROM blocks WHERE chain = $1 ORDER BY number LIMIT 1) AS f,
		     (SELECT number, timestamp FROM blocks WHERE chain = $1 ORDER BY number DESC LIMIT 1) AS l`
	qBlockAtOrBelow = `SELECT number, timestamp FROM blocks WHERE chain = $1 AND number <= $2 ORDER BY number DESC LIMIT 1`
)

// tracesFromSQL: chain → number, timestamp of the lowest block holding a
// trace: the first bucket counting any, found a bucket at a time
// (trace_counts is keyed by bucket, then direction), then its first block
// with a trace. The walk stops at that bucket; the counts are exact, so no
// block holds a trace when no bucket counts one, and a chain without
// traces costs one seek, not a walk of its blocks. No row when none holds
// one.
func tracesFromSQL(d *Dialect) string {
	return `WITH RECURSIVE k (b) AS (
			SELECT min(bucket) FROM trace_counts WHERE chain = $1
			UNION ALL SELECT (SELECT min(bucket) FROM trace_counts WHERE chain = $1 AND bucket > k.b) FROM k
			WHERE k.b IS NOT NULL AND NOT EXISTS (SELECT 1 FROM trace_counts
				WHERE chain = $1 AND bucket = k.b AND dir = ` + strconv.Itoa(CountAll) + ` AND address = ` + d.EmptyBytes + ` AND n > 0))
		SELECT number, timestamp FROM blocks
		WHERE chain = $1 AND trace_count > 0 AND number >= (SELECT max(b) FROM k) * ` + strconv.Itoa(TraceCountBlocks) + `
		ORDER BY number LIMIT 1`
}
