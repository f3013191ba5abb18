package ingest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/chainquery/chainquery/ingest"
)

// recorder is an ingest.Observer that keeps what it heard.
type recorder struct {
	mu     sync.Mutex
	heads  []uint64
	stored []uint64
	writes []ingest.Write
	reorgs []uint64
}

func (r *recorder) NodeHead(h uint64) { r.mu.Lock(); r.heads = append(r.heads, h); r.mu.Unlock() }

func (r *recorder) StoredHead(h uint64) { r.mu.Lock(); r.stored = append(r.stored, h); r.mu.Unlock() }

func (r *recorder) Written(w ingest.Write) {
	r.mu.Lock()
	r.writes = append(r.writes, w)
	r.mu.Unlock()
}

func (r *recorder) Reorg(d uint64) { r.mu.Lock(); r.reorgs = append(r.reorgs, d); r.mu.Unlock() }

// blocks adds up the blocks and traces of the writes heard.
func (r *recorder) blocks() (blocks, traces int) {
	for _, w := range r.writes {
		blocks += w.Blocks
		traces += w.Traces
	}
	return blocks, traces
}

// TestEVMObserver checks what the EVM loop tells its Observer: the node's
// head, each committed write (blocks, rows, last block and its time), the
// stored head a rerun resumes from, and a reorg's depth.
func TestEVMObserver(t *testing.T) {
	db, c := openStore(t), newSimChain(50)
	obs := &recorder{}
	e := loop(db, c)
	e.To, e.Observer = u64(50), obs
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	blocks, traces := obs.blocks()
	last := obs.writes[len(obs.writes)-1]
	if blocks != 51 || traces != 51 || last.Last != 50 || last.LastTime.Unix() != 1700000000+50 ||
		len(obs.stored) != 0 || len(obs.heads) == 0 || obs.heads[0] != 50 {
		t.Fatalf("first run: %d blocks, %d traces, last write %+v, stored heads %v, node heads %v; "+
			"want 51 blocks and traces, the last at block 50, no stored head, node head 50", blocks, traces, last, obs.stored, obs.heads)
	}

	// A reorg of the top five blocks while stopped, then ten more.
	c.reorg(46, 1)
	c.setHead(60)
	obs = &recorder{}
	e = loop(db, c)
	e.To, e.Observer = u64(60), obs
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	blocks, _ = obs.blocks()
	if len(obs.stored) != 1 || obs.stored[0] != 50 || len(obs.reorgs) != 1 || obs.reorgs[0] != 5 ||
		blocks != 5+10 || obs.writes[len(obs.writes)-1].Last != 60 {
		t.Fatalf("rerun: stored heads %v, reorgs %v, %d blocks written, writes %+v; "+
			"want stored head 50, one reorg of 5, 15 blocks (5 replaced, 10 new) up to 60", obs.stored, obs.reorgs, blocks, obs.writes)
	}
}
