package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/chainquery/chainquery/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// readPool hands out the read pool's connections to the API's reads, so
// that a read transaction's end costs no round trip of its own.
//
// A request's read transaction is not rolled back when the request ends:
// its connection goes back here still in the transaction ("dirty"), and
// the next read that takes it sends the ROLLBACK in the batch of its own
// first statement. With BEGIN sent the same way (readTx), a request runs
// in as many round trips as it has statements (one to six). Under load a
// round trip costs the server ~0.1 ms of CPU besides the statement's own
// work (docs/benchmarks.md, issue 31, session 36).
//
// Every read of the pool goes through here (readTx, the one-statement
// reads of Read, Ping): pgxpool destroys a connection given back inside a
// transaction, so the dirty ones never reach it, and a read waiting in
// pgxpool for a connection that sits dirty here would wait for the sweep.
// Each connection the pool may open is at any time out with a read,
// parked in dirty, or a token in free: leave to acquire one from pgxpool
// (which then never waits: at most MaxConns are out). A read takes a dirty
// connection first, so that a parked transaction is ended by the next
// read rather than by the sweep.
//
// A dirty connection holds its snapshot until it is taken or swept, at
// most parkFor after its request ended: long enough to be taken under any
// load, short enough that the snapshot keeps neither VACUUM on the primary
// nor WAL replay on a replica waiting for long.
type readPool struct {
	pool    *pgxpool.Pool
	dirty   chan parked
	free    chan struct{}
	parkFor time.Duration

	mu       sync.Mutex
	puts     int       // of dirty connections
	armed    bool      // a sweep is scheduled
	lastPark time.Time // when a connection was last parked
	closed   bool
}

// parked is a dirty connection and when its request ended.
type parked struct {
	c  *pgxpool.Conn
	at time.Time
}

// parkFor is how long a dirty connection waits to be taken before a
// sweep rolls its transaction back and gives it to pgxpool.
const parkFor = 50 * time.Millisecond

// releaseEvery makes every releaseEvery-th dirty connection go back to
// pgxpool at once rather than parked: under steady load a connection could
// otherwise pass from read to read forever, out of reach of pgxpool's
// MaxConnLifetime and health checks.
const releaseEvery = 64

func newReadPool(pool *pgxpool.Pool, parkFor time.Duration) *readPool {
	n := pool.Config().MaxConns
	p := &readPool{pool: pool, parkFor: parkFor, dirty: make(chan parked, n), free: make(chan struct{}, n)}
	for range n {
		p.free <- struct{}{}
	}
	return p
}

// get returns a connection and whether it is dirty, waiting while every
// connection is out.
func (p *readPool) get(ctx context.Context) (*pgxpool.Conn, bool, error) {
	select {
	case s := <-p.dirty:
		return s.c, true, nil
	default:
	}
	select {
	case s := <-p.dirty:
		return s.c, true, nil
	case <-p.free:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	c, err := p.pool.Acquire(ctx)
	if err != nil {
		p.free <- struct{}{}
		return nil, false, err
	}
	return c, false, nil
}

// put gives back a connection get returned: parked when its transaction
// is still open and its request left it idle, else given to pgxpool (which
// destroys a broken one).
func (p *readPool) put(c *pgxpool.Conn) {
	pc := c.Conn().PgConn()
	if c.Conn().IsClosed() || pc.IsBusy() || pc.TxStatus() == 'I' {
		c.Release()
		p.free <- struct{}{}
		return
	}
	now := time.Now()
	p.mu.Lock()
	p.puts++
	if p.closed || p.puts%releaseEvery == 0 {
		p.mu.Unlock()
		p.end(c)
		return
	}
	p.dirty <- parked{c, now} // never blocks: c was taken from dirty or free
	p.lastPark = now
	arm := !p.armed
	p.armed = true
	p.mu.Unlock()
	if arm {
		time.AfterFunc(p.parkFor, p.sweep)
	}
}

// end rolls back c's transaction and gives c to pgxpool.
func (p *readPool) end(c *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.Exec(ctx, "rollback") // on failure the connection is closed, and pgxpool destroys it
	c.Release()
	p.free <- struct{}{}
}

// sweep ends the transactions of connections parked for parkFor or more,
// and schedules the next sweep while any stays dirty.
func (p *readPool) sweep() {
	now := time.Now()
	closed := p.isClosed()
	var keep, old []parked
	for n := len(p.dirty); n > 0; n-- {
		var s parked
		select {
		case s = <-p.dirty:
		default: // the rest were taken meanwhile
			n = 1
			continue
		}
		if closed || now.Sub(s.at) >= p.parkFor {
			old = append(old, s)
		} else {
			keep = append(keep, s)
		}
	}
	next := time.Duration(-1)
	for _, s := range keep {
		if wait := s.at.Add(p.parkFor).Sub(now); next < 0 || wait < next {
			next = wait
		}
		p.dirty <- s
	}
	for _, s := range old {
		p.end(s.c)
	}
	p.mu.Lock()
	if next < 0 && !p.lastPark.Before(now) { // parked after the slots were looked at
		next = p.parkFor
	}
	p.armed = next >= 0
	p.mu.Unlock()
	if next >= 0 {
		time.AfterFunc(next, p.sweep)
	}
}

func (p *readPool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// close ends the transactions of the parked connections and stops
// parking; those still out are ended when they come back.
func (p *readPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.sweep()
}

// send takes a connection and sends qs on it as its first statements,
// inside a new read transaction when tx is set, ending the connection's
// dirty transaction in the same batch. It returns the connection (to be
// put back, also on error, when not nil) and the batch's results from
// qs' on. A dirty connection that the server closed while it was parked
// (a replica ends a session whose snapshot holds its replay back) is
// dropped and another taken: nothing was read on it.
func (p *readPool) send(ctx context.Context, tx bool, qs []sqlstore.Query) (*pgxpool.Conn, pgx.BatchResults, error) {
	for {
		c, dirty, err := p.get(ctx)
		if err != nil {
			return nil, nil, err
		}
		b := &pgx.Batch{}
		if dirty {
			b.Queue("rollback")
		}
		if tx {
			b.Queue(beginRead)
		}
		prefix := len(b.QueuedQueries)
		for _, q := range qs {
			b.Queue(q.SQL, q.Args...)
		}
		br := c.SendBatch(ctx, b)
		for range prefix {
			if _, err = br.Exec(); err != nil {
				break
			}
		}
		if err == nil {
			return c, br, nil
		}
		br.Close()
		if dirty && c.Conn().IsClosed() && ctx.Err() == nil {
			p.put(c)
			continue
		}
		return c, nil, err
	}
}

// beginRead begins a request's read transaction: one snapshot for all its
// statements (a count and its page agree while an ingester commits).
const beginRead = "begin isolation level repeatable read read only"
