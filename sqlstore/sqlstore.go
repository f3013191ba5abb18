// Package sqlstore is the store written once for SQL databases: every read,
// every write rule and every statement the SQLite and PostgreSQL stores
// share. Both import it, as database/sql's drivers import that package;
// the API and the ingesters never do (they take a chainquery.Store). A
// store package (sqlite, postgres) adds its driver (Conn, Tx, BlockBatch)
// and its Dialect: the statements whose text or plan truly differs, and a
// few fragments of syntax.
//
// Statements are written once, here, with PostgreSQL's numbered
// placeholders ($1, $2, ...); a dialect whose driver wants another form
// rewrites them once, when it prepares them (Dialect.Bind). Sizes that are
// Go constants (TraceCountBlocks, LogBucketBlocks) enter SQL text from
// those constants, never as literals.
//
// The words of this package:
//
//   - rows: the blocks a chain keeps as ordinary table rows (blocks,
//     transactions, logs, traces and their indexes): its highest blocks,
//     at or above the boundary, where reorgs happen and rows are cheap to
//     delete.
//   - history: the blocks below the boundary, each kept as compressed
//     segments (its transactions, logs and traces: package history), with
//     hash prefixes and posting lists in place of the row indexes. A
//     block's header row (blocks) is the same in both layouts.
//   - boundary: the height, per chain, that splits history from rows (the
//     history table's below).
//   - head: a chain's latest block: the highest one stored (LatestBlock,
//     HeadBlock), or the node's (SetNodeHead).
//   - bucket: a span of heights by which an index is kept, TraceCountBlocks
//     for traces, LogBucketBlocks for logs.
//   - bucketed index: a table of one row per bucket and key that counts
//     the key's rows and, for history, holds their posting list
//     (trace_counts, log_postings), or counts rows alone (log_counts);
//     BucketRow is a change to one such row.
//   - posting list: the places (block, position) of a key's rows in
//     history, in a bucket (history.Posting).
//   - freeze: turning a bucket of rows into history as the boundary moves
//     up; thaw: turning history back into rows as it moves down, before a
//     write or a rewind below it.
//
// # Rows and history
//
// A chain's blocks live in two layouts. Its highest blocks are kept as
// rows (transactions, logs, traces and their indexes): reorgs happen
// there, and rows are cheap to delete. Below them, blocks are kept as
// history: each block's transactions, logs and traces as one compressed
// segment each (package history), the transactions' hashes as 8-byte
// prefixes, and the posting lists of the traces (per address, direction
// and bucket of TraceCountBlocks heights, in the list column of the
// trace_counts row that counts them) and of the logs (log_postings), in
// place of the row indexes. A block's header row (blocks) and its
// trace_counts counts are the same in both layouts, so that block ranges,
// versions and counts never need to know where the rows are.
//
// The boundary is one height per chain (the history table): every block
// below it is history, every block at or above it rows. A write moves it
// up: straight past the blocks it writes when they lie RowBlocks below the
// node's head (SetNodeHead), and past the buckets that lie RowBlocks below
// the highest stored block, whose rows it turns into history (freeze). A
// bucket's lists grow by appending the bytes of each piece's lists (runs,
// history.DecodePostings). A write or a rewind at a height below the
// boundary moves it down first, to the start of that height's bucket,
// turning history from there up back into rows (thaw), so that the rules
// of the rows (versions, rewinds, trace counts) apply to history unchanged.
package sqlstore

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
)

// Store is the part of a chainquery.Store written once for the SQL stores:
// every read, the API key and Solana writes, and the rules of the block
// writes (rewind, versions, rows and history, trace order). A store
// package fills it with its Dialect and its driver (Conn, Tx, BlockBatch),
// embeds it, and adds the rest of chainquery.Store: the token registry
// writes, Ping and Close.
type Store struct {
	Dialect Dialect

	// Read runs the API's reads of one statement: a pool of the server that
	// answers reads (a replica, where the store has one).
	Read Conn

	// Primary runs the reads whose answer must hold every committed write:
	// BlockHash, HeadBlock, SolanaCursor and LatestOwner, which ingesters
	// resume and check from. It may be Read where reads never lag.
	Primary Conn

	// Write runs the writes of one statement (API keys).
	Write Conn

	// BeginWrite begins a write transaction on the primary (WriteSolana).
	BeginWrite func(ctx context.Context) (Tx, error)

	// ReadTx begins a read-only transaction on the server of Read, in which
	// the statements of one request see one snapshot: a count and its page
	// agree while an ingester commits.
	ReadTx func(ctx context.Context) (Tx, error)

	// BeginBlocks begins the write transaction of one WriteBlocks or
	// ReplaceBlocks call of the chain keyed chain, writing blocks at heights.
	BeginBlocks func(ctx context.Context, chain int64, heights []uint64) (BlockBatch, error)

	// RowBlocks is how many of a chain's highest blocks at least stay rows
	// before their buckets become history (history.go): 0 for
	// DefaultRowBlocks, negative to keep every block as rows.
	RowBlocks int

	// AppendOpenFor is the longest an ingester's append transaction stays
	// open before it commits inside a bucket (0: appendOpenFor, append.go).
	AppendOpenFor time.Duration

	// HashChunkEntries is about how many entries a merge of the runs of
	// the transaction hash index holds at a time (0: hashChunkEntries,
	// hash_runs.go): tests make it small, to merge in many parts.
	HashChunkEntries int

	// decoded keeps decoded history segments (history_cache.go).
	decoded decodedCache

	// hashCache keeps the small runs of the hash index (hash_cache.go).
	hashCache hashRunCache

	// dicts holds, by chain key, the dictionaries its segments are
	// written with (history_dicts.go).
	dicts sync.Map

	// built holds the statements made from the Dialect's fragments, made
	// once (statements).
	built     builtSQL
	buildOnce sync.Once

	// nodeHeads holds, by chain key, the last head an ingester saw its
	// node at (SetNodeHead): blocks RowBlocks below it are written
	// straight into history.
	nodeHeads sync.Map

	// appends holds the chains' open append transactions (append.go).
	appends appends

	// AmountArg returns an amount (wei, token amounts) in the store's form
	// of a 256-bit integer, as an argument or a value of a row; ScanAmount
	// returns the scan target that reads it back into *p, nil for NULL.
	AmountArg  func(v *big.Int) any
	ScanAmount func(p **big.Int) any
}

