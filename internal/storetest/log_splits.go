package storetest

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/sqlstore"
)

// splitBlock is logBlock's block with countHot busier: below block 4,500
// and from 5,040 on it emits six to ten logs a block more, so that a write
// of 20 blocks gives it parts of 64 entries and more, whose (address,
// topic0) pairs get lists of their own (sqlstore.splitEntries); between,
// its parts are filtered by their tags. The bucket of blocks 4,000 to 4,999
// begins with busy parts, and 5,000 to 5,999 with quiet ones.
func splitBlock(seed, n uint64) *chainquery.BlockData {
	d := logBlock(seed, n)
	r := rand.New(rand.NewPCG(seed^0x20, n))
	more := 0
	if n < 4500 || n >= 5040 {
		more = 6 + r.IntN(5)
	}
	for range more {
		if len(d.Transactions) == 0 {
			break
		}
		l := &chainquery.Log{BlockNumber: n, TransactionIndex: d.Transactions[r.IntN(len(d.Transactions))].Index,
			Address: countHot, Data: []byte{byte(n)}}
		if r.IntN(10) > 0 {
			l.Topics = []chainquery.Hash{logEvents[r.IntN(len(logEvents))]}
		}
		d.Logs = append(d.Logs, l)
	}
	// in transaction order, as a node gives them
	slices.SortStableFunc(d.Logs, func(a, b *chainquery.Log) int { return cmp.Compare(a.TransactionIndex, b.TransactionIndex) })
	for i, l := range d.Logs {
		l.LogIndex = i
	}
	return d
}

// CheckLogSplits writes splitBlock's blocks 2,950 to 5,100 into want, a
// store of rows, and straight into history in got, 20 at a time, and
// requires Filter Logs by an address and a topic0 (and by the address
// alone) to answer alike over ranges of split pieces, of pieces filtered
// by their tags, and of buckets whose writes were of both sizes; then
// again after a rewrite from block 4,530. conn is got's database: the
// check makes sure that the writes split the pieces they mean to, and
// that each row of an address has one form (sqlstore/log_forms.go): a
// quiet part continuing a split row is split, and a busy part continuing
// a row with tags makes it split.
func CheckLogSplits(t *testing.T, want, got chainquery.Store, conn sqlstore.Conn) {
	const first, last = 2950, 5100
	write := writeAlike(t, want, got, last, splitBlock)
	write(1, first, false)
	checkLogForms(t, conn, []int64{2, 3, 4, 5})
	checkSplitAnswers(t, want, got, first, last)
	write(2, 4530, true)
	checkLogForms(t, conn, []int64{2, 3, 4, 5})
	checkSplitAnswers(t, want, got, first, last)
}

// checkLogForms requires the pairs' lists of conn's log_postings to be in
// buckets, countHot's row of each of them to be split, and no address's
// row to hold pieces with tags beside pairs' lists.
func checkLogForms(t *testing.T, conn sqlstore.Conn, buckets []int64) {
	t.Helper()
	ctx := context.Background()
	chain := int64(chainquery.Polygon.ID())
	var got []int64
	var bucket int64
	must(t, conn.Query(ctx, `SELECT DISTINCT bucket FROM log_postings WHERE chain = $1 AND kind = 2 ORDER BY bucket`,
		[]any{chain}, []any{&bucket}, func() error {
			got = append(got, bucket)
			return nil
		}))
	if !slices.Equal(got, buckets) {
		t.Fatalf("the pairs' lists are in buckets %v; want %v", got, buckets)
	}
	got = got[:0]
	must(t, conn.Query(ctx, `SELECT bucket FROM log_postings WHERE chain = $1 AND kind = 0 AND key = $2 AND length(tags) = 0 ORDER BY bucket`,
		[]any{chain, countHot[:]}, []any{&bucket}, func() error {
			got = append(got, bucket)
			return nil
		}))
	if !slices.Equal(got, buckets) {
		t.Errorf("the busy address's rows are split in buckets %v; want %v", got, buckets)
	}
	var addr []byte
	must(t, conn.Query(ctx, `SELECT DISTINCT a.bucket, a.key FROM log_postings p
		JOIN log_postings a ON a.chain = p.chain AND a.bucket = p.bucket AND a.kind = 0 AND a.key = substr(p.key, 1, 20)
		WHERE p.chain = $1 AND p.kind = 2 AND length(a.tags) > 0`, []any{chain}, []any{&bucket, &addr}, func() error {
		t.Errorf("bucket %d: the row of %x has pieces with tags beside its pairs' lists", bucket, addr)
		return nil
	}))
}

// checkSplitAnswers requires Filter Logs by countHot with topic0s, and by
// it alone, to answer in got as in want, over ranges of blocks first to
// last.
func checkSplitAnswers(t *testing.T, want, got chainquery.Store, first, last uint64) {
	t.Helper()
	ctx := context.Background()
	same := sameAs(t, want, got)
	filters := []chainquery.LogRangeFilter{
		{Addresses: []chainquery.Address{countHot}, Topics: [4][]chainquery.Hash{{logEvents[0]}}},
		{Addresses: []chainquery.Address{countHot}, Topics: [4][]chainquery.Hash{{logEvents[1], logEvents[2]}}},
		{Addresses: []chainquery.Address{countHot, countAddrs[2]}, Topics: [4][]chainquery.Hash{{logEvents[2]}}},
		{Addresses: []chainquery.Address{countHot}},
	}
	for _, r := range [][2]uint64{{first, last}, {3000, 3999}, {3000, 4999}, {3500, 4500}, {4000, 4999}, {4490, 4510}} {
		lo, hi := r[0], r[1]
		for _, f := range filters {
			f.Chain, f.FromBlock, f.ToBlock, f.Page = chainquery.Polygon, &lo, &hi, chainquery.Page{Limit: 1}
			_, count, err := want.FindLogs(ctx, f)
			must(t, err)
			for _, off := range []int{0, 1, 63, 64, count / 3, count / 2, count - 7, count} {
				f.Page = chainquery.Page{Offset: max(0, off), Limit: 50}
				same(fmt.Sprintf("logs of blocks %d to %d, %v, %+v", lo, hi, f, f.Page), func(s chainquery.Store) (any, error) {
					l, c, err := s.FindLogs(ctx, f)
					return []any{l, c}, err
				})
			}
		}
	}
}

