package sqlstore

import (
	"bytes"
	"maps"
	"slices"

	"github.com/chainquery/chainquery"
)

// maxRowCountBuckets bounds the buckets a count of rows adds up: each
// bucket is a seek per key. The rows span one or two.
const maxRowCountBuckets = 64

// logCounter gathers the counts of the logs of the rows a write adds, for
// log_counts (migration 0014): Filter Logs' counts of the rows.
//
// History's logs are counted by log_postings' n, bucket by bucket, so a
// count over history costs a few rows whatever the matches. The rows were
// counted entry by entry in logs_address or logs_topic0, which grows with
// the matches, and made a range over the whole history slower as its
// matches grew (docs/benchmarks.md, "The endpoints beyond the six").
// log_counts keeps, per bucket of LogBucketBlocks and key of log_postings'
// kinds, the number of the rows' logs: writes of rows add to it, deletes of
// rows take off what they delete (deleteBlocks), so the rows of a range
// that holds them all are counted by a sum of a few rows too.
type logCounter map[logKey]int64

// add counts the logs of block d.
func (c logCounter) add(d *chainquery.BlockData) {
	bucket := int64(d.Block.Number / LogBucketBlocks)
	for _, l := range d.Logs {
		logKeys(l, bucket, func(k logKey) { c[k]++ })
	}
}

// rows returns the counts in log_counts' key order (bucket, kind, key), as
// the rows BlockBatch.AddLogCounts adds: Dir is the kind, Address the key.
func (c logCounter) rows() []BucketRow {
	keys := slices.SortedFunc(maps.Keys(c), func(a, b logKey) int { return compareLogKeys(&a, &b) })
	rows := make([]BucketRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, BucketRow{Kind: int(k.kind), Key: bytes.Clone(k.key[:keyLen(k.kind)]), Bucket: k.bucket, N: c[k]})
	}
	return rows
}

// rowLogCount returns the statements that count the rows' logs from lo
// to hi that f lets through, from log_counts, and the count once they
// have run, with ok false when log_counts cannot say: when f has
// conditions on topic1 to topic3, names neither an address nor a topic0,
// or when the range does not hold every row (rows are the blocks from
// below up: it starts above the lowest, or ends below the highest). Those
// are counted from the rows' index instead.
//
// The statements (the rows' lowest block, the head, the count, asked
// before it is known to be wanted: a seek per key and bucket) depend on
// no other's answer: Filter Logs sends them in the batch of history's
// counts, one round trip for both on PostgreSQL.
func (r reader) rowLogCount(lo, hi, below int64, f *chainquery.LogRangeFilter) ([]Query, func() (n int, ok bool)) {
	if len(f.Topics[1])+len(f.Topics[2])+len(f.Topics[3]) > 0 {
		return nil, func() (int, bool) { return 0, false }
	}
	kind, keys, keyed := logPostingKeys(f)
	if !keyed {
		return nil, func() (int, bool) { return 0, false }
	}
	var first, head *int64
	var n int
	qs := []Query{oneRow(qFirstBlockFrom, []any{r.chain, below}, &first), oneRow(qLatestBlock, []any{r.chain}, &head)}
	wide := hi/LogBucketBlocks-lo/LogBucketBlocks >= maxRowCountBuckets // a store of rows only, from before history
	if !wide {
		var buckets []int64
		for k := lo / LogBucketBlocks; k <= hi/LogBucketBlocks; k++ {
			buckets = append(buckets, k)
		}
		q, args := r.Dialect.LogRowCount(r.chain, buckets, kind, keys)
		qs = append(qs, oneRow(q, args, &n))
	}
	return qs, func() (int, bool) {
		switch {
		case first == nil: // no rows: none to count
			return 0, true
		case lo > *first || head == nil || hi < *head || wide:
			return 0, false
		}
		return n, true
	}
}

// logKeys calls f with each key of log_counts that counts l in bucket:
// its address and, when it has topics, its topic0 and both (the rows'
// count of an address and a topic0 is of its own key; history's comes
// from the address's list, history/topics.go).
func logKeys(l *chainquery.Log, bucket int64, f func(logKey)) {
	k := logKey{bucket: bucket, kind: logKeyAddress}
	copy(k.key[:], l.Address[:])
	f(k)
	if len(l.Topics) > 0 {
		k.kind = logKeyAddressTopic0
		copy(k.key[len(l.Address):], l.Topics[0][:])
		f(k)
		k.kind = logKeyTopic0
		k.key = [52]byte{}
		copy(k.key[:], l.Topics[0][:])
		f(k)
	}
}
