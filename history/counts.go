package history

import (
	"bytes"
	"encoding/binary"
)

// A count page holds, for the keys of one page, their totals over an
// epoch of many buckets: what a count over a long range adds up instead
// of one page per bucket (sqlstore/epochs.go). Keys are of one length in
// a page (an address, a topic0, an address and a topic0):
//
//	uvarint k, then the k keys (ascending), then per key uvarint n

// Count is one key's total in a count page.
type Count struct {
	Key []byte
	N   int64
}

// AppendCounts appends the count page of counts, in ascending key order,
// each keyLen bytes long, to dst.
func AppendCounts(dst []byte, keyLen int, counts []Count) ([]byte, error) {
	dst = binary.AppendUvarint(dst, uint64(len(counts)))
	for i, c := range counts {
		if len(c.Key) != keyLen {
			return nil, corrupt("count key of %d bytes, not %d", len(c.Key), keyLen)
		}
		if i > 0 && bytes.Compare(counts[i-1].Key, c.Key) >= 0 {
			return nil, corrupt("count key %x not after %x", c.Key, counts[i-1].Key)
		}
		dst = append(dst, c.Key...)
	}
	for _, c := range counts {
		dst = binary.AppendUvarint(dst, uint64(c.N))
	}
	return dst, nil
}

// countsHeader returns the number of a count page's keys and where its
// keys and numbers start.
func countsHeader(page []byte, keyLen int) (k int, keys, nums []byte, err error) {
	v, w := binary.Uvarint(page)
	if w <= 0 || keyLen <= 0 || v > uint64(len(page)-w)/uint64(keyLen) {
		return 0, nil, nil, corrupt("count page header")
	}
	k = int(v)
	end := w + k*keyLen
	return k, page[w:end], page[end:], nil
}

// FindCount returns the total of key in a count page of keyLen-byte keys,
// and whether the page holds it.
func FindCount(page []byte, keyLen int, key []byte) (int64, bool, error) {
	k, keys, nums, err := countsHeader(page, keyLen)
	if err != nil {
		return 0, false, err
	}
	lo, hi := 0, k
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(keys[m*keyLen:(m+1)*keyLen], key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == k || !bytes.Equal(keys[lo*keyLen:(lo+1)*keyLen], key) {
		return 0, false, nil
	}
	for j := 0; ; j++ {
		n, w := binary.Uvarint(nums)
		if w <= 0 {
			return 0, false, corrupt("count page numbers")
		}
		if j == lo {
			return int64(n), true, nil
		}
		nums = nums[w:]
	}
}

// DecodeCounts returns the counts of a count page, their keys sharing it.
func DecodeCounts(page []byte, keyLen int) ([]Count, error) {
	k, keys, nums, err := countsHeader(page, keyLen)
	if err != nil {
		return nil, err
	}
	out := make([]Count, k)
	for j := range out {
		n, w := binary.Uvarint(nums)
		if w <= 0 {
			return nil, corrupt("count page numbers")
		}
		key := keys[j*keyLen : (j+1)*keyLen]
		if j > 0 && bytes.Compare(out[j-1].Key, key) >= 0 {
			return nil, corrupt("count key %d not after the one before", j)
		}
		nums = nums[w:]
		out[j] = Count{Key: key, N: int64(n)}
	}
	if len(nums) != 0 {
		return nil, corrupt("count page of %d keys with bytes left over", k)
	}
	return out, nil
}
