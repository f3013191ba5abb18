package storetest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/chainquery/chainquery/history"
)

// A database made before trace_pages (every migration before 0017) kept
// the posting lists of history's traces in trace_counts.list. A store's
// test puts OldTracePagesHistory into its table history and
// OldTracePageRows into trace_counts with its SQL, opens the store on the
// database (migration 0017 moves the lists into pages) and calls
// CheckTracePagesUpgrade with what trace_pages and trace_counts then hold.

// OldTracePagesHistory are rows of history (chain, below, logs_from,
// hashes_merged): chain 137's boundary cuts its bucket 2 (buckets 0 and 1
// are wholly history, 2 is history below 250 and rows from there), chain
// 1's is a bucket's edge (buckets 0 and 1 are history, 2 rows). Chain 5
// has no history.
var OldTracePagesHistory = [][]any{
	{int64(137), int64(250), int64(250), int64(0)},
	{int64(1), int64(200), int64(200), int64(0)},
}

// oldTracePagesBelow is the boundary of OldTracePagesHistory's chains.
func oldTracePagesBelow(chain int64) (int64, bool) {
	for _, h := range OldTracePagesHistory {
		if h[0].(int64) == chain {
			return h[1].(int64), true
		}
	}
	return 0, false
}

// oldTraceRow is a row of trace_counts before migration 0017, as the
// fixture knows it: the postings of its list (in pieces, each appended by
// a write; nil: no list) and how many of its traces are in blocks still
// rows (extra), so that n is their sum.
type oldTraceRow struct {
	chain, dir int64
	addr       []byte
	bucket     int64
	pieces     [][]history.Posting
	extra      int64
}

func (r oldTraceRow) entries() int64 {
	var n int64
	for _, p := range r.pieces {
		n += int64(len(p))
	}
	return n
}

func (r oldTraceRow) list() []byte {
	if r.pieces == nil {
		return nil
	}
	var l []byte
	for _, p := range r.pieces {
		var err error
		if l, err = history.AppendPostings(l, p); err != nil {
			panic(err)
		}
	}
	return l
}

// values is the row as OldTracePageRows gives it.
func (r oldTraceRow) values() []any {
	var l any // NULL as nil, as ScanTraceCounts reads it
	if r.pieces != nil {
		l = r.list()
	}
	return []any{r.chain, r.dir, r.addr, r.bucket, r.entries() + r.extra, l}
}

