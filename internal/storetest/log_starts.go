package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/sqlstore"
)

// CheckLogListStarts writes hotLogBlock's blocks 2,950 to 5,100 into want,
// a store of rows, and straight into history in got, and requires Filter
// Logs by the hot address to answer alike at offsets across its lists'
// runs, with the starts of the lists read for a page (PostgreSQL,
// sqlstore.ListPrefixBytes) long enough and too short for the page's
// entries: a start falls short of them, and the bucket is read again
// whole.
func CheckLogListStarts(t *testing.T, want, got chainquery.Store) {
	ctx := context.Background()
	const first, last = 2950, 5100
	writeAlike(t, want, got, last, hotLogBlock)(1, first, false)
	same := sameAs(t, want, got)
	defer func(n int) { sqlstore.ListPrefixBytes = n }(sqlstore.ListPrefixBytes)
	for _, per := range []int{sqlstore.ListPrefixBytes, 3, 1} {
		sqlstore.ListPrefixBytes = per
		for _, r := range [][2]uint64{{first, last}, {3000, 4999}, {3500, 4500}, {4000, 4999}} {
			lo, hi := r[0], r[1]
			f := chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi,
				Addresses: []chainquery.Address{countHot}, Page: chainquery.Page{Limit: 1}}
			_, count, err := want.FindLogs(ctx, f)
			must(t, err)
			if hi-lo >= 999 && count < 10_000 {
				t.Fatalf("blocks %d to %d: %d logs of the hot address; want lists of KBs", lo, hi, count)
			}
			for _, off := range []int{0, 1, 49, 63, 64, 100, 400, 1000, 5000, count / 2, count - 7} {
				f.Page = chainquery.Page{Offset: off, Limit: 50}
				same(fmt.Sprintf("%d bytes an entry: logs of blocks %d to %d, %+v", per, lo, hi, f.Page), func(s chainquery.Store) (any, error) {
					l, c, err := s.FindLogs(ctx, f)
					return []any{l, c}, err
				})
			}
		}
	}
}

// hotLogBlock is logBlock with sixteen more logs of countHot in its last
// transaction, where it has one: its lists are ~40 KB a bucket of
// log_postings.
func hotLogBlock(seed, n uint64) *chainquery.BlockData {
	d := logBlock(seed, n)
	if len(d.Transactions) == 0 {
		return d
	}
	tx := d.Transactions[len(d.Transactions)-1].Index
	for range 16 {
		d.Logs = append(d.Logs, &chainquery.Log{BlockNumber: n, TransactionIndex: tx, LogIndex: len(d.Logs),
			Address: countHot, Topics: []chainquery.Hash{logEvents[0]}, Data: []byte{byte(n)}})
	}
	return d
}