// Conn runs a store's statements with its driver: a pool or a
// transaction. Its errors are the driver's, with EUNAVAILABLE joined where
// the database could not answer.
type Conn interface {
	// Query runs query with args and, for each row in turn, scans it into
	// dest and calls row. An error of row ends the query and is returned as
	// it is.
	//
	// The destinations are pointers to int, int64, float64, bool, string,
	// []byte (nil for NULL, and possibly for an empty value), *int64 and
	// *string (nil for NULL), and ScanAmount's targets. The arguments are
	// int64, int, float64, string, []byte, nil (NULL) and [][]byte (an
	// array, where the store's SQL takes one). A []byte destination gets a
	// copy of its row's value (database/sql's Scan and pgx both make one),
	// which the caller keeps as it is: a read of long posting lists copies
	// none of them again.
	Query(ctx context.Context, query string, args, dest []any, row func() error) error

	// Exec runs query with args and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
}

// Query is one statement of a batch (Batcher): its text, arguments,
// destinations and the function called for each row, as Conn.Query takes
// them.
type Query struct {
	SQL        string
	Args, Dest []any
	Row        func() error
}

// Batcher is a Conn that can send several statements, none of which
// depends on another's answer, in one round trip (PostgreSQL's pipeline).
// Their rows reach each Query's Row in order, statement after statement;
// the first error ends the batch. queryBatch runs them one after another
// on a Conn that is no Batcher (SQLite, where a statement costs no round
// trip).
type Batcher interface {
	QueryBatch(ctx context.Context, qs []Query) error
}

// queryBatch runs qs on c: in one round trip where c is a Batcher.
func queryBatch(ctx context.Context, c Conn, qs ...Query) error {
	if b, ok := c.(Batcher); ok && len(qs) > 1 {
		return b.QueryBatch(ctx, qs)
	}
	for _, q := range qs {
		if err := c.Query(ctx, q.SQL, q.Args, q.Dest, q.Row); err != nil {
			return err
		}
	}
	return nil
}

// Tx is a transaction of a store's driver. Rollback after Commit does
// nothing, so that it may be deferred.
type Tx interface {
	Conn
	Commit(ctx context.Context) error
	Rollback()
}

// UnavailableError returns the EUNAVAILABLE error of a store whose database
// cannot answer now but may shortly, joined with cause (the driver's error)
// so that logs keep it. Clients see the same text whatever the store.
func UnavailableError(cause error) error {
	return errors.Join(chainquery.Errorf(chainquery.EUNAVAILABLE, "the database is unavailable; try again shortly"), cause)
}

// storeChainID returns the key of an EVM chain's rows, its EIP-155 id. It
// returns EINVALID for any other chain.
func storeChainID(c chainquery.Chain) (int64, error) {
	id := c.ID()
	if id == 0 {
		return 0, chainquery.Errorf(chainquery.EINVALID, "chain %q is not an EVM chain", c)
	}
	return id, nil
}

// readChain resolves chain to its key and begins a read transaction for
// the statements of one request, returning the reads of the chain on it.
func (s *Store) readChain(ctx context.Context, chain chainquery.Chain) (Tx, reader, error) {
	id, err := storeChainID(chain)
	if err != nil {
		return nil, reader{}, err
	}
	tx, err := s.ReadTx(ctx)
	return tx, s.reader(tx, id), err
}

// reader is the reads of one chain on one connection: a request's read
// transaction, a pool, or a write batch. It carries the store, the
// connection and the chain's key that the reads of rows and history take
// from one another.
type reader struct {
	*Store
	c     Conn
	chain int64
}

// reader returns the reads of chain on c.
func (s *Store) reader(c Conn, chain int64) reader { return reader{s, c, chain} }
