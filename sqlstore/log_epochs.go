package sqlstore

import (
	"bytes"
	"context"
	"maps"
	"slices"

	"github.com/chainquery/chainquery/history"
)

// The logs' epochs (migration 0025): the epochs of the traces
// (TraceEpochBlocks), each LogEpochBuckets buckets of log_postings, hold
// in epoch_counts every address's and every topic0's number of logs over
// them, in space logEpochSpace + the kind of log_postings. A count of an
// address's or a topic0's logs over a long range then reads a row an
// epoch, as the traces' do; an address with a topic0 (whose counts are
// partly in its address's topics, log_forms.go) is still counted a bucket
// at a time.
const (
	LogEpochBuckets = TraceEpochBlocks / LogBucketBlocks
	logEpochSpace   = 10
)

// logEpochKinds are the kinds of log_postings that have epochs.
var logEpochKinds = []int{logKeyAddress, logKeyTopic0}

// hasLogEpochs reports whether counts of kind come from epochs.
func hasLogEpochs(kind int) bool { return slices.Contains(logEpochKinds, kind) }

// closeLogEpochs writes, in b, the epochs of chain's logs that lie wholly
// in history and in log_postings and are not written yet, from
// log_epochs_below up, at most limit of them. The epochs written are those
// from log_epochs_from to log_epochs_below; while none is, both start at
// the epoch of the chain's lowest block, or the first whole one above
// logs_from when the lists start higher.
func (s *Store) closeLogEpochs(ctx context.Context, b BlockBatch, chain int64, limit int) (int, error) {
	var below, logsFrom, from, done int64
	if found, err := queryRow(ctx, b, qLogEpochBounds, []any{chain}, &below, &logsFrom, &from, &done); err != nil || !found {
		return 0, err
	}
	const e = TraceEpochBlocks
	if done+e > below {
		return 0, nil
	}
	startFrom, startDone := from, done
	if from == done { // none written: start where the lists are whole
		var lowest *int64
		if _, err := queryRow(ctx, b, qFirstBlockFrom, []any{chain, int64(0)}, &lowest); err != nil || lowest == nil {
			return 0, err
		}
		start := *lowest / e * e
		if logsFrom > *lowest {
			start = (logsFrom + e - 1) / e * e
		}
		from, done = max(done, start), max(done, start)
	}
	written := 0
	for ; written < limit && done+e <= below; written++ {
		if err := writeLogEpoch(ctx, b, chain, done/e); err != nil {
			return written, err
		}
		done += e
	}
	if from != startFrom || done != startDone {
		if _, err := b.Exec(ctx, qSetLogEpochs, chain, from, done); err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeLogEpoch writes the rows of epoch_counts of chain's logs' epoch:
// the sums of log_postings' counts over its buckets, a kind at a time.
func writeLogEpoch(ctx context.Context, b BlockBatch, chain, epoch int64) error {
	first := epoch * LogEpochBuckets
	last := first + LogEpochBuckets - 1
	var key []byte
	var n int64
	for _, kind := range logEpochKinds {
		sums := map[int][]history.Count{} // by epoch part
		err := b.Query(ctx, qLogEpochSums, []any{chain, first, last, kind}, []any{&key, &n}, func() error {
			k := bytes.Clone(key)
			p := history.EpochPart(k)
			sums[p] = append(sums[p], history.Count{Key: k, N: n})
			return nil
		})
		if err != nil {
			return err
		}
		t := Table{Name: epochCounts.Name, Columns: epochCounts.Columns}
		for _, p := range slices.Sorted(maps.Keys(sums)) {
			cs := sums[p]
			slices.SortFunc(cs, func(x, y history.Count) int { return bytes.Compare(x.Key, y.Key) })
			page, err := history.AppendCounts(nil, keyLen(int32(kind)), cs)
			if err != nil {
				return err
			}
			t.Values = append(t.Values, chain, logEpochSpace+kind, p, epoch, page)
		}
		if err := b.Insert(ctx, []Table{t}); err != nil {
			return err
		}
	}
	return nil
}

// thawLogEpochs deletes chain's logs' epochs from the one that holds
// block lo up, which a thaw from lo makes rows again, and lowers the
// epochs' end to match (an empty range when it falls below their start).
func thawLogEpochs(ctx context.Context, b BlockBatch, chain, lo int64) error {
	return thawEpochs(ctx, b, qDeleteLogEpochsFrom, qLowerLogEpochs, chain, lo)
}

// logEpochQuery is the statement that reads the counts of keys of kind
// over chain's epochs first to last, and the function that returns them
// once it has run: one bucketCount an epoch that has some, in epoch order,
// its bucket the epoch's first and span its buckets.
func (pr postingRange) logEpochQuery(first, last int64) (Query, func() []bucketCount) {
	q, sums := epochSumsQuery(pr.r.chain, logEpochSpace+pr.kind, pr.keys, keyLen(int32(pr.kind)), first, last)
	return q, func() []bucketCount {
		var out []bucketCount
		eachEpoch(sums, first, last, func(e, n int64) error {
			out = append(out, bucketCount{bucket: e * LogEpochBuckets, n: int(n), span: LogEpochBuckets})
			return nil
		})
		return out
	}
}

// The statements of the logs' epochs. qLogEpochBounds: chain → below,
// logs_from, log_epochs_from, log_epochs_below. qSetLogEpochs: chain,
// log_epochs_from, log_epochs_below. qLowerLogEpochs: chain, a height →
// log_epochs_below no higher, and log_epochs_from no higher than it.
// qDeleteLogEpochsFrom: chain, epoch → deletes the logs' epochs from there
// up. qLogEpochSums: chain, first, last bucket, kind → each key of kind
// and its number of logs over the buckets.
const (
	qLogEpochBounds = `SELECT below, logs_from, log_epochs_from, log_epochs_below FROM history WHERE chain = $1`
	qSetLogEpochs   = `UPDATE history SET log_epochs_from = $2, log_epochs_below = $3 WHERE chain = $1`
	qLowerLogEpochs = `UPDATE history SET log_epochs_below = CASE WHEN log_epochs_below > $2 THEN $2 ELSE log_epochs_below END,
		log_epochs_from = CASE WHEN log_epochs_from > $2 THEN $2 ELSE log_epochs_from END WHERE chain = $1`
	qDeleteLogEpochsFrom = `DELETE FROM epoch_counts WHERE chain = $1 AND space IN (10, 11) AND epoch >= $2`
	qLogEpochSums        = `SELECT key, sum(n) FROM log_postings WHERE chain = $1 AND bucket BETWEEN $2 AND $3 AND kind = $4 GROUP BY key`
)
