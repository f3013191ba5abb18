package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
	"github.com/chainquery/chainquery/sqlstore"
)

// logRow is a key's list in a bucket of log_postings: its pieces joined
// in piece order, and how many there were.
type logRow struct {
	n                  int64
	topics, list, tags []byte
	pieces             int
}

// logRows reads chain's log_postings over conn, by bucket, kind and key.
func logRows(t *testing.T, conn sqlstore.Conn) map[string]*logRow {
	t.Helper()
	rows := map[string]*logRow{}
	var bucket, n int64
	var kind int
	var key, topics, list, tags []byte
	err := conn.Query(context.Background(), `SELECT bucket, kind, key, n, topics, list, tags FROM log_postings
		ORDER BY bucket, kind, key, piece`, nil, []any{&bucket, &kind, &key, &n, &topics, &list, &tags}, func() error {
		k := fmt.Sprintf("bucket %d kind %d key %x", bucket, kind, key)
		r := rows[k]
		if r == nil {
			r = &logRow{}
			rows[k] = r
		}
		r.n += n
		r.topics = append(r.topics, topics...)
		r.list = append(r.list, list...)
		r.tags = append(r.tags, tags...)
		r.pieces++
		return nil
	})
	must(t, err)
	return rows
}

// logEntries returns the places of the logs of bucket whose address is
// addr and whose topic0 is topic that rows list: those of the address's
// list that its topics and tags keep, and those of the pair's own list.
func logEntries(t *testing.T, rows map[string]*logRow, bucket int, addr chainquery.Address, topic *chainquery.Hash) []history.Posting {
	t.Helper()
	var out []history.Posting
	if r := rows[fmt.Sprintf("bucket %d kind 0 key %x", bucket, addr[:])]; r != nil {
		kept, _, err := history.FilterTopics(r.list, r.topics, r.tags, func(has bool, t *chainquery.Hash) bool {
			return has && *t == *topic
		})
		must(t, err)
		if kept != nil { // nil: none kept
			ps, err := history.DecodePostings(kept)
			must(t, err)
			out = append(out, ps...)
		}
	}
	if r := rows[fmt.Sprintf("bucket %d kind 2 key %x%x", bucket, addr[:], topic[:])]; r != nil {
		ps, err := history.DecodePostings(r.list)
		must(t, err)
		out = append(out, ps...)
	}
	slices.SortFunc(out, func(a, b history.Posting) int {
		return cmp.Or(cmp.Compare(a.Block, b.Block), cmp.Compare(a.Pos, b.Pos))
	})
	return out
}

