package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/chainquery/chainquery"
)

// FindBlock returns the block at number, with its transactions when full is
// set. It returns ENOTFOUND if the block is not indexed.
func (db *DB) FindBlock(ctx context.Context, chain chainquery.Chain, number uint64, full bool) (*chainquery.Block, error) {
	id, err := chainID(chain)
	if err != nil {
		return nil, err
	}
	tx, err := db.rdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap(err)
	}
	defer tx.Rollback()

	b, err := findBlock(ctx, tx, id, number)
	if err != nil {
		return nil, err
	}
	b.Chain = chain
	if full {
		if b.Transactions, err = findTransactions(ctx, tx, id, b); err != nil {
			return nil, wrap(err)
		}
	}
	return b, nil
}

func findBlock(ctx context.Context, tx *sql.Tx, chain int64, number uint64) (*chainquery.Block, error) {
	b := &chainquery.Block{Number: number}
	var bloom, extra []byte
	var hasExtra bool
	err := tx.QueryRowContext(ctx, qBlock, chain, int64(number)).Scan(
		fixedCol(b.Hash[:]), fixedCol(b.ParentHash[:]), &b.Timestamp, &b.Version, &bloom,
		fixedCol(b.TransactionsRoot[:]), fixedCol(b.StateRoot[:]), fixedCol(b.ReceiptsRoot[:]), fixedCol(b.Miner[:]),
		&hasExtra, &extra, gasCol{&b.Size}, gasCol{&b.GasLimit}, gasCol{&b.GasUsed},
		&b.TransactionCount, bigCol{&b.BaseFeePerGas}, &b.TraceCount)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", number)
	} else if err != nil {
		return nil, wrap(err)
	}
	b.LogsBloom = bloom
	if hasExtra {
		b.HasExtraData, b.ExtraData = true, append([]byte{}, extra...)
	}
	return b, nil
}

func findTransactions(ctx context.Context, tx *sql.Tx, chain int64, b *chainquery.Block) ([]*chainquery.Transaction, error) {
	rows, err := tx.QueryContext(ctx, qBlockTransactions, chain, int64(b.Number))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*chainquery.Transaction{}
	for rows.Next() {
		t := &chainquery.Transaction{BlockNumber: b.Number, Timestamp: b.Timestamp}
		if err := rows.Scan(&t.Index, fixedCol(t.Hash[:]), fixedCol(t.From[:]), addrPtrCol{&t.To}, bigCol{&t.Value},
			gasCol{&t.GasLimit}, bigCol{&t.GasPrice}, bigCol{&t.EffectiveGasPrice}, bigCol{&t.MaxFeePerGas},
			bigCol{&t.MaxPriorityFeePerGas}, gasCol{&t.GasUsed}, gasCol{&t.CumulativeGasUsed}, gasCol{&t.Nonce},
			bytesCol{&t.Input}, &t.Type, addrPtrCol{&t.ContractAddress}, &t.Status, &t.LogCount); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// LatestBlock returns the highest indexed block number of chain. It returns
// ENOTFOUND if nothing is indexed. Blocks are written whole in one
// transaction, so the highest one is always complete.
func (db *DB) LatestBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	id, err := chainID(chain)
	if err != nil {
		return 0, err
	}
	var n sql.NullInt64
	if err := db.rdb.QueryRowContext(ctx, qLatestBlock, id).Scan(&n); err != nil {
		return 0, wrap(err)
	} else if !n.Valid {
		return 0, chainquery.Errorf(chainquery.ENOTFOUND, "no block of %s is indexed yet", chain)
	}
	return uint64(n.Int64), nil
}

// BlockHash returns the hash of the stored block at number. It returns
// ENOTFOUND if none is stored there.
func (db *DB) BlockHash(ctx context.Context, chain chainquery.Chain, number uint64) (chainquery.Hash, error) {
	var h chainquery.Hash
	id, err := chainID(chain)
	if err != nil {
		return h, err
	}
	err = db.rdb.QueryRowContext(ctx, `SELECT hash FROM blocks WHERE chain = ? AND number = ?`, id, int64(number)).Scan(fixedCol(h[:]))
	if errors.Is(err, sql.ErrNoRows) {
		return h, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", number)
	}
	return h, wrap(err)
}

// HeadBlock returns the highest stored block number of chain. Readers and the
// writer share one file, so this is LatestBlock.
func (db *DB) HeadBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	return db.LatestBlock(ctx, chain)
}
