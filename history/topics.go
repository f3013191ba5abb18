package history

import (
	"encoding/binary"
	"math"

	"github.com/chainquery/chainquery"
)

// An address's list of logs carries, beside it, the topic0 of each entry,
// so that "this token's Transfers" is read from the token's list instead
// of a list of its own: three in four lists of a bucket were such pairs,
// and writing them was an eighth of the ingester's CPU and a sixth of the
// disk (docs/benchmarks.md, issue 30). Two byte strings go with the list:
//
//   - topics: pieces, one for each part of the list written at once (a
//     write appends its part to the row's list, and its piece to topics).
//     A piece starts with a varint h. When h is even, h/2 groups follow,
//     each: its entries' count n as a varint of n<<1|t, where t is 1 when
//     the group's logs have a topic0, followed by that topic0's 32 bytes
//     when they do; the piece's entries are the next sum(n) entries of the
//     list. When h is odd, the piece's (h-1)/2 entries have their
//     (address, topic0) pairs in lists of their own (sqlstore writes those
//     for a busy address's part: filtering thousands of entries to find a
//     rare event's few was three times slower than reading its list), and
//     nothing else follows.
//   - tags: for each entry of a piece with groups, in order, the index of
//     its group in its piece, as a varint.
//
// A count of one topic0 reads topics alone, a few bytes a piece; a page
// reads the list and the tags and keeps the entries of its groups. Since
// migration 0023, sqlstore writes a row's pieces all split or all with
// groups (sqlstore/log_forms.go); these functions read either, and both.

// TopicGroup is a group of a piece: the entries of a part of a list whose
// logs have topic0 Topic (or none, when !Has).
type TopicGroup struct {
	N     int
	Has   bool
	Topic chainquery.Hash
}

// AppendSplitPiece appends to topics the piece of n entries whose pairs
// are in lists of their own.
func AppendSplitPiece(topics []byte, n int) []byte {
	return binary.AppendUvarint(topics, uint64(n)<<1|1)
}

// AppendTopicPiece appends the piece of groups to topics.
func AppendTopicPiece(topics []byte, groups []TopicGroup) []byte {
	topics = binary.AppendUvarint(topics, uint64(len(groups))<<1)
	for _, g := range groups {
		if g.Has {
			topics = binary.AppendUvarint(topics, uint64(g.N)<<1|1)
			topics = append(topics, g.Topic[:]...)
		} else {
			topics = binary.AppendUvarint(topics, uint64(g.N)<<1)
		}
	}
	return topics
}

// AppendTag appends the tag of an entry of group g of its piece to tags.
func AppendTag(tags []byte, g int) []byte { return binary.AppendUvarint(tags, uint64(g)) }

// topicPieces reads the pieces of a topics string in turn.
type topicPieces struct {
	r    reader
	keep func(has bool, topic *chainquery.Hash) bool
	// the piece read last: each group's count and whether it is kept, or
	// the number of its entries when they are split into pair lists
	n     []int
	kept  []bool
	split int
	// with groups set, the piece's groups (EachEntry)
	groups *[]TopicGroup
}

// next reads the next piece, false at the end or at an error.
func (tp *topicPieces) next() bool {
	r := &tp.r
	if r.err != nil || len(r.b) == 0 {
		return false
	}
	h := r.uvarint()
	tp.n, tp.kept, tp.split = tp.n[:0], tp.kept[:0], 0
	if tp.groups != nil {
		*tp.groups = (*tp.groups)[:0]
	}
	if h&1 == 1 {
		tp.split = int(min(h>>1, math.MaxInt32))
		if tp.split == 0 {
			r.fail("an empty piece")
		}
		return r.err == nil
	}
	g := int(min(h>>1, uint64(len(r.b)+1)))
	if g > len(r.b) {
		r.fail("%d groups in %d bytes", h>>1, len(r.b))
	}
	for range g {
		h := r.uvarint()
		has := h&1 == 1
		var topic chainquery.Hash
		if has {
			copy(topic[:], r.bytes(len(topic)))
		}
		if r.err != nil {
			return false
		}
		tp.n = append(tp.n, int(h>>1))
		tp.kept = append(tp.kept, tp.keep(has, &topic))
		if tp.groups != nil {
			*tp.groups = append(*tp.groups, TopicGroup{N: int(h >> 1), Has: has, Topic: topic})
		}
	}
	if g == 0 && r.err == nil {
		r.fail("a piece without groups")
	}
	return r.err == nil
}

