package http

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
)

func testAnswer(key string, block uint64, size int) *cachedAnswer {
	return &cachedAnswer{key: key, chain: chainquery.Polygon, block: block, body: []byte(strings.Repeat("x", size))}
}

// TestAnswerCache_Bounded checks the byte bound and the least recently used
// order of eviction.
func TestAnswerCache_Bounded(t *testing.T) {
	c := newAnswerCache(10 * (1000 + entryOverhead + 2))
	for i := range 10 {
		c.put(testAnswer(fmt.Sprintf("k%d", i), 1, 1000))
	}
	if c.bytes() > c.max || len(c.byKey) != 10 {
		t.Fatalf("%d bytes in %d entries, bound %d", c.bytes(), len(c.byKey), c.max)
	}
	c.get("k0") // k1 is now the least recently used
	c.put(testAnswer("k10", 1, 1000))
	if c.get("k1") != nil || c.get("k0") == nil || c.get("k10") == nil {
		t.Errorf("evicted the wrong entry: k0 %v, k1 %v, k10 %v", c.get("k0") != nil, c.get("k1") != nil, c.get("k10") != nil)
	}
	if c.bytes() > c.max {
		t.Errorf("%d bytes, bound %d", c.bytes(), c.max)
	}
	c.put(testAnswer("huge", 1, int(c.maxEntry)))
	if c.get("huge") != nil {
		t.Errorf("kept an answer over maxEntry (%d bytes)", c.maxEntry)
	}
	c.put(testAnswer("k0", 1, 10)) // replaced, not added
	if a := c.get("k0"); a == nil || len(a.body) != 10 {
		t.Errorf("k0 not replaced")
	}
	var sum int64
	for _, e := range c.byKey {
		sum += e.Value.(*cachedAnswer).cost()
	}
	if sum != c.bytes() {
		t.Errorf("entries cost %d bytes, the cache counts %d", sum, c.bytes())
	}
	if newAnswerCache(0) != nil {
		t.Error("a cache of 0 bytes exists")
	}
}

// TestAnswerCache_ForgetFrom checks that a rewrite drops the entries of its
// chain at or above its height, and refuses answers read under an older head
// reading.
func TestAnswerCache_ForgetFrom(t *testing.T) {
	c := newAnswerCache(1 << 20)
	for _, b := range []uint64{10, 20, 30} {
		a := testAnswer(fmt.Sprint(b), b, 10)
		a.seq = 5
		c.put(a)
	}
	other := testAnswer("eth", 30, 10)
	other.chain, other.seq = chainquery.Ethereum, 5
	c.put(other)
	c.forgetFrom(chainquery.Polygon, 20, 7)
	if c.get("10") == nil || c.get("20") != nil || c.get("30") != nil || c.get("eth") == nil {
		t.Errorf("after a rewrite from 20: 10 %v, 20 %v, 30 %v, ethereum's %v; want 10 and ethereum's kept",
			c.get("10") != nil, c.get("20") != nil, c.get("30") != nil, c.get("eth") != nil)
	}
	late := testAnswer("late", 5, 10)
	late.seq = 6 // read under a reading before the one that saw the rewrite
	c.put(late)
	if c.get("late") != nil {
		t.Error("kept an answer read before the rewrite was seen")
	}
	fresh := testAnswer("fresh", 25, 10)
	fresh.seq = 7
	c.put(fresh)
	if c.get("fresh") == nil {
		t.Error("refused an answer read under the reading that saw the rewrite")
	}
}
