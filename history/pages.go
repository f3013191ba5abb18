package history

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// PageParts is how many pages the posting lists of one bucket and
// direction are cut into: an address's lists are in page PagePart(address).
// A row per address and bucket cost its key and its row's overhead for a
// list of a few bytes (two in three of them held one entry), ~98 bytes of
// heap and ~61 of index a row on PostgreSQL at Polygon's shape; a page
// holds ~18 addresses of a Polygon-shaped bucket in ~740 bytes, small enough
// to stay in its row on both stores. It cannot change once a database
// holds pages.
const PageParts = 1024

// PagePart returns the page of address a (FNV-1a of its bytes): the last
// bytes of an address are not random enough on their own (vanity
// addresses), the first even less.
func PagePart(a []byte) int { return int(fnv1a(a) % PageParts) }

// EpochParts is how many parts the counts of one epoch and direction are
// cut into (sqlstore/trace_epochs.go): an epoch gathers the addresses of a
// hundred buckets, ~300,000 a direction at Polygon's shape, and a count
// over a long range reads an address's part of every epoch in it. Cut as
// the pages are, a part was 6-11 KB, 28 µs a row to read on SQLite; cut
// 16 times finer, ~500 bytes. A multiple of PageParts, so that the
// addresses of an epoch part all lie in one page part:
// EpochPart(a) % PageParts == PagePart(a). It cannot change once a
// database holds epochs.
const EpochParts = 16 * PageParts

// EpochPart returns the part of address a in an epoch's counts.
func EpochPart(a []byte) int { return int(fnv1a(a) % EpochParts) }

