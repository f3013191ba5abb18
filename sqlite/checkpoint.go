package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// checkpointer copies the WAL back into the database file on a connection
// of its own after the writer's block commits, so that the writer does not.
// A checkpoint of an append transaction's pages, with its fsync, held the
// one writer for ~0.3 s while the fetchers, their window full, and the node
// stood idle: a third of the ingester's pauses (docs/benchmarks.md, issue
// 30, session 19). A PASSIVE checkpoint takes no lock a writer needs: the
// writer goes on appending to the WAL, and SQLite starts the WAL over at
// the first write after a checkpoint that copied all of it.
//
// The writer's own wal_autocheckpoint stays, higher (walSafetyPages), for
// when this one falls behind: a reader holding an old snapshot, or writes
// that are not block commits (API keys) and never poke it.
type checkpointer struct {
	db      *sql.DB
	poked   chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
	closing sync.Once
	err     error // of close
}

// checkpointEvery is the least time between two checkpoints: following
// the tip, a commit every block would otherwise sync the file every block.
const checkpointEvery = time.Second

// walSafetyPages is the writer's wal_autocheckpoint: 256 MiB of 4 KiB
// pages, several append transactions' worth.
const walSafetyPages = 65536

func newCheckpointer(path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn(path, []string{"busy_timeout(10000)"}, "deferred"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, poked: make(chan struct{}, 1), stop: make(chan struct{})}
	c.done.Add(1)
	go c.run()
	return c, nil
}

// poke says the writer committed.
func (c *checkpointer) poke() {
	if c == nil {
		return
	}
	select {
	case c.poked <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer c.done.Done()
	for {
		select {
		case <-c.stop:
			return
		case <-c.poked:
		}
		// Errors are left to the writer's own checkpoints: a checkpoint
		// that cannot copy everything (a reader's snapshot) is no fault.
		c.db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
		select {
		case <-c.stop:
			return
		case <-time.After(checkpointEvery):
		}
	}
}

// close stops the checkpointer; the last connection to close checkpoints
// what is left. DB.Close may run more than once: so may this.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	c.closing.Do(func() {
		close(c.stop)
		c.done.Wait()
		c.err = c.db.Close()
	})
	return c.err
}
