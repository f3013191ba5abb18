package driverbench

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/polyrows"
	"github.com/chainquery/chainquery/sqlstore"
	_ "github.com/mattn/go-sqlite3"
	_ "modernc.org/sqlite"
)

// The pragmas of sqlite.Open's write connection.
var pragmas = []string{"busy_timeout = 10000", "journal_mode = WAL", "synchronous = NORMAL",
	"foreign_keys = OFF", "temp_store = MEMORY", "cache_size = -65536", "wal_autocheckpoint = 8192"}

const (
	nBlocks  = 200 // blocks written per iteration
	perWrite = 20  // blocks per transaction
)

// blocks are nBlocks Polygon-shaped blocks (about 1,300 rows each), decoded
// by the ingester's decoders from the node's rendered answers.
func blocks(b *testing.B) []*chainquery.BlockData {
	c, err := polychain.New(polychain.Config{Seed: 1, Start: 65000000, Blocks: nBlocks})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]*chainquery.BlockData, nBlocks)
	for i := range out {
		d, err := polyrows.Decode(c, c.First()+uint64(i), polychain.KindParity)
		if err != nil {
			b.Fatal(err)
		}
		out[i] = d
	}
	return out
}

// BenchmarkDrivers writes nBlocks blocks, perWrite per transaction, into a
// fresh database through each driver, and reports rows/s.
func BenchmarkDrivers(b *testing.B) {
	data := blocks(b)
	rows := 0
	for _, d := range data {
		rows += 1 + len(d.Transactions) + len(d.Logs) + len(d.Traces)
	}
	for _, driver := range []string{"sqlite", "sqlite3"} {
		name := map[string]string{"sqlite": "modernc", "sqlite3": "mattn-cgo"}[driver]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s := openStore(b, driver)
				b.StartTimer()
				for j := 0; j < len(data); j += perWrite {
					if err := s.WriteBlocks(context.Background(), chainquery.Polygon, data[j:j+perWrite]); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				s.close()
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

type store struct {
	sqlstore.Store
	db    *sql.DB
	stmts map[string]*sql.Stmt
	texts map[string][]string // bulk's statements by table
}

func (s *store) close() {
	for _, st := range s.stmts {
		st.Close()
	}
	s.db.Close()
}

// openStore creates the schema of package sqlite in a new file and
// prepares the bulk INSERTs of sqlite/bulk.go.
func openStore(b *testing.B, driver string) *store {
	db, err := sql.Open(driver, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	ctx := context.Background()
	for _, p := range pragmas {
		if _, err := db.ExecContext(ctx, "PRAGMA "+p); err != nil {
			b.Fatal(err)
		}
	}
	files, _ := filepath.Glob("../../sqlite/migration/*.sql")
	slices.Sort(files)
	if len(files) == 0 {
		b.Fatal("no migrations found")
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(text)); err != nil {
			b.Fatalf("%s: %v", f, err)
		}
	}
	s := &store{db: db, stmts: map[string]*sql.Stmt{}, texts: map[string][]string{}}
	for _, t := range append(sqlstore.BlockTables(), traceCounts) {
		s.texts[t.Name] = bulk(t)
		for _, q := range s.texts[t.Name] {
			if s.stmts[q], err = db.Prepare(q); err != nil {
				b.Fatal(err)
			}
		}
	}
	s.Store = sqlstore.Store{AmountArg: bigArg, BeginBlocks: func(ctx context.Context, _ int64, _ []uint64) (sqlstore.BlockBatch, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &batch{s: s, tx: tx}, nil
	}}
	return s
}

var traceCounts = sqlstore.Table{Name: "trace_counts", Columns: []string{"chain", "dir", "address", "bucket", "n"}}

const bulkRows = 64

// bulk returns the INSERTs of t for 64, 32, ..., 1 rows, as sqlite/bulk.go.
func bulk(t sqlstore.Table) []string {
	head := "INSERT INTO " + t.Name + " (" + strings.Join(t.Columns, ", ") + ") VALUES "
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ") + ")"
	tail := ""
	if t.Name == traceCounts.Name {
		tail = " ON CONFLICT (chain, dir, address, bucket) DO UPDATE SET n = n + excluded.n"
	}
	var qs []string
	for n := bulkRows; n >= 1; n /= 2 {
		qs = append(qs, head+strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ")+tail)
	}
	return qs
}

// batch is sqlstore.BlockBatch for an ingester moving forward: no prior
// versions, nothing to delete.
type batch struct {
	s  *store
	tx *sql.Tx
}

func (t *batch) Query(ctx context.Context, q string, args, dest []any, row func() error) error {
	return fmt.Errorf("not used")
}
func (t *batch) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return 0, fmt.Errorf("not used")
}
func (t *batch) Commit(ctx context.Context) error { return t.tx.Commit() }
func (t *batch) Rollback()                        { t.tx.Rollback() }
func (t *batch) PriorVersions(context.Context, []uint64) (map[uint64]int, error) {
	return nil, nil
}
func (t *batch) DeleteHeights(context.Context, []uint64) error { return fmt.Errorf("not used") }

func (t *batch) Insert(ctx context.Context, tables []sqlstore.Table) error {
	for i := range tables {
		if err := t.insert(ctx, &tables[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t *batch) AddTraceCounts(ctx context.Context, rows []sqlstore.BucketRow) error {
	tc := sqlstore.Table{Name: traceCounts.Name, Columns: traceCounts.Columns}
	for _, r := range rows {
		tc.Values = append(tc.Values, int64(137), r.Dir, r.Address, r.Bucket, r.N)
	}
	return t.insert(ctx, &tc)
}

// insert is sqlite/bulk.go's: the largest statements first.
func (t *batch) insert(ctx context.Context, tab *sqlstore.Table) error {
	qs, cols, values := t.s.texts[tab.Name], len(tab.Columns), tab.Values
	for i, n := 0, bulkRows; n >= 1; i, n = i+1, n/2 {
		for len(values) >= n*cols {
			if _, err := t.tx.StmtContext(ctx, t.s.stmts[qs[i]]).ExecContext(ctx, values[:n*cols]...); err != nil {
				return err
			}
			values = values[n*cols:]
		}
	}
	return nil
}

// bigArg is sqlite's: an int64 when the amount fits, decimal text if not.
func bigArg(v *big.Int) any {
	if v == nil {
		return nil
	} else if v.IsInt64() {
		return v.Int64()
	}
	return v.String()
}
