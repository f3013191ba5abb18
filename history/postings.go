package history

import (
	"encoding/binary"
	"math"
)

// RunEntries is the most entries of one run: the most a count or a page
// decodes at each end of its range, against ~4 bytes of header a run.
const RunEntries = 64

// Posting is the place of one trace.
type Posting struct {
	Block uint64
	Tx    uint32 // transaction index in the block
	Pos   uint32 // position of the trace in the transaction
}

// Less orders postings in chain order.
func (p Posting) Less(q Posting) bool {
	if p.Block != q.Block {
		return p.Block < q.Block
	}
	if p.Tx != q.Tx {
		return p.Tx < q.Tx
	}
	return p.Pos < q.Pos
}

// AppendPostings appends the list of ps, which must be in strictly
// increasing chain order, to dst.
func AppendPostings(dst []byte, ps []Posting) ([]byte, error) {
	if len(ps) == 0 {
		return append(dst, 0), nil
	}
	for i := 1; i < len(ps); i++ {
		if !ps[i-1].Less(ps[i]) {
			return nil, corrupt("posting %d %+v not after %+v", i, ps[i], ps[i-1])
		}
	}
	var body []byte
	for len(ps) > 0 {
		run := ps[:min(len(ps), RunEntries)]
		body = appendRun(body[:0], run)
		dst = binary.AppendUvarint(dst, uint64(len(run)))
		dst = binary.AppendUvarint(dst, uint64(len(body)))
		dst = append(dst, body...)
		ps = ps[len(run):]
	}
	return dst, nil
}

// appendRun appends the entries of a run, in order, to dst.
func appendRun(dst []byte, run []Posting) []byte {
	var prev Posting
	for i, p := range run {
		dst = binary.AppendUvarint(dst, p.Block-prev.Block)
		if i > 0 && p.Block == prev.Block {
			dst = binary.AppendUvarint(dst, uint64(p.Tx-prev.Tx))
			if p.Tx == prev.Tx {
				dst = binary.AppendUvarint(dst, uint64(p.Pos-prev.Pos))
			} else {
				dst = binary.AppendUvarint(dst, uint64(p.Pos))
			}
		} else {
			dst = binary.AppendUvarint(dst, uint64(p.Tx))
			dst = binary.AppendUvarint(dst, uint64(p.Pos))
		}
		prev = p
	}
	return dst
}

