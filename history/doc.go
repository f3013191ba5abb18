// Package history encodes a chain's deep, confirmed history compactly, for
// both stores to keep in their own tables: a block's rows as one compressed
// segment instead of a row (and two index entries) per trace, and the
// per-address posting lists that Filter Traces walks instead of the address
// indexes. What each takes a Polygon-shaped block, against the rows as they
// are stored at the tip, is in docs/benchmarks.md, "Disk per block".
//
// It is the one package that knows the byte layout; a store only keeps the
// bytes. Encoding is deterministic (the same rows give the same bytes, so
// that a segment written twice, by a reorg's replay or another process,
// compares equal), and decoding checks everything it reads: a corrupt or
// truncated segment is an error, never a panic or a wrong row.
//
// The compression is zstd (github.com/klauspost/compress, pure Go): per
// block, it shrinks real Polygon rows several times over (docs/benchmarks.md,
// "Disk per block"), and decodes several times faster than flate, which
// matters because every uncached read of history decodes a segment.
//
// # Segments
//
// A transaction segment holds the transactions of one block with their
// receipts' fields, in index order. Layout, before compression: a header
// (magic, version, count), an address dictionary (senders, recipients and
// created contracts), then the columns: hashes, index deltas, senders,
// recipients, values, gas limits, the four prices, gas used, cumulative gas
// as a difference from the transaction before, nonces, types, created
// contracts, statuses, log counts, inputs.
//
// A trace segment holds the traces of one block, in their order (by
// transaction index, then position in the transaction), with the fields of
// the frame itself: the block's and transactions' fields (timestamp, hash,
// the transaction's sender, recipient and status) are the store's to join,
// as they are for rows today. Layout, before compression: a header (magic,
// version, count), an address dictionary (each address of the block once,
// in first use order, so that a hot contract's 20 bytes are written once a
// block), an error dictionary, then the fields column by column (all
// transaction indexes, then all trace addresses, ...): values of one kind
// side by side compress better than rows, and zstd does the rest.
//
// A log segment holds the logs of one block, in log index order, with the
// log's own fields (the transaction's hash, sender and recipient are the
// store's to join). Layout, before compression: a header (magic, version,
// count), an address dictionary, a topic dictionary (an event's signature,
// topic0, repeats across a block, and so do the padded addresses of
// topics 1 and 2), then the columns: transaction index deltas, log index
// deltas, address indexes, topic counts and topic indexes, data.
//
// # Posting lists
//
// A posting list is the places of one address's traces (as sender, or as
// recipient) within a range of blocks, in chain order: what Filter Traces
// walks for from_address or to_address, and counts for `count`, instead of
// an index entry a trace (docs/benchmarks.md, "Disk per block", compares
// their sizes).
//
// A list is a sequence of runs of at most RunEntries entries. A run is the
// count of its entries, the length in bytes of what follows, then the
// entries as delta-coded varints: the block as a difference from the
// previous entry's (the first entry's absolute), then the transaction index
// and position as differences within the same block (absolute at a new
// block). A hot contract's consecutive traces take 3 bytes each. The
// lengths let a count of the entries in a range add up whole runs by their
// headers and decode only the runs at its ends (CountPostings), and a page
// skip the runs before its start: a hot contract has thousands of entries
// in a bucket of 100 Polygon blocks (docs/benchmarks.md, "History in the
// stores"), and a range that ends inside the bucket would otherwise decode
// them all. A list a store appends to by concatenating bytes is a list too:
// its runs one after the other. The empty list is one run of no entries.
//
// Posting lists are not compressed: they are mostly small numbers already,
// and a page must not decompress more than the lists it walks.
package history
