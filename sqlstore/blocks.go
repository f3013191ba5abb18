package sqlstore

import (
	"context"
	"strings"

	"github.com/chainquery/chainquery"
)

// FindBlock returns the block at number, with its transactions when full is
// set. It returns ENOTFOUND if the block is not indexed.
func (s *Store) FindBlock(ctx context.Context, chain chainquery.Chain, number uint64, full bool) (*chainquery.Block, error) {
	id, err := storeChainID(chain)
	if err != nil {
		return nil, err
	}
	if !full { // one statement: no transaction needed
		return s.findBlock(ctx, s.Read, chain, id, number)
	}
	tx, err := s.ReadTx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	b, err := s.findBlock(ctx, tx, chain, id, number)
	if err != nil {
		return nil, err
	}
	if b.Transactions, err = s.findTransactions(ctx, tx, id, b); err != nil {
		return nil, err
	}
	if len(b.Transactions) == 0 && b.TransactionCount > 0 { // history
		txs, found, err := s.reader(tx, id).historyTransactions(ctx, number, b.Version)
		if err != nil {
			return nil, err
		} else if !found {
			return nil, errHistoryMoved
		}
		b.Transactions = make([]*chainquery.Transaction, len(txs))
		for i, t := range txs {
			row := *t
			row.Timestamp = b.Timestamp
			b.Transactions[i] = &row
		}
	}
	return b, nil
}

func (s *Store) findBlock(ctx context.Context, c Conn, chain chainquery.Chain, id int64, number uint64) (*chainquery.Block, error) {
	b := &chainquery.Block{Chain: chain, Number: number}
	var extra []byte
	var hasExtra bool
	var sc scan
	sc.fixed(b.Hash[:]).fixed(b.ParentHash[:]).to(&b.Timestamp, &b.Version, &b.LogsBloom).
		fixed(b.TransactionsRoot[:]).fixed(b.StateRoot[:]).fixed(b.ReceiptsRoot[:]).fixed(b.Miner[:]).
		to(&hasExtra, &extra).counter(&b.Size).counter(&b.GasLimit).counter(&b.GasUsed).
		to(&b.TransactionCount, s.ScanAmount(&b.BaseFeePerGas), &b.TraceCount)
	if found, err := queryRow(ctx, c, qBlock, []any{id, int64(number)}, sc.dest...); err != nil {
		return nil, err
	} else if !found {
		return nil, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", number)
	}
	if err := sc.done(); err != nil {
		return nil, err
	}
	if hasExtra {
		b.HasExtraData, b.ExtraData = true, append([]byte{}, extra...)
	}
	return b, nil
}

func (s *Store) findTransactions(ctx context.Context, c Conn, id int64, b *chainquery.Block) ([]*chainquery.Transaction, error) {
	t := chainquery.Transaction{BlockNumber: b.Number, Timestamp: b.Timestamp}
	return queryRows(ctx, c, qBlockTransactions, []any{id, int64(b.Number)}, s.txScan(&scan{}, &t), &t)
}

// LatestBlock returns the highest indexed block number of chain. It returns
// ENOTFOUND if nothing is indexed. Blocks are written whole in one
// transaction, so the highest one is always complete.
func (s *Store) LatestBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	return s.latestBlock(ctx, s.Read, chain)
}

// HeadBlock is LatestBlock read on the primary: what an ingester resumes
// from must not lag behind what it wrote. The chain's open append
// transaction is committed first.
func (s *Store) HeadBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	if id, err := storeChainID(chain); err == nil {
		if err := s.flushAppend(ctx, id); err != nil {
			return 0, err
		}
	}
	return s.latestBlock(ctx, s.Primary, chain)
}

// Rewrites reports the rewrites of chain's stored blocks after the mark
// since (BlockService).
func (s *Store) Rewrites(ctx context.Context, chain chainquery.Chain, since uint64) (mark, lowest uint64, err error) {
	id, err := storeChainID(chain)
	if err != nil {
		return 0, 0, err
	}
	var last, low *int64
	if _, err := queryRow(ctx, s.Read, qRewrites, []any{id, int64(since)}, &last, &low); err != nil {
		return 0, 0, err
	} else if last == nil {
		return since, chainquery.NoRewrite, nil
	}
	return uint64(*last), uint64(*low), nil
}

