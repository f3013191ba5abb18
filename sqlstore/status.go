package sqlstore

import (
	"context"
	"time"

	"github.com/chainquery/chainquery"
)

// IndexStatus returns the indexed range of each EVM chain and the Solana
// cursor, in one read transaction: three index seeks per chain (its lowest
// and highest block, the block about 100 below the highest, and the lowest
// block holding a trace, found through trace_counts' buckets), and the
// cursor's one row.
func (s *SQLStore) IndexStatus(ctx context.Context) (*chainquery.IndexStatus, error) {
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
	if found, err := queryRow(ctx, tx, s.SQL.SolanaCursor, nil, sc.dest...); err != nil {
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
func (s *SQLStore) chainStatus(ctx context.Context, c StoreConn, chain chainquery.Chain) (*chainquery.ChainStatus, error) {
	id, err := storeChainID(chain)
	if err != nil {
		return nil, err
	}
	cs := &chainquery.ChainStatus{Chain: chain}
	var sc scan
	sc.counter(&cs.FirstBlock).counter(&cs.LastBlock).to(&cs.LastTime)
	if found, err := queryRow(ctx, c, s.SQL.ChainExtent, []any{id}, sc.dest...); err != nil || !found {
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
		if found, err := queryRow(ctx, c, s.SQL.BlockAtOrBelow, []any{id, int64(below)}, sc.dest...); err != nil {
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
	if found, err := queryRow(ctx, c, s.SQL.TracesFrom, []any{id}, sc.dest...); err != nil {
		return nil, err
	} else if found {
		if err := sc.done(); err != nil {
			return nil, err
		}
		cs.TracesFrom = &from
	}
	return cs, nil
}
