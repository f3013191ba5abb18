package history_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/history"
)

// taggedList is an address's list written in pieces, as the writes of
// several groups of blocks append them, with the topic0 of each entry (the
// zero hash for a log without one).
type taggedList struct {
	list, topics, tags []byte
	entries            []history.Posting
	topic0             []chainquery.Hash
	has                []bool
	// every entry, a split piece's too, as EachEntry gives it
	every []entry
}

// entry is an entry of a list with what EachEntry says of it.
type entry struct {
	p          history.Posting
	split, has bool
	topic      chainquery.Hash
}

// appendPiece appends entries whose topic0s are topic0 (has false: none)
// as one piece, the groups in the order of their first entry; split, as a
// piece whose pairs have lists of their own, left out of what a filter
// keeps.
func (tl *taggedList) appendPiece(t *testing.T, ps []history.Posting, topic0 []chainquery.Hash, has []bool, split bool) {
	t.Helper()
	var err error
	if tl.list, err = history.AppendPostings(tl.list, ps); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		e := entry{p: p, split: split}
		if !split {
			e.has, e.topic = has[i], topic0[i]
		}
		tl.every = append(tl.every, e)
	}
	if split {
		tl.topics = history.AppendSplitPiece(tl.topics, len(ps))
		return
	}
	var groups []history.TopicGroup
	for i := range ps {
		g := slices.IndexFunc(groups, func(g history.TopicGroup) bool { return g.Has == has[i] && g.Topic == topic0[i] })
		if g < 0 {
			g = len(groups)
			groups = append(groups, history.TopicGroup{Has: has[i], Topic: topic0[i]})
		}
		groups[g].N++
		tl.tags = history.AppendTag(tl.tags, g)
	}
	tl.topics = history.AppendTopicPiece(tl.topics, groups)
	tl.entries = append(tl.entries, ps...)
	tl.topic0 = append(tl.topic0, topic0...)
	tl.has = append(tl.has, has...)
}

// TestTopics: an address's list filtered by topic0 holds its logs with
// that topic0, in order, whatever the pieces, but for a split piece's; the
// count from topics alone agrees; and topics or tags that do not match the
// list are corrupt.
func TestTopics(t *testing.T) {
	transfer, approval := chainquery.Hash{1}, chainquery.Hash{2}
	var tl taggedList
	block, pos := uint64(1000), uint32(0)
	for piece := range 5 {
		var ps []history.Posting
		var topic0 []chainquery.Hash
		var has []bool
		for i := range 30 + piece*70 { // the last pieces take more than a run
			block += uint64(i % 3)
			pos++
			ps = append(ps, history.Posting{Block: block, Pos: pos})
			switch {
			case i%7 == 3:
				topic0, has = append(topic0, chainquery.Hash{}), append(has, false)
			case i%3 == 1:
				topic0, has = append(topic0, approval), append(has, true)
			default:
				topic0, has = append(topic0, transfer), append(has, true)
			}
		}
		tl.appendPiece(t, ps, topic0, has, piece == 2)
	}
	for _, c := range []struct {
		name string
		keep func(has bool, t *chainquery.Hash) bool
	}{
		{"Transfer", func(has bool, t *chainquery.Hash) bool { return has && *t == transfer }},
		{"Transfer or Approval", func(has bool, t *chainquery.Hash) bool { return has && (*t == transfer || *t == approval) }},
		{"no topic0", func(has bool, t *chainquery.Hash) bool { return !has }},
		{"another", func(has bool, t *chainquery.Hash) bool { return has && *t == chainquery.Hash{3} }},
	} {
		var want []history.Posting
		for i, p := range tl.entries {
			if c.keep(tl.has[i], &tl.topic0[i]) {
				want = append(want, p)
			}
		}
		list, n, err := history.FilterTopics(tl.list, tl.topics, tl.tags, c.keep)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []history.Posting
		if list != nil {
			if got, err = history.DecodePostings(list); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if n != len(want) || !slices.Equal(got, want) {
			t.Errorf("%s: %d entries %v, want %d %v", c.name, n, got, len(want), want)
		}
		count, err := history.CountTopics(tl.topics, c.keep)
		if err != nil || count != len(want) {
			t.Errorf("%s: counted %d (%v), want %d", c.name, count, err, len(want))
		}
	}

	var every []entry
	err := history.EachEntry(tl.list, tl.topics, tl.tags, func(p history.Posting, split, has bool, topic *chainquery.Hash) error {
		every = append(every, entry{p, split, has, *topic})
		return nil
	})
	if err != nil || !slices.Equal(every, tl.every) {
		t.Errorf("EachEntry gave %d entries (%v), want the list's %d with their pieces' topic0s", len(every), err, len(tl.every))
	}

	all := func(bool, *chainquery.Hash) bool { return true }
	none := func(bool, *chainquery.Hash) bool { return false }
	for _, c := range []struct {
		name               string
		list, topics, tags []byte
	}{
		{"a tag short", tl.list, tl.topics, tl.tags[:len(tl.tags)-1]},
		{"a tag more", tl.list, tl.topics, append(slices.Clip(tl.tags), 0)},
		{"a piece less", tl.list, tl.topics[:len(tl.topics)-len(history.AppendTopicPiece(nil, []history.TopicGroup{{N: 1}}))], tl.tags},
		{"a piece more", tl.list, history.AppendTopicPiece(slices.Clip(tl.topics), []history.TopicGroup{{N: 1}}), tl.tags},
		{"a tag past its piece's groups", tl.list, tl.topics, append(append([]byte{}, tl.tags[:len(tl.tags)-1]...), 9)},
		{"a topic0 cut", tl.list, tl.topics[:len(tl.topics)-5], tl.tags},
		{"a split piece past the list's end", tl.list, history.AppendSplitPiece(slices.Clip(tl.topics), 1), tl.tags},
	} {
		for _, keep := range []func(bool, *chainquery.Hash) bool{all, none} { // none: the pieces passed unread
			if _, _, err := history.FilterTopics(c.list, c.topics, c.tags, keep); !errors.Is(err, history.ErrCorrupt) {
				t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
			}
		}
		err := history.EachEntry(c.list, c.topics, c.tags, func(history.Posting, bool, bool, *chainquery.Hash) error { return nil })
		if !errors.Is(err, history.ErrCorrupt) {
			t.Errorf("%s, each entry: %v, want ErrCorrupt", c.name, err)
		}
	}
	if _, err := history.CountTopics(tl.topics[:len(tl.topics)-5], all); !errors.Is(err, history.ErrCorrupt) {
		t.Errorf("a topic0 cut, counted: %v, want ErrCorrupt", err)
	}
}