// CountTopics returns the number of entries of the list whose topics
// string is topics that keep keeps, in its pieces with groups (the entries
// of the others are counted in their pairs' lists).
func CountTopics(topics []byte, keep func(has bool, topic *chainquery.Hash) bool) (int, error) {
	tp := topicPieces{r: reader{b: topics}, keep: keep}
	count := 0
	for tp.next() {
		for i, n := range tp.n {
			if tp.kept[i] {
				count += n
			}
		}
	}
	return count, tp.r.err
}

// FilterTopics returns the list of the entries of list (with its topics
// and tags strings) that keep keeps, in its pieces with groups, and their
// number; nil and 0 when it keeps none. It checks that the three agree.
func FilterTopics(list, topics, tags []byte, keep func(has bool, topic *chainquery.Hash) bool) ([]byte, int, error) {
	tp := topicPieces{r: reader{b: topics}, keep: keep}
	tr := reader{b: tags}
	pr := NewPostingReader(list)
	var out []Posting
	for tp.next() {
		if tp.split > 0 { // its entries are in the pairs' lists
			if pr.Skip(tp.split) != tp.split {
				return nil, 0, corrupt("a piece of %d entries past the list's end", tp.split)
			}
			continue
		}
		total, any := 0, false
		for i, n := range tp.n {
			total += n
			any = any || tp.kept[i]
		}
		if !any { // nothing kept: its runs passed by their headers, its tags only checked
			if pr.Skip(total) != total {
				return nil, 0, corrupt("a piece of %d entries past the list's end", total)
			}
			for range total {
				tr.int(len(tp.n) - 1)
			}
			if tr.err != nil {
				return nil, 0, tr.err
			}
			continue
		}
		for range total {
			g := tr.int(len(tp.n) - 1)
			p, ok := pr.Next()
			if !ok {
				tr.fail("a piece of %d entries past the list's end", total)
			}
			if tr.err != nil {
				return nil, 0, tr.err
			}
			if tp.kept[g] {
				out = append(out, p)
			}
		}
	}
	if tp.r.err != nil {
		return nil, 0, tp.r.err
	}
	if _, more := pr.Next(); more || len(tr.b) != 0 {
		return nil, 0, corrupt("a list longer than its topics")
	}
	if err := pr.Err(); err != nil {
		return nil, 0, err
	}
	if len(out) == 0 {
		return nil, 0, nil
	}
	filtered, err := AppendPostings(nil, out)
	return filtered, len(out), err
}

// EachEntry hands each entry of list (with its topics and tags strings) to
// each, in order, with its topic0 when its piece has groups (has false:
// its log has none); an entry of a split piece comes with split true and
// no topic0, which its pair's list holds. It checks that the three agree.
// sqlstore reads a row with it to turn its pieces into split ones.
func EachEntry(list, topics, tags []byte, each func(p Posting, split, has bool, topic *chainquery.Hash) error) error {
	var groups []TopicGroup
	tp := topicPieces{r: reader{b: topics}, keep: func(bool, *chainquery.Hash) bool { return false }, groups: &groups}
	tr := reader{b: tags}
	pr := NewPostingReader(list)
	none := TopicGroup{}
	for tp.next() {
		n := tp.split
		for _, g := range groups {
			n += g.N
		}
		for range n {
			p, ok := pr.Next()
			if !ok {
				return corrupt("a piece of %d entries past the list's end", n)
			}
			g := &none
			if tp.split == 0 {
				g = &groups[tr.int(len(groups)-1)]
				if tr.err != nil {
					return tr.err
				}
			}
			if err := each(p, tp.split > 0, g.Has, &g.Topic); err != nil {
				return err
			}
		}
	}
	if tp.r.err != nil {
		return tp.r.err
	}
	if _, more := pr.Next(); more || len(tr.b) != 0 {
		return corrupt("a list longer than its topics")
	}
	return pr.Err()
}