// oldTracePageRows is the fixture, made once, the same on every run.
var oldTracePageRows = func() []oldTraceRow {
	rng := rand.New(rand.NewPCG(17, 250))
	addr := func() []byte {
		a := make([]byte, history.AddrBytes)
		for i := range a {
			a[i] = byte(rng.IntN(256))
		}
		return a
	}
	// k addresses of one page (equal PagePart), in no particular order.
	samePage := func(k int) [][]byte {
		out := [][]byte{addr()}
		for len(out) < k {
			if a := addr(); history.PagePart(a) == history.PagePart(out[0]) {
				out = append(out, a)
			}
		}
		return out
	}
	// k postings (fewer where the draw repeats one) in blocks lo to hi.
	postings := func(lo, hi uint64, k int) []history.Posting {
		ps := make([]history.Posting, k)
		for i := range ps {
			ps[i] = history.Posting{Block: lo + rng.Uint64N(hi-lo+1), Tx: uint32(rng.IntN(40)), Pos: uint32(rng.IntN(3))}
		}
		slices.SortFunc(ps, func(p, q history.Posting) int {
			return cmp.Or(cmp.Compare(p.Block, q.Block), cmp.Compare(p.Tx, q.Tx), cmp.Compare(p.Pos, q.Pos))
		})
		return slices.Compact(ps)
	}
	// The postings of a chain's bucket in history: those of bucket 2 of
	// chain 137 below its boundary.
	hist := func(chain, bucket int64, k int) [][]history.Posting {
		below, _ := oldTracePagesBelow(chain)
		lo := uint64(bucket * 100)
		hi := min(lo+99, uint64(below-1))
		return [][]history.Posting{postings(lo, hi, k)}
	}
	var rows []oldTraceRow
	add := func(chain, dir int64, a []byte, bucket int64, pieces [][]history.Posting, extra int64) {
		rows = append(rows, oldTraceRow{chain, dir, a, bucket, pieces, extra})
	}

	four := samePage(4)  // one page of four addresses
	two := samePage(2)   // one page of two, in the bucket the boundary cuts
	everywhere := addr() // in every bucket, both directions
	for i, a := range four {
		add(137, 0, a, 0, hist(137, 0, 1+i), 0)
		if i < 3 {
			add(137, 1, a, 1, hist(137, 1, 2+i), 0)
		}
	}
	add(137, 0, two[0], 2, hist(137, 2, 3), 4) // traces above the boundary too
	add(137, 0, two[1], 2, hist(137, 2, 2), 0) // none
	for b := range int64(3) {
		add(137, 0, everywhere, b, hist(137, b, 5), 0)
		add(137, 1, everywhere, b, hist(137, b, 3), 0)
	}
	add(137, 1, everywhere, 3, nil, 2) // above the boundary: no list
	// A busy address: a list of several runs.
	add(137, 1, addr(), 0, hist(137, 0, 150), 0)
	// A list of two pieces, each appended by a write.
	add(137, 0, addr(), 1, [][]history.Posting{postings(100, 139, 4), postings(140, 199, 70)}, 0)
	// An address traced only above the boundary in the bucket it cuts.
	add(137, 1, addr(), 2, nil, 3)
	// More addresses, most with a page of their own.
	for i := range 36 {
		b := int64(i % 3)
		var extra int64
		if b == 2 && i%2 == 0 {
			extra = int64(1 + i%5)
		}
		add(137, int64(i/3%2), addr(), b, hist(137, b, 1+i%4), extra)
	}
	for b, n := range []int64{40, 55, 61, 7} {
		add(137, 2, []byte{}, int64(b), nil, n)
	}

	// Chain 1: pages of the same direction, page and bucket as chain 137's.
	add(1, 0, four[0], 0, hist(1, 0, 2), 0)
	add(1, 0, four[1], 0, hist(1, 0, 1), 0)
	add(1, 1, everywhere, 1, hist(1, 1, 3), 0)
	add(1, 1, everywhere, 2, nil, 3) // above the boundary
	for b, n := range []int64{9, 8, 3} {
		add(1, 2, []byte{}, int64(b), nil, n)
	}
	// Chain 5 has no history.
	add(5, 0, everywhere, 0, nil, 4)
	add(5, 2, []byte{}, 0, nil, 4)
	return rows
}()

// OldTracePageRows returns the rows of trace_counts (chain, dir, address,
// bucket, n, list; a NULL list as nil) of the database before migration
// 0017: for chains 137 and 1, the lists of their history in each bucket
// and direction, with several addresses of one page and one address in
// every bucket; in the bucket chain 137's boundary cuts, rows whose count
// holds traces of blocks still rows and rows whose count is their list's;
// rows above the boundaries without lists, the count of all traces
// (dir 2) of every bucket, and a chain without history.
func OldTracePageRows() [][]any {
	out := make([][]any, len(oldTracePageRows))
	for i, r := range oldTracePageRows {
		out[i] = r.values()
	}
	return out
}

// ScanTracePages reads rows of trace_pages (chain, dir, part, bucket,
// keys, lists), as CheckTracePagesUpgrade compares them: integers as
// int64.
func ScanTracePages(rows Rows) ([][]any, error) {
	var out [][]any
	for rows.Next() {
		var chain, dir, part, bucket int64
		var keys, lists []byte
		if err := rows.Scan(&chain, &dir, &part, &bucket, &keys, &lists); err != nil {
			return nil, err
		}
		out = append(out, []any{chain, dir, part, bucket, keys, lists})
	}
	return out, rows.Err()
}

