package sqlstore

import (
	"context"
	"fmt"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// An address's row of a bucket of log_postings has one form: all its
// pieces split, their entries in the lists of its (address, topic0) pairs,
// or all with groups and tags (history/topics.go). So a count of an
// address with a topic0 reads the pairs' n, and the address's topics only
// in the buckets where the pair has no row: reading both in every bucket
// was a second seek a bucket, a third of such a request over all history
// (docs/benchmarks.md, issue 30, session 28).
//
// A write's part decides the form of a row it begins: split when it has
// splitEntries entries or more. A part that continues a row takes its
// form; but a busy part continuing a row with groups turns the row into a
// split one, its entries moved to its pairs' lists (takeAddress), since a
// busy address's rare event filtered from its tags costs three times its
// pair's list. A write of a bucket from its first block (a backfill's, a
// thaw's re-listing) has no rows to continue.

// splitRows returns, for each bucket that the lists continue (added from
// above its first block), the addresses whose rows there are split: those
// with pairs' rows.
func (ls *logLists) splitRows(ctx context.Context, c Conn, chain int64) (map[int64]map[chainquery.Address]bool, error) {
	split := map[int64]map[chainquery.Address]bool{}
	var key []byte
	for bucket, first := range ls.firsts {
		if first == uint64(bucket)*LogBucketBlocks {
			continue
		}
		addrs := map[chainquery.Address]bool{}
		err := c.Query(ctx, qPairKeys, []any{chain, bucket}, []any{&key}, func() error {
			addrs[chainquery.Address(key[:len(chainquery.Address{})])] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
		split[bucket] = addrs
	}
	return split, nil
}

// takeAddress deletes the row of addr in bucket and its pairs' rows, and
// returns its entries, in order, each with the id of its topic0 in Tx (0:
// none) as ls.add gives them; none when it has no row.
func (ls *logLists) takeAddress(ctx context.Context, c Conn, chain, bucket int64, addr []byte) ([]history.Posting, error) {
	var list, topics, tags []byte
	found, err := queryRow(ctx, c, qAddressRow, []any{chain, bucket, addr}, &list, &topics, &tags)
	if err != nil || !found {
		return nil, err
	}
	// the split pieces' entries have their topic0 in their pairs' lists
	type place struct {
		block uint64
		pos   uint32
	}
	pairs := map[place]uint32{}
	var key, pl []byte
	lo, hi := pairKeyRange(addr)
	err = c.Query(ctx, qPairRows, []any{chain, bucket, lo, hi}, []any{&key, &pl}, func() error {
		ps, err := history.DecodePostings(pl)
		id := ls.topicID(chainquery.Hash(key[len(addr):]))
		for _, p := range ps {
			pairs[place{p.Block, p.Pos}] = id
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []history.Posting
	err = history.EachEntry(list, topics, tags, func(p history.Posting, split, has bool, topic *chainquery.Hash) error {
		switch {
		case split:
			p.Tx = pairs[place{p.Block, p.Pos}] // none: the log has no topic0
		case has:
			p.Tx = ls.topicID(*topic)
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the log list of %x in bucket %d: %w", addr, bucket, err)
	}
	if _, err := c.Exec(ctx, qDeleteAddressRow, chain, bucket, addr); err != nil {
		return nil, err
	}
	if len(pairs) > 0 {
		if _, err := c.Exec(ctx, qDeletePairRows, chain, bucket, lo, hi); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pairKeyRange returns the lowest and highest keys of addr's pairs.
func pairKeyRange(addr []byte) (lo, hi []byte) {
	lo = append(append([]byte{}, addr...), make([]byte, len(chainquery.Hash{}))...)
	hi = append(append([]byte{}, addr...), make([]byte, len(chainquery.Hash{}))...)
	for i := len(addr); i < len(hi); i++ {
		hi[i] = 0xff
	}
	return lo, hi
}

// qPairKeys: chain, bucket → the key of each pair's row of the bucket.
// qAddressRow: chain, bucket, address → the address's list, topics and
// tags. qPairRows: chain, bucket, the lowest and highest keys of an
// address's pairs → their keys and lists. qDeleteAddressRow and
// qDeletePairRows: the same → delete the rows (two statements: SQLite
// searches an OR of the two by the bucket alone).
const (
	qPairKeys         = `SELECT key FROM log_postings WHERE chain = $1 AND bucket = $2 AND kind = 2`
	qAddressRow       = `SELECT list, topics, tags FROM log_postings WHERE chain = $1 AND bucket = $2 AND kind = 0 AND key = $3`
	qPairRows         = `SELECT key, list FROM log_postings WHERE chain = $1 AND bucket = $2 AND kind = 2 AND key BETWEEN $3 AND $4`
	qDeleteAddressRow = `DELETE FROM log_postings WHERE chain = $1 AND bucket = $2 AND kind = 0 AND key = $3`
	qDeletePairRows   = `DELETE FROM log_postings WHERE chain = $1 AND bucket = $2 AND kind = 2 AND key BETWEEN $3 AND $4`
)

// splitMixedLists (migration 0023) gives every address's row of
// log_postings one form: a row written before it could hold split pieces
// beside pieces with groups, when a bucket's writes were of different
// sizes; each such row is made split, its entries in its pairs' lists.
func splitMixedLists(ctx context.Context, tx Tx) error {
	type row struct {
		chain, bucket int64
		addr          []byte
	}
	var rows []row
	var r row
	err := tx.Query(ctx, qMixedRows, nil, []any{&r.chain, &r.bucket, &r.addr}, func() error {
		rows = append(rows, row{r.chain, r.bucket, append([]byte{}, r.addr...)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range rows {
		var ls logLists
		ps, err := ls.takeAddress(ctx, tx, r.chain, r.bucket, r.addr)
		if err != nil {
			return err
		}
		k := logKey{bucket: r.bucket, kind: logKeyAddress}
		copy(k.key[:], r.addr)
		for _, p := range ps {
			ls.postingLists.add(k, p)
		}
		built, err := ls.rows(ctx, tx, r.chain, map[int64]map[chainquery.Address]bool{r.bucket: {chainquery.Address(r.addr): true}})
		if err != nil {
			return err
		}
		for _, b := range built {
			if _, err := tx.Exec(ctx, qInsertLogPosting, r.chain, b.Kind, b.Key, b.Bucket, b.N, b.Topics, b.List, b.Tags); err != nil {
				return err
			}
		}
	}
	return nil
}

// qMixedRows: → chain, bucket and address of each address's row that has
// pieces with tags beside pairs' rows. qInsertLogPosting: a row's columns
// in LogPostings' order.
const (
	qMixedRows = `SELECT DISTINCT a.chain, a.bucket, a.key FROM log_postings p
		JOIN log_postings a ON a.chain = p.chain AND a.bucket = p.bucket AND a.kind = 0 AND a.key = substr(p.key, 1, 20)
		WHERE p.kind = 2 AND length(a.tags) > 0
		ORDER BY a.chain, a.bucket, a.key`
	qInsertLogPosting = `INSERT INTO log_postings (chain, kind, key, bucket, n, topics, list, tags) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
)