// fnv1a is FNV-1a of a's bytes.
func fnv1a(a []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range a {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// PageEntry is one address's posting list in a page: N entries.
type PageEntry struct {
	Addr []byte // AddrBytes long
	N    int64
	List []byte
}

// AddrBytes is the length of the addresses of a page.
const AddrBytes = 20

// A page is two columns, so that a count reads the first alone:
//
//	keys:  uvarint k, then the k addresses (AddrBytes each, ascending),
//	       then per address uvarint n and uvarint length of its list
//	lists: the k lists, one after the other, in the addresses' order

// AppendPage appends the two columns of a page of entries, in ascending
// address order, to keys and lists.
func AppendPage(keys, lists []byte, entries []PageEntry) ([]byte, []byte, error) {
	keys = binary.AppendUvarint(keys, uint64(len(entries)))
	for i, e := range entries {
		if len(e.Addr) != AddrBytes {
			return nil, nil, corrupt("page address of %d bytes", len(e.Addr))
		}
		if i > 0 && bytes.Compare(entries[i-1].Addr, e.Addr) >= 0 {
			return nil, nil, corrupt("page address %x not after %x", e.Addr, entries[i-1].Addr)
		}
		keys = append(keys, e.Addr...)
	}
	for _, e := range entries {
		keys = binary.AppendUvarint(keys, uint64(e.N))
		keys = binary.AppendUvarint(keys, uint64(len(e.List)))
		lists = append(lists, e.List...)
	}
	return keys, lists, nil
}

// pageHeader returns the count of a page's addresses and where its
// addresses and numbers start in keys.
func pageHeader(keys []byte) (k int, addrs []byte, nums []byte, err error) {
	v, w := binary.Uvarint(keys)
	if w <= 0 || v > uint64(len(keys)-w)/AddrBytes {
		return 0, nil, nil, corrupt("page header")
	}
	k = int(v)
	end := w + k*AddrBytes
	return k, keys[w:end], keys[end:], nil
}

// PageFind returns the entry of address a in the page whose columns are
// keys and lists (nil lists: N alone), and whether it holds one.
func PageFind(keys, lists []byte, a []byte) (PageEntry, bool, error) {
	k, addrs, nums, err := pageHeader(keys)
	if err != nil {
		return PageEntry{}, false, err
	}
	// A binary search over the fixed-width addresses.
	lo, hi := 0, k
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(addrs[m*AddrBytes:(m+1)*AddrBytes], a) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	found := lo < k && bytes.Equal(addrs[lo*AddrBytes:(lo+1)*AddrBytes], a)
	if !found {
		return PageEntry{}, false, nil
	}
	off := 0
	for j := 0; ; j++ {
		n, w := binary.Uvarint(nums)
		if w <= 0 {
			return PageEntry{}, false, corrupt("page numbers")
		}
		l, w2 := binary.Uvarint(nums[w:])
		if w2 <= 0 {
			return PageEntry{}, false, corrupt("page numbers")
		}
		nums = nums[w+w2:]
		if lists != nil && l > uint64(len(lists)-off) {
			return PageEntry{}, false, corrupt("page list past its column")
		}
		if j == lo {
			e := PageEntry{Addr: addrs[lo*AddrBytes : (lo+1)*AddrBytes], N: int64(n)}
			if lists != nil {
				e.List = lists[off : off+int(l)]
			}
			return e, true, nil
		}
		if lists != nil {
			off += int(l)
		}
	}
}

// DecodePage returns the entries of a page, their lists sharing lists.
func DecodePage(keys, lists []byte) ([]PageEntry, error) {
	k, addrs, nums, err := pageHeader(keys)
	if err != nil {
		return nil, err
	}
	out := make([]PageEntry, k)
	off := 0
	for j := range out {
		n, w := binary.Uvarint(nums)
		if w <= 0 {
			return nil, corrupt("page numbers")
		}
		l, w2 := binary.Uvarint(nums[w:])
		if w2 <= 0 || l > uint64(len(lists)-off) {
			return nil, corrupt("page numbers")
		}
		if j > 0 && bytes.Compare(addrs[(j-1)*AddrBytes:j*AddrBytes], addrs[j*AddrBytes:(j+1)*AddrBytes]) >= 0 {
			return nil, corrupt("page address %d not after the one before", j)
		}
		nums = nums[w+w2:]
		out[j] = PageEntry{Addr: addrs[j*AddrBytes : (j+1)*AddrBytes], N: int64(n), List: lists[off : off+int(l)]}
		off += int(l)
	}
	if len(nums) != 0 || off != len(lists) {
		return nil, corrupt("page of %d addresses with bytes left over", k)
	}
	return out, nil
}

// MergePage returns the entries of a page (old) with those of later blocks
// (add) joined: an address in both keeps its old list with the new one
// appended, a list of pieces that readers take as consecutive runs. Both
// are in ascending address order, and so is the result.
func MergePage(old, add []PageEntry) []PageEntry {
	out := make([]PageEntry, 0, len(old)+len(add))
	i, j := 0, 0
	for i < len(old) || j < len(add) {
		switch {
		case j == len(add) || i < len(old) && bytes.Compare(old[i].Addr, add[j].Addr) < 0:
			out = append(out, old[i])
			i++
		case i == len(old) || bytes.Compare(add[j].Addr, old[i].Addr) < 0:
			out = append(out, add[j])
			j++
		default:
			l := append(slices.Clip(old[i].List), add[j].List...)
			out = append(out, PageEntry{Addr: old[i].Addr, N: old[i].N + add[j].N, List: l})
			i++
			j++
		}
	}
	return out
}

// PageCounts returns the addresses of a page and their numbers of
// entries, from its keys column alone, the addresses sharing keys.
func PageCounts(keys []byte) ([]Count, error) {
	k, addrs, nums, err := pageHeader(keys)
	if err != nil {
		return nil, err
	}
	out := make([]Count, k)
	for j := range out {
		n, w := binary.Uvarint(nums)
		if w <= 0 {
			return nil, corrupt("page numbers")
		}
		_, w2 := binary.Uvarint(nums[w:])
		if w2 <= 0 {
			return nil, corrupt("page numbers")
		}
		nums = nums[w+w2:]
		out[j] = Count{Key: addrs[j*AddrBytes : (j+1)*AddrBytes], N: int64(n)}
	}
	if len(nums) != 0 {
		return nil, corrupt("page of %d addresses with bytes left over", k)
	}
	return out, nil
}
