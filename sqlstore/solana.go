package sqlstore

import (
	"context"
	"time"

	"github.com/chainquery/chainquery"
)

// SolanaCursor returns the cursor WriteTokenBalances last recorded, with an
// empty Blockhash when it was stored before hashes were. It reads the
// primary: a resuming ingester must not trust a lagging replica.
func (s *SQLStore) SolanaCursor(ctx context.Context) (chainquery.SolanaCursor, bool, error) {
	var c chainquery.SolanaCursor
	var blockTime int64
	var hash *string
	var sc scan
	sc.counter(&c.Slot).to(&blockTime, &hash)
	if found, err := queryRow(ctx, s.Primary, s.SQL.SolanaCursor, nil, sc.dest...); err != nil || !found {
		return chainquery.SolanaCursor{}, false, err
	}
	if err := sc.done(); err != nil {
		return chainquery.SolanaCursor{}, false, err
	}
	c.BlockTime = time.UnixMilli(blockTime).UTC()
	if hash != nil {
		c.Blockhash = *hash
	}
	return c, true, nil
}