// CheckLogFormsUpgrade writes what CheckLogSplits first writes, then makes
// the busy address's rows of buckets 3 to 5 hold pieces with tags beside
// split ones, as writes made them before migration 0023 (its head, its
// middle, its tail), forgets the migration and calls reopen, which opens
// got's database again: the migration must give each row one form, and the
// answers must be those of want, a store of rows.
func CheckLogFormsUpgrade(t *testing.T, want, got chainquery.Store, conn sqlstore.Conn, reopen func() chainquery.Store) {
	ctx := context.Background()
	const first, last = 2950, 5100
	writeAlike(t, want, got, last, splitBlock)(1, first, false)
	checkLogForms(t, conn, []int64{2, 3, 4, 5})
	for b, cut := range map[int64][2]float64{3: {0.3, 0.6}, 4: {0.7, 1}, 5: {0, 0.4}} {
		mixRow(t, conn, b, countHot[:], cut[0], cut[1])
	}
	var mixed int
	_, err := conn.Exec(ctx, `DELETE FROM schema_migrations WHERE name LIKE '%0023_log_forms.sql'`)
	must(t, err)
	must(t, conn.Query(ctx, `SELECT count(*) FROM log_postings WHERE chain = $1 AND kind = 0 AND key = $2 AND length(tags) > 0`,
		[]any{int64(chainquery.Polygon.ID()), countHot[:]}, []any{&mixed}, func() error { return nil }))
	if mixed != 3 {
		t.Fatalf("%d rows of the busy address have tags; want the 3 made so", mixed)
	}
	got = reopen()
	checkLogForms(t, conn, []int64{2, 3, 4, 5})
	checkSplitAnswers(t, want, got, first, last)
}

// mixRow makes the entries from the fraction lo to hi of the split row of
// addr in bucket a piece with tags, out of their pairs' lists.
func mixRow(t *testing.T, conn sqlstore.Conn, bucket int64, addr []byte, lo, hi float64) {
	t.Helper()
	ctx := context.Background()
	chain := int64(chainquery.Polygon.ID())
	var list []byte
	must(t, conn.Query(ctx, `SELECT list FROM log_postings WHERE chain = $1 AND bucket = $2 AND kind = 0 AND key = $3`,
		[]any{chain, bucket, addr}, []any{&list}, func() error { return nil }))
	entries, err := history.DecodePostings(list)
	must(t, err)
	from, to := int(lo*float64(len(entries))), int(hi*float64(len(entries)))
	tagged := map[history.Posting]chainquery.Hash{}
	for _, p := range entries[from:to] {
		tagged[p] = chainquery.Hash{}
	}
	type pair struct {
		key  []byte
		left []history.Posting
	}
	var pairs []pair
	var key, pl []byte
	must(t, conn.Query(ctx, `SELECT key, list FROM log_postings WHERE chain = $1 AND bucket = $2 AND kind = 2 AND substr(key, 1, 20) = $3`,
		[]any{chain, bucket, addr}, []any{&key, &pl}, func() error {
			ps, err := history.DecodePostings(pl)
			p := pair{key: slices.Clone(key)}
			for _, e := range ps {
				if _, ok := tagged[e]; ok {
					tagged[e] = chainquery.Hash(key[20:])
				} else {
					p.left = append(p.left, e)
				}
			}
			pairs = append(pairs, p)
			return err
		}))
	for _, p := range pairs {
		var err error
		if len(p.left) == 0 {
			_, err = conn.Exec(ctx, `DELETE FROM log_postings WHERE chain = $1 AND bucket = $2 AND kind = 2 AND key = $3`, chain, bucket, p.key)
		} else {
			l, _ := history.AppendPostings(nil, p.left)
			_, err = conn.Exec(ctx, `UPDATE log_postings SET n = $4, list = $5 WHERE chain = $1 AND bucket = $2 AND kind = 2 AND key = $3`,
				chain, bucket, p.key, int64(len(p.left)), l)
		}
		must(t, err)
	}
	var topics, tags []byte
	if from > 0 {
		topics = history.AppendSplitPiece(topics, from)
	}
	var groups []history.TopicGroup
	for _, e := range entries[from:to] {
		tp := tagged[e]
		has := tp != chainquery.Hash{} // the test's logs with a topic0 have no zero one
		g := slices.IndexFunc(groups, func(g history.TopicGroup) bool { return g.Has == has && g.Topic == tp })
		if g < 0 {
			g = len(groups)
			groups = append(groups, history.TopicGroup{Has: has, Topic: tp})
		}
		groups[g].N++
		tags = history.AppendTag(tags, g)
	}
	topics = history.AppendTopicPiece(topics, groups)
	if to < len(entries) {
		topics = history.AppendSplitPiece(topics, len(entries)-to)
	}
	_, err = conn.Exec(ctx, `UPDATE log_postings SET topics = $4, tags = $5 WHERE chain = $1 AND bucket = $2 AND kind = 0 AND key = $3`,
		chain, bucket, addr, topics, tags)
	must(t, err)
}