func (s *Store) latestBlock(ctx context.Context, c Conn, chain chainquery.Chain) (uint64, error) {
	id, err := storeChainID(chain)
	if err != nil {
		return 0, err
	}
	var n *int64
	if _, err := queryRow(ctx, c, qLatestBlock, []any{id}, &n); err != nil {
		return 0, err
	} else if n == nil {
		return 0, chainquery.Errorf(chainquery.ENOTFOUND, "no block of %s is indexed yet", chain)
	}
	return uint64(*n), nil
}

// BlockHash returns the hash of the stored block at number. It returns
// ENOTFOUND if none is stored there.
//
// It reads the primary: the ingester compares it with the node's parent
// hash right after its own writes, and a lagging replica would make it see
// a reorg that is not there. The chain's open append transaction is
// committed first.
func (s *Store) BlockHash(ctx context.Context, chain chainquery.Chain, number uint64) (chainquery.Hash, error) {
	var h chainquery.Hash
	id, err := storeChainID(chain)
	if err != nil {
		return h, err
	}
	if err := s.flushAppend(ctx, id); err != nil {
		return h, err
	}
	var sc scan
	sc.fixed(h[:])
	if found, err := queryRow(ctx, s.Primary, qBlockHash, []any{id, int64(number)}, sc.dest...); err != nil {
		return h, err
	} else if !found {
		return h, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", number)
	}
	return h, sc.done()
}

// BlockAtTime returns the first stored block of chain stamped at or after
// ts, or the last at or before it (BlockService): the seeks of a datetime
// range (blockSeeks).
func (s *Store) BlockAtTime(ctx context.Context, chain chainquery.Chain, ts int64, after bool) (uint64, bool, error) {
	tx, r, err := s.readChain(ctx, chain)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback()
	firstAtOrAfter, lastAtOrBefore := r.blockSeeks(ctx)
	if after {
		return firstAtOrAfter(ts)
	}
	return lastAtOrBefore(ts)
}

// blockSeeks returns the two questions a datetime range asks of the
// chain's block timestamps, asked on c one statement each
// (BlockAtTime): the first block stamped at or after a unix second, and
// the last at or before one.
func (r reader) blockSeeks(ctx context.Context) (firstAtOrAfter, lastAtOrBefore func(int64) (uint64, bool, error)) {
	seek := func(q string) func(int64) (uint64, bool, error) {
		return func(ts int64) (uint64, bool, error) {
			var n int64
			found, err := queryRow(ctx, r.c, q, []any{r.chain, ts}, &n)
			return uint64(n), found, err
		}
	}
	return seek(qFirstBlockAtOrAfter), seek(qLastBlockAtOrBefore)
}

// historyBounds reads, in one statement, the answers to a range's
// questions of the blocks' timestamps (q, when asks) and the columns cols of
// chain's history row (0 where there is none) into dest: each statement is
// a round trip to PostgreSQL and a statement's work on either store, and
// Filter Traces and Filter Logs over a datetime range asked two or three
// seeks and their bounds in three or four.
func (r reader) historyBounds(ctx context.Context, q chainquery.TimeSeek, asks bool, cols historyCols, dest ...any) (chainquery.TimeBlocks, error) {
	var at chainquery.TimeBlocks
	if !asks {
		_, err := queryRow(ctx, r.c, cols.alone, []any{r.chain}, dest...)
		return at, err
	}
	var from, to, least *int64
	_, err := queryRow(ctx, r.c, cols.seeking, []any{r.chain, q.From, q.To, q.Min}, append([]any{&from, &to, &least}, dest...)...)
	set := func(n *int64, block *uint64, ok *bool) {
		if n != nil {
			*block, *ok = uint64(*n), true
		}
	}
	set(from, &at.From, &at.FromOK)
	set(to, &at.To, &at.ToOK)
	set(least, &at.Min, &at.MinOK)
	return at, err
}

