package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/chainquery/chainquery"
)

// FindTransaction returns the transaction hash names (TransactionService).
// As every read of one transaction by its hash (its receipt, its traces,
// its logs), it looks in the rows first and then in history, in one read
// transaction.
func (s *Store) FindTransaction(ctx context.Context, f chainquery.TransactionFilter) (*chainquery.Transaction, error) {
	tx, r, err := s.readChain(ctx, f.Chain)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	found, err := r.findTransaction(ctx, f)
	return found.Transaction, err
}

// foundTx is a transaction findTransaction found, with its block's version
// and whether the block is history (else rows).
type foundTx struct {
	*chainquery.Transaction
	version int
	history bool
}

// findTransaction finds f's transaction in the rows, else in history;
// ENOTFOUND when it is in neither.
func (r reader) findTransaction(ctx context.Context, f chainquery.TransactionFilter) (foundTx, error) {
	var t chainquery.Transaction
	var version int
	sc := r.txScan(new(scan).counter(&t.BlockNumber).to(&t.Timestamp, &version), &t)
	q, args := r.Dialect.Transaction(r.chain, f.TransactionHash, f.BlockNumber)
	found, blocks, err := r.rowsThenRuns(ctx, Query{SQL: q, Args: args, Dest: sc.dest}, f.TransactionHash, f.BlockNumber)
	if err != nil {
		return foundTx{}, err
	} else if found {
		return foundTx{&t, version, false}, sc.done()
	}
	h, st, err := r.historyTxIn(ctx, f.TransactionHash, blocks)
	if err != nil {
		return foundTx{}, err
	} else if h == nil {
		where := ""
		if f.BlockNumber != nil {
			where = fmt.Sprintf(" in block %d", *f.BlockNumber)
		}
		return foundTx{}, chainquery.Errorf(chainquery.ENOTFOUND, "transaction %s is not indexed on %s%s", f.TransactionHash.Hex(), f.Chain, where)
	}
	return foundTx{h, st.version, true}, nil
}

// rowsThenRuns runs rows, a lookup of the transaction hash in the rows
// that gives at most one row (its Row unset), and where it finds nothing
// reads history's hash index for it: the candidate blocks, highest first.
// Where statements cost a round trip each (a Batcher), the index is asked
// beside the rows: a history transaction, most of a long chain's, is then
// found in one round trip fewer.
func (r reader) rowsThenRuns(ctx context.Context, rows Query, hash chainquery.Hash, block *uint64) (found bool, candidates []uint64, err error) {
	rows.Row = func() error { found = true; return nil }
	runs, blocks := r.historyTxRuns(HashPrefix(hash), block)
	if _, batches := r.c.(Batcher); batches {
		err = queryBatch(ctx, r.c, rows, runs)
	} else if err = r.c.Query(ctx, rows.SQL, rows.Args, rows.Dest, rows.Row); err == nil && !found {
		err = r.c.Query(ctx, runs.SQL, runs.Args, runs.Dest, runs.Row)
	}
	if err != nil || found {
		return found, nil, err
	}
	candidates, err = blocks(ctx)
	return false, candidates, err
}

// historyTxIn finds the transaction hash in history, in the highest of
// the candidate blocks the hash index gave (rowsThenRuns) that holds it,
// and returns a copy of it, its Timestamp set, with its block's stamp; tx
// is nil when history has no such transaction.
func (r reader) historyTxIn(ctx context.Context, hash chainquery.Hash, candidates []uint64) (tx *chainquery.Transaction, st stamp, err error) {
	if len(candidates) == 0 {
		return nil, st, nil
	}
	stamps, err := r.historyStamps(ctx, candidates)
	if err != nil {
		return nil, st, err
	}
	for _, number := range candidates {
		st, ok := stamps[number]
		if !ok {
			continue
		}
		txs, found, err := r.historyTransactions(ctx, number, st.version)
		if err != nil {
			return nil, st, err
		}
		i := slices.IndexFunc(txs, func(t *chainquery.Transaction) bool { return t.Hash == hash })
		if !found || i < 0 {
			continue
		}
		t := *txs[i]
		t.Timestamp = st.timestamp
		return &t, st, nil
	}
	return nil, st, nil
}
