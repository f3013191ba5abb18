package storetest

import (
	"context"
	"reflect"
	"testing"
)

// OldTraceCounts are rows of trace_counts (chain, dir, address, bucket, n,
// list) in a database made before trace_counts was keyed by bucket first
// (migration 0010): counts with and without posting lists, of two chains,
// both directions and every trace. A store's test puts them there with its
// SQL, opens the store on the database and calls CheckTraceCountsUpgrade
// with what its trace_counts then holds in the new key's order.
var OldTraceCounts = [][]any{
	{int64(137), int64(1), []byte{0xaa}, int64(7), int64(3), []byte{1, 2, 3}},
	{int64(137), int64(0), []byte{0xbb}, int64(7), int64(2), nil},
	{int64(137), int64(2), []byte{}, int64(7), int64(5), nil},
	{int64(137), int64(1), []byte{0xaa}, int64(6), int64(9), []byte{4}},
	{int64(1), int64(1), []byte{0xaa}, int64(6), int64(1), nil},
}

// CheckTraceCountsUpgrade checks that the rows read back, in the order of
// the new key (chain, bucket, dir, address), are OldTraceCounts' rows.
func CheckTraceCountsUpgrade(t *testing.T, read func(ctx context.Context) ([][]any, error)) {
	t.Helper()
	got, err := read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{OldTraceCounts[4], OldTraceCounts[3], OldTraceCounts[1], OldTraceCounts[0], OldTraceCounts[2]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("trace_counts after the upgrade:\n%v\nwant\n%v", got, want)
	}
}

// Rows is what ScanTraceCounts reads: database/sql's and pgx's rows alike.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanTraceCounts reads rows of (chain, dir, address, bucket, n, list), as
// CheckTraceCountsUpgrade compares them: integers as int64, a NULL list as
// nil.
func ScanTraceCounts(rows Rows) ([][]any, error) {
	var out [][]any
	for rows.Next() {
		var chain, dir, bucket, n int64
		var address, list []byte
		if err := rows.Scan(&chain, &dir, &address, &bucket, &n, &list); err != nil {
			return nil, err
		}
		if address == nil {
			address = []byte{}
		}
		var l any // NULL as nil, as in OldTraceCounts
		if list != nil {
			l = list
		}
		out = append(out, []any{chain, dir, address, bucket, n, l})
	}
	return out, rows.Err()
}
