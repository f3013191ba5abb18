package history

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCountPages round-trips count pages of each key length, finds every
// key and misses keys between, before and after them, and refuses every
// truncation of a page.
func TestCountPages(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, keyLen := range []int{20, 32, 52} {
		for _, k := range []int{0, 1, 2, 17, 300} {
			seen := map[string]bool{}
			var counts []Count
			for len(counts) < k {
				key := make([]byte, keyLen)
				for i := range key {
					key[i] = byte(r.Uint32())
				}
				key[0] = 1 + byte(r.IntN(253)) // room for a key below and above all
				if !seen[string(key)] {
					seen[string(key)] = true
					counts = append(counts, Count{Key: key, N: int64(r.IntN(5)) << (r.IntN(40))})
				}
			}
			slices.SortFunc(counts, func(a, b Count) int { return bytes.Compare(a.Key, b.Key) })
			page, err := AppendCounts([]byte{9}, keyLen, counts)
			if err != nil {
				t.Fatal(err)
			}
			page = page[1:]
			got, err := DecodeCounts(page, keyLen)
			if err != nil || len(got) != k {
				t.Fatalf("len %d, %d keys: decoded %d, %v", keyLen, k, len(got), err)
			}
			for i, c := range counts {
				if !bytes.Equal(got[i].Key, c.Key) || got[i].N != c.N {
					t.Fatalf("len %d, %d keys: count %d is %x %d, want %x %d", keyLen, k, i, got[i].Key, got[i].N, c.Key, c.N)
				}
				n, ok, err := FindCount(page, keyLen, c.Key)
				if err != nil || !ok || n != c.N {
					t.Fatalf("len %d, %d keys: find %d: %d %v %v, want %d", keyLen, k, i, n, ok, err, c.N)
				}
				next := bytes.Clone(c.Key)
				next[keyLen-1]++
				if !seen[string(next)] {
					if _, ok, err := FindCount(page, keyLen, next); ok || err != nil {
						t.Fatalf("len %d: found %x, not in the page (%v)", keyLen, next, err)
					}
				}
			}
			for _, b := range []byte{0, 255} {
				if _, ok, err := FindCount(page, keyLen, bytes.Repeat([]byte{b}, keyLen)); ok || err != nil {
					t.Fatalf("len %d: found the key of %x bytes (%v)", keyLen, b, err)
				}
			}
			for cut := range len(page) {
				_, err := DecodeCounts(page[:cut], keyLen)
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("len %d, %d keys: a page cut at %d of %d: %v", keyLen, k, cut, len(page), err)
				}
			}
		}
	}
	if _, err := AppendCounts(nil, 20, []Count{{Key: make([]byte, 20)}, {Key: make([]byte, 20)}}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a key twice: %v", err)
	}
	if _, err := AppendCounts(nil, 20, []Count{{Key: make([]byte, 19)}}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a short key: %v", err)
	}
}