// DecodePostings returns the entries of the list src, checking all of it.
func DecodePostings(src []byte) ([]Posting, error) {
	out := []Posting{}
	r := NewPostingReader(src)
	for p, ok := r.Next(); ok; p, ok = r.Next() {
		out = append(out, p)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// WholeRuns returns the longest start of src, the first bytes of a list
// cut anywhere, that is a list itself: its whole runs (the empty list when
// there is none). Such a start holds the list's first entries, exactly:
// a store that reads the first bytes of a hot key's long list for a page
// near its start decodes no entry of a cut run.
func WholeRuns(src []byte) []byte {
	end := 0
	for end < len(src) {
		n, k := binary.Uvarint(src[end:])
		if k <= 0 || n == 0 {
			break
		}
		size, k2 := binary.Uvarint(src[end+k:])
		if k2 <= 0 || size > uint64(len(src)-end-k-k2) {
			break
		}
		end += k + k2 + int(size)
	}
	if end == 0 {
		return []byte{0}
	}
	return src[:end]
}

// run is one run of a list: its entries' count, their bytes, and the
// block of the first.
type run struct {
	n     int
	body  []byte
	first uint64
}

// runs reads the runs of a list in turn.
type runs struct {
	r     reader
	begun int
}

// next returns the next run, false at the end of the list or at an error.
func (rs *runs) next() (run, bool) {
	r := &rs.r
	if r.err != nil || (rs.begun > 0 && len(r.b) == 0) {
		return run{}, false
	}
	n := r.int(len(r.b) / 3) // an entry takes at least 3 bytes
	if r.err != nil {
		return run{}, false
	}
	rs.begun++
	if n == 0 {
		if rs.begun > 1 || len(r.b) != 0 {
			r.fail("an empty run in a list of more")
		}
		return run{}, false
	}
	size := r.int(len(r.b))
	if r.err == nil && size < 3*n {
		r.fail("a run of %d entries in %d bytes", n, size)
	}
	body := r.bytes(size)
	if r.err != nil {
		return run{}, false
	}
	first, k := binary.Uvarint(body)
	if k <= 0 {
		r.fail("bad varint")
		return run{}, false
	}
	return run{n: n, body: body, first: first}, true
}

// PostingReader reads the entries of a list one at a time, allocating
// nothing: a page that needs a few entries of a hot contract's list of
// thousands reads only those.
type PostingReader struct {
	runs   runs
	cur    run    // the run being read, or the next one
	ahead  run    // the run after cur, when read (SkipBefore)
	have   bool   // cur holds a run
	peek   bool   // ahead holds the run after cur
	body   reader // what is left of cur's entries
	inRun  int
	done   int
	prev   Posting // the last entry read
	strict bool    // the next entry must come after prev; else at or after floor's block
	floor  uint64
}

// NewPostingReader returns a reader of the list src.
func NewPostingReader(src []byte) *PostingReader {
	return &PostingReader{runs: runs{r: reader{b: src}}}
}

// advance makes cur the next run, reporting whether there is one.
func (pr *PostingReader) advance() bool {
	if pr.peek {
		pr.cur, pr.have, pr.peek = pr.ahead, true, false
	} else {
		pr.cur, pr.have = pr.runs.next()
	}
	pr.body, pr.inRun = reader{b: pr.cur.body}, 0
	return pr.have
}

// SkipBefore passes, without decoding them, the runs that end before
// block, as far as the first entry of the run after each tells.
func (pr *PostingReader) SkipBefore(block uint64) {
	if pr.inRun > 0 || (!pr.have && !pr.advance()) {
		return
	}
	for {
		if !pr.peek {
			pr.ahead, pr.peek = pr.runs.next()
			if !pr.peek {
				return
			}
		}
		if pr.ahead.first >= block {
			return
		}
		pr.done += pr.cur.n
		pr.strict, pr.floor = false, pr.ahead.first // what was passed is not checked
		pr.advance()
	}
}

// Next returns the next entry, or false at the end of the list or at an
// error (Err).
func (pr *PostingReader) Next() (Posting, bool) {
	if !pr.have || pr.inRun == pr.cur.n {
		if pr.have && len(pr.body.b) != 0 && pr.body.err == nil {
			pr.body.fail("%d bytes after the last entry of a run", len(pr.body.b))
		}
		if pr.body.err != nil || !pr.advance() {
			return Posting{}, false
		}
	}
	r := &pr.body
	var prev Posting
	if pr.inRun > 0 {
		prev = pr.prev
	}
	p := Posting{Block: prev.Block + r.uvarint()}
	if p.Block < prev.Block {
		r.fail("block overflow")
	}
	tx, pos := r.int(math.MaxUint32), r.int(math.MaxUint32)
	if pr.inRun > 0 && p.Block == prev.Block {
		if uint64(prev.Tx)+uint64(tx) > math.MaxUint32 {
			r.fail("transaction index overflow")
		}
		p.Tx = prev.Tx + uint32(tx)
		if tx == 0 {
			if uint64(prev.Pos)+uint64(pos) > math.MaxUint32 {
				r.fail("position overflow")
			}
			p.Pos = prev.Pos + uint32(pos)
		} else {
			p.Pos = uint32(pos)
		}
	} else {
		p.Tx, p.Pos = uint32(tx), uint32(pos)
	}
	if r.err == nil && (pr.strict && !pr.prev.Less(p) || !pr.strict && p.Block < pr.floor) {
		r.fail("posting %d not after the one before", pr.done)
	}
	if r.err != nil {
		return Posting{}, false
	}
	pr.inRun++
	pr.done++
	pr.prev, pr.strict = p, true
	return p, true
}

// Skip passes k entries, or as many as are left, and returns how many it
// passed: a run that it passes whole by its header, undecoded (as
// SkipBefore, what it passes is not checked), the others' entries one by
// one. A page at a deep offset into a busy key's list decodes at most a
// run before it.
func (pr *PostingReader) Skip(k int) int {
	passed := 0
	for passed < k {
		if !pr.have || pr.inRun == pr.cur.n {
			if pr.have && len(pr.body.b) != 0 || pr.body.err != nil || !pr.advance() {
				break // the end, or an error that Next reports
			}
		}
		if pr.inRun == 0 && pr.cur.n <= k-passed {
			passed += pr.cur.n
			pr.done += pr.cur.n
			pr.inRun, pr.body = pr.cur.n, reader{}
			pr.strict, pr.floor = false, pr.cur.first
			continue
		}
		if _, ok := pr.Next(); !ok {
			break
		}
		passed++
	}
	return passed
}

// Err returns the error that ended the reading, nil at the list's end.
func (pr *PostingReader) Err() error {
	if pr.body.err != nil {
		return pr.body.err
	}
	return pr.runs.r.err
}

// CountPostings returns the number of entries of the list src in blocks
// lo to hi. A run that lies wholly inside the range, as its own first
// entry and the next run's first tell, is counted by its header; one
// wholly outside is passed; only the runs across the range's ends are
// decoded. It checks what it decodes, not the runs it counts or passes.
func CountPostings(src []byte, lo, hi uint64) (int, error) {
	rs := runs{r: reader{b: src}}
	count := 0
	cur, ok := rs.next()
	for ok {
		next, more := rs.next()
		switch {
		case cur.first > hi:
			return count, rs.r.err
		case more && next.first < lo: // every entry is at or before next's first
		case more && cur.first >= lo && next.first <= hi:
			count += cur.n
		default:
			pr := PostingReader{cur: cur, have: true, body: reader{b: cur.body}}
			for p, ok := pr.Next(); ok && pr.inRun <= cur.n; p, ok = pr.Next() {
				if p.Block > hi {
					break
				}
				if p.Block >= lo {
					count++
				}
				if pr.inRun == cur.n {
					break
				}
			}
			if err := pr.Err(); err != nil {
				return 0, err
			}
		}
		cur, ok = next, more
	}
	return count, rs.r.err
}
