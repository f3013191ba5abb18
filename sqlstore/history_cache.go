package sqlstore

import (
	"container/list"
	"sync"

	"github.com/chainquery/chainquery"
)

// decodedCache keeps decoded history segments in memory, most recently
// used first, up to a size: what SQLite's and PostgreSQL's page caches are
// to rows. A page of Filter Traces, a block's receipts or a transaction's
// logs needs a few rows of a block, but history stores the block as one
// compressed segment, whose decompressing and decoding was most of such a
// read (docs/benchmarks.md, "History in the stores"). Requests about nearby heights, which
// are most requests, then decode each block once.
//
// An entry is keyed by the block's chain, number and version: a block
// written again at a height gets a higher version (BlockWriter), so an
// entry can never be stale, whichever process rewrote the block. Values
// are shared by every reader: nobody may change them.
type decodedCache struct {
	mu    sync.Mutex
	size  int64
	order *list.List // of *decodedEntry, most recent first
	index map[decodedKey]*list.Element
}

type decodedKey struct {
	chain   int64
	number  uint64
	version int
	kind    int // segmentTransactions, segmentLogs, or segmentTraces for a historyBlock
}

type decodedEntry struct {
	key   decodedKey
	value any
	size  int64
}

// decodedCacheBytes is the most the cache holds, by the sizes put gives:
// about a hundred Polygon-shaped blocks' traces with their transactions.
const decodedCacheBytes = 64 << 20

func (c *decodedCache) get(k decodedKey) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*decodedEntry).value, true
}

func (c *decodedCache) put(k decodedKey, v any, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == nil {
		c.index, c.order = map[decodedKey]*list.Element{}, list.New()
	}
	if e, ok := c.index[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.index[k] = c.order.PushFront(&decodedEntry{k, v, size})
	c.size += size
	for c.size > decodedCacheBytes && c.order.Len() > 1 {
		last := c.order.Back()
		e := last.Value.(*decodedEntry)
		c.order.Remove(last)
		delete(c.index, e.key)
		c.size -= e.size
	}
}

// Sizes of decoded rows, for the cache's accounting: a row's fixed part
// (the struct, its pointers, amounts) and its variable bytes.
func txsSize(txs []*chainquery.Transaction) int64 {
	n := int64(0)
	for _, t := range txs {
		n += 320 + int64(len(t.Input))
	}
	return n
}

func logsSize(logs []*chainquery.Log) int64 {
	n := int64(0)
	for _, l := range logs {
		n += 200 + int64(len(l.Data)) + 32*int64(len(l.Topics))
	}
	return n
}

func tracesSize(traces []*chainquery.Trace) int64 {
	n := int64(0)
	for _, t := range traces {
		n += 300 + int64(len(t.Input)+len(t.Output)+8*len(t.TraceAddress))
	}
	return n
}