// CheckTracePagesUpgrade checks what a database holding
// OldTracePagesHistory and OldTracePageRows holds once migrated, read
// (ScanTracePages' and ScanTraceCounts' rows, in any order): every list
// is in page PagePart(address) of its chain, direction and bucket, with
// its bytes and its number of postings, and the pages hold nothing else,
// their addresses in order; trace_counts keeps the rows of every count of
// all traces, of the buckets above the boundaries and of chains without
// history; in the bucket chain 137's boundary cuts, a row keeps the count
// of its traces in rows, without a list, or goes when it has none; the
// rows of addresses of the buckets wholly history go.
func CheckTracePagesUpgrade(t *testing.T, read func(ctx context.Context) (pages, counts [][]any, err error)) {
	t.Helper()
	pages, counts, err := read(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	type pageKey struct{ chain, dir, part, bucket int64 }
	want := map[pageKey][]history.PageEntry{}
	var wantCounts [][]any
	for _, r := range oldTracePageRows {
		below, hist := oldTracePagesBelow(r.chain)
		if r.dir == 2 || r.pieces == nil {
			wantCounts = append(wantCounts, r.values())
			continue
		}
		if !hist || r.bucket*100 >= below {
			t.Fatalf("fixture: a list of chain %d, bucket %d above the boundary %d", r.chain, r.bucket, below)
		}
		k := pageKey{r.chain, r.dir, int64(history.PagePart(r.addr)), r.bucket}
		want[k] = append(want[k], history.PageEntry{Addr: r.addr, N: r.entries(), List: r.list()})
		if r.bucket == below/100 && r.extra > 0 { // the bucket the boundary cuts
			wantCounts = append(wantCounts, []any{r.chain, r.dir, r.addr, r.bucket, r.extra, nil})
		}
	}
	shared := 0
	for _, es := range want {
		slices.SortFunc(es, func(a, b history.PageEntry) int { return bytes.Compare(a.Addr, b.Addr) })
		if len(es) > 1 {
			shared++
		}
	}
	if shared < 3 {
		t.Fatalf("fixture: %d pages of several addresses", shared)
	}

	seen := map[pageKey]bool{}
	for _, p := range pages {
		k := pageKey{p[0].(int64), p[1].(int64), p[2].(int64), p[3].(int64)}
		if seen[k] {
			t.Errorf("page %+v twice", k)
		}
		seen[k] = true
		got, err := history.DecodePage(p[4].([]byte), p[5].([]byte))
		if err != nil {
			t.Errorf("page %+v: %v", k, err)
			continue
		}
		es, ok := want[k]
		if !ok {
			t.Errorf("page %+v of %s: no such page wanted", k, pageString(got))
			continue
		}
		if !reflect.DeepEqual(got, es) {
			t.Errorf("page %+v:\n%s\nwant\n%s", k, pageString(got), pageString(es))
		}
	}
	for k, es := range want {
		if !seen[k] {
			t.Errorf("page %+v missing; want %s", k, pageString(es))
		}
	}

	order := func(a, b []any) int {
		return cmp.Or(cmp.Compare(a[0].(int64), b[0].(int64)), cmp.Compare(a[3].(int64), b[3].(int64)),
			cmp.Compare(a[1].(int64), b[1].(int64)), bytes.Compare(a[2].([]byte), b[2].([]byte)))
	}
	counts = slices.Clone(counts)
	slices.SortFunc(counts, order)
	slices.SortFunc(wantCounts, order)
	if !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("trace_counts after the upgrade:\n%s\nwant\n%s", countsString(counts), countsString(wantCounts))
	}
}

func pageString(es []history.PageEntry) string {
	var b bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&b, "  %x n=%d list=%x\n", e.Addr, e.N, e.List)
	}
	return b.String()
}

func countsString(rows [][]any) string {
	var b bytes.Buffer
	for _, r := range rows {
		list := "NULL"
		if l, ok := r[5].([]byte); ok {
			list = fmt.Sprintf("%x", l)
		}
		fmt.Fprintf(&b, "  chain=%d dir=%d address=%x bucket=%d n=%d list=%s\n", r[0], r[1], r[2], r[3], r[4], list)
	}
	return b.String()
}
