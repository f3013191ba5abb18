package postgres

import (
	"context"
	"errors"

	"github.com/chainquery/chainquery"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// FindBlock returns the block at number, with its transactions when full is
// set. It returns ENOTFOUND if the block is not indexed.
func (db *DB) FindBlock(ctx context.Context, chain chainquery.Chain, number uint64, full bool) (*chainquery.Block, error) {
	id, err := chainID(chain)
	if err != nil {
		return nil, err
	}
	if !full { // one statement: no transaction needed, and two round trips saved
		b, err := findBlock(ctx, db.rpool, id, number)
		if err != nil {
			return nil, err
		}
		b.Chain = chain
		return b, nil
	}
	tx, err := db.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	b, err := findBlock(ctx, tx, id, number)
	if err != nil {
		return nil, err
	}
	b.Chain = chain
	if b.Transactions, err = findTransactions(ctx, tx, id, b); err != nil {
		return nil, wrap(err)
	}
	return b, nil
}

// queryRower is a pool or a transaction.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func findBlock(ctx context.Context, tx queryRower, chain int32, number uint64) (*chainquery.Block, error) {
	b := &chainquery.Block{Number: number}
	var bloom, extra []byte
	var hasExtra bool
	err := tx.QueryRow(ctx, qBlock, chain, gasArg(number)).Scan(
		fixedCol(b.Hash[:]), fixedCol(b.ParentHash[:]), &b.Timestamp, &b.Version, &bloom,
		fixedCol(b.TransactionsRoot[:]), fixedCol(b.StateRoot[:]), fixedCol(b.ReceiptsRoot[:]), fixedCol(b.Miner[:]),
		&hasExtra, &extra, gasCol{&b.Size}, gasCol{&b.GasLimit}, gasCol{&b.GasUsed},
		&b.TransactionCount, bigCol{&b.BaseFeePerGas}, &b.TraceCount)
	if err != nil {
		return nil, notFound(err, "block %d is not indexed", number)
	}
	b.LogsBloom = bloom
	if hasExtra {
		b.HasExtraData, b.ExtraData = true, append([]byte{}, extra...)
	}
	return b, nil
}

func findTransactions(ctx context.Context, tx pgx.Tx, chain int32, b *chainquery.Block) ([]*chainquery.Transaction, error) {
	rows, err := tx.Query(ctx, qBlockTransactions, chain, gasArg(b.Number))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*chainquery.Transaction{}
	for rows.Next() {
		t := &chainquery.Transaction{BlockNumber: b.Number, Timestamp: b.Timestamp}
		var typ int16
		if err := rows.Scan(&t.Index, fixedCol(t.Hash[:]), fixedCol(t.From[:]), addrPtrCol{&t.To}, bigCol{&t.Value},
			gasCol{&t.GasLimit}, bigCol{&t.GasPrice}, bigCol{&t.EffectiveGasPrice}, bigCol{&t.MaxFeePerGas},
			bigCol{&t.MaxPriorityFeePerGas}, gasCol{&t.GasUsed}, gasCol{&t.CumulativeGasUsed}, gasCol{&t.Nonce},
			bytesCol{&t.Input}, &typ, addrPtrCol{&t.ContractAddress}, &t.Status, &t.LogCount); err != nil {
			return nil, err
		}
		t.Type = int(typ)
		out = append(out, t)
	}
	return out, rows.Err()
}

// LatestBlock returns the highest indexed block number of chain. It returns
// ENOTFOUND if nothing is indexed. Blocks are written whole in one
// transaction, so the highest one is always complete.
func (db *DB) LatestBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	return db.latestBlock(ctx, db.rpool, chain)
}

// HeadBlock is LatestBlock read on the primary: what an ingester resumes
// from must not lag behind what it wrote.
func (db *DB) HeadBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	return db.latestBlock(ctx, db.wpool, chain)
}

func (db *DB) latestBlock(ctx context.Context, pool *pgxpool.Pool, chain chainquery.Chain) (uint64, error) {
	id, err := chainID(chain)
	if err != nil {
		return 0, err
	}
	var n *int64
	if err := pool.QueryRow(ctx, qLatestBlock, id).Scan(&n); err != nil {
		return 0, wrap(err)
	} else if n == nil {
		return 0, chainquery.Errorf(chainquery.ENOTFOUND, "no block of %s is indexed yet", chain)
	}
	return uint64(*n), nil
}

// BlockHash returns the hash of the stored block at number. It returns
// ENOTFOUND if none is stored there.
//
// It reads the primary even when API reads go to a replica: the ingester
// compares it with the node's parent hash right after its own writes, and a
// lagging replica would make it see a reorg that is not there.
func (db *DB) BlockHash(ctx context.Context, chain chainquery.Chain, number uint64) (chainquery.Hash, error) {
	var h chainquery.Hash
	id, err := chainID(chain)
	if err != nil {
		return h, err
	}
	err = db.wpool.QueryRow(ctx, qBlockHash, id, gasArg(number)).Scan(fixedCol(h[:]))
	if errors.Is(err, pgx.ErrNoRows) {
		return h, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", number)
	}
	return h, wrap(err)
}
