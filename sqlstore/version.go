package sqlstore

import "github.com/chainquery/chainquery"

// The version rule of BlockWriter, applied by SQLStore for every SQL store:
// a block written at a height where a block was ever stored before
// (including one a rewind removed, whose version is kept as orphaned) gets
// that block's version + 1; otherwise 0.

// planVersions returns the blocks of a batch to write, each with its
// Version set, given prior: the highest version stored or orphaned at each
// height that has one. A height given twice in one batch ends as if written
// in two batches in a row: only its last block is written, with the version
// after the earlier one's.
func planVersions(blocks []*chainquery.BlockData, prior map[uint64]int) []*chainquery.BlockData {
	last := make(map[uint64]int, len(blocks))
	for i, d := range blocks {
		last[d.Block.Number] = i
	}
	earlier := map[uint64]int{}
	out := make([]*chainquery.BlockData, 0, len(last))
	for i, d := range blocks {
		n := d.Block.Number
		if last[n] != i {
			earlier[n]++
			continue
		}
		v := earlier[n]
		if p, ok := prior[n]; ok {
			v += p + 1
		}
		d.Block.Version = v
		out = append(out, d)
	}
	return out
}

// blockHeights returns the heights of blocks, each once, in the order they
// first appear.
func blockHeights(blocks []*chainquery.BlockData) []uint64 {
	seen := make(map[uint64]bool, len(blocks))
	var out []uint64
	for _, d := range blocks {
		if n := d.Block.Number; !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
