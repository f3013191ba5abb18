package sqlite_test

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
	"github.com/chainquery/chainquery/sqlite"
)

// TestReadsPreparedOnce runs the same reads 50 times and counts the texts
// that reach the read pool's driver to be parsed: each statement may be
// prepared once on each connection of the pool, not once per request. The
// answers must not change once the statements are prepared.
func TestReadsPreparedOnce(t *testing.T) {
	var parses atomic.Int64
	db, err := sqlite.OpenWrapped(filepath.Join(t.TempDir(), "chainquery.db"), func(c driver.Connector) driver.Connector {
		return parseCounter{c, &parses}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	storetest.Load(t, db)

	ctx := context.Background()
	n := storetest.PolygonBlock
	// A block with its transactions and the latest block (two statements in
	// a transaction, one on the pool), and Filter Traces with an address
	// (two statements built for the filter).
	reads := func() []any {
		b, err := db.FindBlock(ctx, chainquery.Polygon, n, true)
		if err != nil {
			t.Fatal(err)
		}
		latest, err := db.LatestBlock(ctx, chainquery.Polygon)
		if err != nil {
			t.Fatal(err)
		}
		traces, count, err := db.FindTraces(ctx, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &n, ToBlock: &n,
			ToAddresses: []chainquery.Address{storetest.Router}, Page: chainquery.Page{Limit: 10}})
		if err != nil {
			t.Fatal(err)
		}
		if len(traces) == 0 {
			t.Fatal("no traces: the filter should match")
		}
		return []any{b, latest, traces, count}
	}

	first := reads()
	prepared := sqlite.ReadStatements(db)
	if prepared < 5 {
		t.Fatalf("%d read statements prepared after the first reads, want at least 5", prepared)
	}
	before := parses.Load()
	var last []any
	for range 50 {
		last = reads()
	}
	if got, most := parses.Load()-before, int64(prepared*sqlite.ReadConns(db)); got > most {
		t.Errorf("50 rounds of reads parsed %d texts, want at most %d (%d statements on %d connections)",
			got, most, prepared, sqlite.ReadConns(db))
	}
	if got := sqlite.ReadStatements(db); got != prepared {
		t.Errorf("%d read statements prepared after the same reads again, want %d", got, prepared)
	}
	if !reflect.DeepEqual(first, last) {
		t.Error("the reads answered differently on prepared statements than on their texts")
	}
}

// parseCounter counts the statements its connections prepare. Its
// connections hide the driver's queries by text, so that database/sql
// prepares those too: every text the driver parses is counted.
type parseCounter struct {
	driver.Connector
	n *atomic.Int64
}

func (c parseCounter) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{conn.(innerConn), c.n}, nil
}

type innerConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
}

type countingConn struct {
	c innerConn
	n *atomic.Int64
}

func (c countingConn) Prepare(q string) (driver.Stmt, error) {
	c.n.Add(1)
	return c.c.Prepare(q)
}

func (c countingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.n.Add(1)
	return c.c.PrepareContext(ctx, q)
}

func (c countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.c.BeginTx(ctx, opts)
}

func (c countingConn) Begin() (driver.Tx, error) {
	return c.c.BeginTx(context.Background(), driver.TxOptions{})
}
func (c countingConn) Close() error { return c.c.Close() }