// historyCols are the statements of historyBounds for some columns of
// history: alone, and after the answers of a chainquery.TimeSeek ($2
// From, $3 To, $4 Min; NULL where there is no such block).
type historyCols struct{ alone, seeking string }

// newHistoryCols returns the statements of historyBounds reading cols.
func newHistoryCols(cols ...string) historyCols {
	h := make([]string, len(cols))
	for i, c := range cols {
		h[i] = "coalesce(h." + c + ", 0)"
	}
	return historyCols{
		alone: `SELECT ` + strings.Join(cols, ", ") + ` FROM history WHERE chain = $1`,
		seeking: `SELECT (SELECT number FROM blocks WHERE chain = $1 AND timestamp >= $2 ORDER BY timestamp, number LIMIT 1),
			(SELECT number FROM blocks WHERE chain = $1 AND timestamp <= $3 ORDER BY timestamp DESC, number DESC LIMIT 1),
			(SELECT number FROM blocks WHERE chain = $1 AND timestamp >= $4 ORDER BY timestamp, number LIMIT 1),
			` + strings.Join(h, ", ") + ` FROM (SELECT 1 AS one) AS c LEFT JOIN history h ON h.chain = $1`,
	}
}

// The statements of blocks' headers. FirstBlockAtOrAfter: chain, unix
// seconds → the number of the first block stamped at or after them;
// LastBlockAtOrBefore the last at or before. No row when there is none.
const (
	qFirstBlockAtOrAfter = `SELECT number FROM blocks WHERE chain = $1 AND timestamp >= $2 ORDER BY timestamp, number LIMIT 1`
	qLastBlockAtOrBefore = `SELECT number FROM blocks WHERE chain = $1 AND timestamp <= $2 ORDER BY timestamp DESC, number DESC LIMIT 1`
)

// qBlock: chain, number → hash, parent_hash, timestamp, version,
// logs_bloom, transactions_root, state_root, receipts_root, miner,
// extra_data IS NOT NULL, extra_data, size, gas_limit, gas_used,
// transaction_count, base_fee_per_gas, trace_count.
const qBlock = `SELECT hash, parent_hash, timestamp, version, logs_bloom, transactions_root,
	state_root, receipts_root, miner, extra_data IS NOT NULL, extra_data, size, gas_limit, gas_used,
	transaction_count, base_fee_per_gas, trace_count
	FROM blocks WHERE chain = $1 AND number = $2`

// qBlockTransactions: chain, number → tx_index, hash, from_addr, to_addr,
// value, gas_limit, gas_price, effective_gas_price, max_fee_per_gas,
// max_priority_fee_per_gas, gas_used, cumulative_gas_used, nonce, input,
// type, contract_address, status, log_count, in tx_index order.
const qBlockTransactions = `SELECT tx_index, hash, from_addr, to_addr, value, gas_limit, gas_price,
	effective_gas_price, max_fee_per_gas, max_priority_fee_per_gas, gas_used, cumulative_gas_used, nonce,
	input, type, contract_address, status, log_count
	FROM transactions WHERE chain = $1 AND block_number = $2 ORDER BY tx_index`

// qLatestBlock: chain → the highest number, NULL when none: a backward
// walk of the primary key, which gives number order (max(number) left
// PostgreSQL's planner free to aggregate over every block of the chain in
// blocks_timestamp when the table had no statistics). qBlockHash: chain,
// number → hash.
const (
	qLatestBlock = `SELECT (SELECT number FROM blocks WHERE chain = $1 ORDER BY number DESC LIMIT 1)`
	qBlockHash   = `SELECT hash FROM blocks WHERE chain = $1 AND number = $2`
)

// qRewrites: chain, since → the highest seq of the rewrites log after
// since and the lowest from_height of those rows, both NULL when there is
// none.
const qRewrites = `SELECT max(seq), min(from_height) FROM rewrites WHERE chain = $1 AND seq > $2`
