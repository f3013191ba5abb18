package sqlite

import (
	"context"
	"encoding/binary"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainquery/chainquery"
)

// walHeader is the WAL-index header's first copy, as read.
type walHeader [12]uint32

// headMemo is the latest block of each chain with the header it was read
// under: it answers Get Latest Block without a query while nothing was
// committed. The answer is one index seek, yet the statement around it (a
// read transaction on a pooled connection, the driver, database/sql) was
// most of serve's CPU on that endpoint (docs/benchmarks.md). Serving it
// from memory for a while would tell a client that has just seen block N
// through another endpoint an older head,
// so the answer is kept only while the database provably has not changed:
// every commit, by any connection of any process, rewrites the WAL-index
// header at the start of the -shm file (iChange, mxFrame, the salts; see
// SQLite's walformat.html, a layout every SQLite version sharing a WAL
// database must agree on) before the commit returns. A request reads that
// header with one pread of the -shm file first: unchanged since the query
// whose answer is kept, the answer is still the one a query would give.
//
// The open file stays the one SQLite uses while this process holds a
// connection (SQLite removes or truncates -shm only when no connection is
// left): the write pool keeps its one connection open for the life of DB.
// Should the file still be replaced, the once-a-second check that the path
// names the open file turns the shortcut off, and every request queries.
type headMemo struct {
	shm     *shmFile // nil: every request queries
	path    string   // of the -shm file
	checked atomic.Int64
	off     atomic.Bool // the file is not to be trusted (or closed)
	closed  atomic.Bool

	mu    sync.Mutex
	heads map[chainquery.Chain]headEntry

	queries atomic.Int64 // reads that reached the store (tests)
}

type headEntry struct {
	hdr walHeader
	n   uint64
}

func newHeadMemo(dbPath string) *headMemo {
	m := &headMemo{path: dbPath + "-shm", heads: map[chainquery.Chain]headEntry{}}
	m.shm = openSHM(m.path) // nil where it cannot be opened
	m.checked.Store(time.Now().UnixNano())
	return m
}

// header returns the WAL-index header, and false when it cannot be trusted
// (no -shm file open, a torn read, the file no longer the path's).
func (m *headMemo) header() (walHeader, bool) {
	if m == nil || m.shm == nil || m.off.Load() {
		return walHeader{}, false
	}
	if now := time.Now().UnixNano(); now-m.checked.Load() > int64(time.Second) {
		m.checked.Store(now)
		if fi, err := os.Stat(m.path); err != nil || !os.SameFile(fi, m.shm.info) {
			m.off.Store(true)
			return walHeader{}, false
		}
	}
	return m.shm.header()
}

// latest answers from the memo when the header is the one the kept answer
// was read under, and otherwise reads with query and keeps the answer
// under the header read before the query: the answer is then at least as
// new as every commit that header reflects.
func (m *headMemo) latest(ctx context.Context, chain chainquery.Chain, query func(context.Context, chainquery.Chain) (uint64, error)) (uint64, error) {
	hdr, ok := m.header()
	if ok {
		m.mu.Lock()
		e, hit := m.heads[chain]
		m.mu.Unlock()
		if hit && e.hdr == hdr {
			return e.n, nil
		}
	}
	m.queries.Add(1)
	n, err := query(ctx, chain)
	if err == nil && ok {
		m.mu.Lock()
		m.heads[chain] = headEntry{hdr, n}
		m.mu.Unlock()
	}
	return n, err
}

// close closes the -shm file; requests from then on query. Closing twice
// is no error, as for the rest of DB.
func (m *headMemo) close() error {
	if m == nil || m.shm == nil || m.closed.Swap(true) {
		return nil
	}
	m.off.Store(true)
	return m.shm.close()
}

// LatestBlock returns the highest stored block of chain (BlockService),
// without a query while no commit happened since the last one (headMemo).
func (db *DB) LatestBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	return db.head.latest(ctx, chain, db.shared.LatestBlock)
}

// shmFile is the -shm file, open read-only: its header is read with one
// pread, not through a mapping, so that a file cut short under us (which a
// held connection should prevent) reads short instead of faulting.
type shmFile struct {
	f    *os.File
	info os.FileInfo
}

// openSHM opens the -shm file at path, or returns nil if it is not there
// or not yet initialized.
func openSHM(path string) *shmFile {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	info, err := f.Stat()
	if err != nil || info.Size() < 136 {
		f.Close()
		return nil
	}
	return &shmFile{f: f, info: info}
}

// header reads both copies of the WAL-index header. A writer writes the
// second copy, then the first; this reads the first, then the second (one
// pread, in address order), and trusts them only when they agree and the
// header is initialized: a torn read disagrees. The header is in the
// host's byte order (shared memory, never moved between machines).
func (s *shmFile) header() (walHeader, bool) {
	var b [96]byte
	if n, err := s.f.ReadAt(b[:], 0); n != len(b) || err != nil {
		return walHeader{}, false
	}
	var h, h2 walHeader
	for i := range h {
		h[i] = binary.NativeEndian.Uint32(b[4*i:])
		h2[i] = binary.NativeEndian.Uint32(b[48+4*i:])
	}
	// Word 3 holds isInit, bigEndCksum and the page size: zero until
	// SQLite has initialized the header.
	return h, h == h2 && h[3] != 0
}

func (s *shmFile) close() error { return s.f.Close() }