// CheckLogPieces writes logBlock's blocks 2,950 to 5,119 straight into
// history, 20 at a time, into three stores of open (each with a
// connection to its database): by WriteBlocks, each write a piece of its
// buckets; by AppendBlocks, a piece per commit; and by WriteBlocks again,
// whose lists are then deleted and listed anew by IndexLogHistory, a
// bucket at a time, one piece each. A busy key must have pieces, and its
// pieces joined in order must name the same logs as the lists listed
// anew, for every key, and for every address and topic0 (the three
// columns of each piece kept in step); and Filter Logs must answer alike
// from the three stores, at offsets deep inside a bucket.
func CheckLogPieces(t *testing.T, open func(testing.TB) (chainquery.Store, sqlstore.Conn)) {
	ctx := context.Background()
	const first, last = 2950, 5119
	var stores []chainquery.Store
	var conns []sqlstore.Conn
	for i := range 3 {
		s, conn := open(t)
		nh, ok := s.(chainquery.NodeHeadWriter)
		if !ok {
			t.Fatalf("%T takes no node head", s)
		}
		nh.SetNodeHead(chainquery.Polygon, last+sqlstore.DefaultRowBlocks+10)
		app, appends := s.(chainquery.BlockAppender)
		if i == 1 && !appends {
			t.Fatalf("%T does not append", s)
		}
		for n := uint64(first); n <= last; n += 20 {
			var bs []*chainquery.BlockData
			for k := n; k < n+20 && k <= last; k++ {
				bs = append(bs, logBlock(1, k))
			}
			if i == 1 {
				must(t, app.AppendBlocks(ctx, chainquery.Polygon, bs))
			} else {
				must(t, s.WriteBlocks(ctx, chainquery.Polygon, bs))
			}
		}
		if i == 1 {
			must(t, app.FlushBlocks(ctx, chainquery.Polygon))
		}
		stores, conns = append(stores, s), append(conns, conn)
	}
	for _, q := range []string{`DELETE FROM log_postings`, `UPDATE history SET logs_from = below`} {
		_, err := conns[2].Exec(ctx, q)
		must(t, err)
	}
	ix, ok := stores[2].(LogIndexer)
	if !ok {
		t.Fatalf("%T does not index its logs", stores[2])
	}
	for {
		left, err := ix.IndexLogHistory(ctx, chainquery.Polygon, 1)
		must(t, err)
		if left == 0 {
			break
		}
	}
	want := logRows(t, conns[2])
	if len(want) < 40 {
		t.Fatalf("%d lists; want more", len(want))
	}
	var topics []*chainquery.Hash // a filter's topic0 (a log without one is found by its address alone)
	for i := range logEvents {
		topics = append(topics, &logEvents[i])
	}
	for i, name := range []string{"WriteBlocks", "AppendBlocks"} {
		got := logRows(t, conns[i])
		pieced := 0
		for k, g := range got {
			if g.pieces > 1 {
				pieced++
			}
			if w := want[k]; w != nil && !strings.Contains(k, "kind 0") {
				gp, err := history.DecodePostings(g.list)
				must(t, err)
				wp, err := history.DecodePostings(w.list)
				must(t, err)
				if g.n != int64(len(gp)) || !slices.Equal(gp, wp) {
					t.Errorf("%s: %s: n %d, %d entries; listed anew %d", name, k, g.n, len(gp), len(wp))
				}
			}
		}
		if pieced == 0 {
			t.Errorf("%s: no list in pieces", name)
		}
		for b := first / sqlstore.LogBucketBlocks; b <= last/sqlstore.LogBucketBlocks; b++ {
			for _, a := range countAddrs {
				for _, tp := range topics {
					if g, w := logEntries(t, got, b, a, tp), logEntries(t, want, b, a, tp); !slices.Equal(g, w) {
						t.Errorf("%s: bucket %d, logs of %s with topic0 %v: %d, listed anew %d", name, b, a, tp, len(g), len(w))
					}
				}
			}
		}
	}
	for i, name := range []string{"WriteBlocks", "AppendBlocks"} {
		t.Run(name, func(t *testing.T) { sameLogs(t, stores[2], stores[i]) })
	}
}

// sameLogs requires Filter Logs to answer alike from want and got over
// blocks 2,950 to 5,119 and inside a bucket, at offsets up to deep inside
// one.
func sameLogs(t *testing.T, want, got chainquery.Store) {
	ctx := context.Background()
	same := sameAs(t, want, got)
	for _, f := range []chainquery.LogRangeFilter{
		{Addresses: []chainquery.Address{countHot}},
		{Topics: [4][]chainquery.Hash{{logEvents[1]}}},
		{Addresses: []chainquery.Address{countHot}, Topics: [4][]chainquery.Hash{{logEvents[0], logEvents[2]}}},
	} {
		for _, r := range [][2]uint64{{2950, 5119}, {3000, 3999}, {3100, 3899}} {
			lo, hi := r[0], r[1]
			f.Chain, f.FromBlock, f.ToBlock = chainquery.Polygon, &lo, &hi
			for _, off := range []int{0, 100, 250, 1000} {
				f.Page = chainquery.Page{Offset: off, Limit: 50}
				same(fmt.Sprintf("logs of blocks %d to %d, %v, %+v", lo, hi, f, f.Page), func(s chainquery.Store) (any, error) {
					l, c, err := s.FindLogs(ctx, f)
					return []any{l, c}, err
				})
			}
		}
	}
}
