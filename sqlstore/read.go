package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
)

// The reads of the SQL stores: SQLStore's methods of BlockService,
// ReceiptService, LogService, TokenBalanceService, APIKeyService and the
// reads of the writers. FindTraces is in trace.go.

// FindBlock returns the block at number, with its transactions when full is
// set. It returns ENOTFOUND if the block is not indexed.
func (s *SQLStore) FindBlock(ctx context.Context, chain chainquery.Chain, number uint64, full bool) (*chainquery.Block, error) {
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
		txs, found, err := s.historyTransactions(ctx, tx, id, number, b.Version)
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

func (s *SQLStore) findBlock(ctx context.Context, c StoreConn, chain chainquery.Chain, id int64, number uint64) (*chainquery.Block, error) {
	b := &chainquery.Block{Chain: chain, Number: number}
	var extra []byte
	var hasExtra bool
	var sc scan
	sc.fixed(b.Hash[:]).fixed(b.ParentHash[:]).to(&b.Timestamp, &b.Version, &b.LogsBloom).
		fixed(b.TransactionsRoot[:]).fixed(b.StateRoot[:]).fixed(b.ReceiptsRoot[:]).fixed(b.Miner[:]).
		to(&hasExtra, &extra).counter(&b.Size).counter(&b.GasLimit).counter(&b.GasUsed).
		to(&b.TransactionCount, s.ScanAmount(&b.BaseFeePerGas), &b.TraceCount)
	if found, err := queryRow(ctx, c, s.SQL.Block, []any{id, int64(number)}, sc.dest...); err != nil {
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

func (s *SQLStore) findTransactions(ctx context.Context, c StoreConn, id int64, b *chainquery.Block) ([]*chainquery.Transaction, error) {
	t := chainquery.Transaction{BlockNumber: b.Number, Timestamp: b.Timestamp}
	return queryRows(ctx, c, s.SQL.BlockTransactions, []any{id, int64(b.Number)}, s.txScan(&scan{}, &t), &t)
}

// LatestBlock returns the highest indexed block number of chain. It returns
// ENOTFOUND if nothing is indexed. Blocks are written whole in one
// transaction, so the highest one is always complete.
func (s *SQLStore) LatestBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	return s.latestBlock(ctx, s.Read, chain)
}

// HeadBlock is LatestBlock read on the primary: what an ingester resumes
// from must not lag behind what it wrote.
func (s *SQLStore) HeadBlock(ctx context.Context, chain chainquery.Chain) (uint64, error) {
	return s.latestBlock(ctx, s.Primary, chain)
}

// Rewrites reports the rewrites of chain's stored blocks after the mark
// since (BlockService).
func (s *SQLStore) Rewrites(ctx context.Context, chain chainquery.Chain, since uint64) (mark, lowest uint64, err error) {
	id, err := storeChainID(chain)
	if err != nil {
		return 0, 0, err
	}
	var last, low *int64
	if _, err := queryRow(ctx, s.Read, s.SQL.Rewrites, []any{id, int64(since)}, &last, &low); err != nil {
		return 0, 0, err
	} else if last == nil {
		return since, chainquery.NoRewrite, nil
	}
	return uint64(*last), uint64(*low), nil
}

func (s *SQLStore) latestBlock(ctx context.Context, c StoreConn, chain chainquery.Chain) (uint64, error) {
	id, err := storeChainID(chain)
	if err != nil {
		return 0, err
	}
	var n *int64
	if _, err := queryRow(ctx, c, s.SQL.LatestBlock, []any{id}, &n); err != nil {
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
// a reorg that is not there.
func (s *SQLStore) BlockHash(ctx context.Context, chain chainquery.Chain, number uint64) (chainquery.Hash, error) {
	var h chainquery.Hash
	id, err := storeChainID(chain)
	if err != nil {
		return h, err
	}
	var sc scan
	sc.fixed(h[:])
	if found, err := queryRow(ctx, s.Primary, s.SQL.BlockHash, []any{id, int64(number)}, sc.dest...); err != nil {
		return h, err
	} else if !found {
		return h, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", number)
	}
	return h, sc.done()
}

// FindBlockReceipts returns one page of the block's receipts in
// transaction_index order and the block's receipt count. It returns
// ENOTFOUND if the block is not indexed.
//
// The block and its page come from one statement, so no read transaction
// is needed (on PostgreSQL a transaction costs two more round trips); only
// an empty page asks again which of "no such block" and "past the end" it
// is.
func (s *SQLStore) FindBlockReceipts(ctx context.Context, f chainquery.ReceiptFilter) ([]*chainquery.Receipt, int, error) {
	out, count, err := s.findBlockReceipts(ctx, f)
	if errors.Is(err, errHistoryMoved) {
		// The block's transactions moved from history back to rows
		// between two of its statements (a rewind below the boundary):
		// the rows answer now.
		return s.findBlockReceipts(ctx, f)
	}
	return out, count, err
}

func (s *SQLStore) findBlockReceipts(ctx context.Context, f chainquery.ReceiptFilter) ([]*chainquery.Receipt, int, error) {
	id, err := storeChainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	r := chainquery.Receipt{BlockNumber: f.BlockNumber}
	var count int
	var sc scan
	sc.to(&r.Timestamp, &count).to(&r.TransactionIndex).fixed(r.TransactionHash[:]).counter(&r.CumulativeGasUsed).
		counter(&r.GasUsed).address(&r.ContractAddress).to(&r.Status, s.ScanAmount(&r.EffectiveGasPrice))
	out, err := queryRows(ctx, s.Read, s.SQL.ReceiptBlockPage, []any{id, int64(f.BlockNumber), f.Limit, f.Offset}, &sc, &r)
	if err != nil || len(out) > 0 {
		return out, count, err
	}
	var version int
	if found, err := queryRow(ctx, s.Read, s.SQL.ReceiptBlock, []any{id, int64(f.BlockNumber)}, &r.Timestamp, &count, &version); err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, chainquery.Errorf(chainquery.ENOTFOUND, "block %d is not indexed", f.BlockNumber)
	}
	if f.Offset >= count { // past the end
		return out, count, nil
	}
	// The block's transactions are history.
	txs, found, err := s.historyTransactions(ctx, s.Read, id, f.BlockNumber, version)
	if err != nil {
		return nil, 0, err
	} else if !found {
		return nil, 0, errHistoryMoved
	}
	for _, t := range txs[min(f.Offset, len(txs)):min(f.Offset+f.Limit, len(txs))] {
		rc := t.Receipt()
		rc.BlockNumber, rc.Timestamp = f.BlockNumber, r.Timestamp
		out = append(out, rc)
	}
	return out, count, nil
}

// FindTransactionLogs returns one page of the transaction's logs in
// log_index order and its log count. It returns ENOTFOUND if the
// transaction is not indexed (in f.BlockNumber, when given).
//
// Where the dialect has LogTransactionPage, one statement answers unless the
// page is empty, as in FindBlockReceipts; otherwise, and for an empty page,
// the transaction and then its page are read in one read transaction.
func (s *SQLStore) FindTransactionLogs(ctx context.Context, f chainquery.LogFilter) ([]*chainquery.Log, int, error) {
	id, err := storeChainID(f.Chain)
	if err != nil {
		return nil, 0, err
	}
	l := chainquery.Log{TransactionHash: f.TransactionHash}
	var count int
	var head, page scan
	head.counter(&l.BlockNumber).to(&l.TransactionIndex).fixed(l.TransactionFrom[:]).address(&l.TransactionTo).
		to(&count, &l.Timestamp)
	logScan(&page, &l)
	if s.SQL.LogTransactionPage != nil {
		both := scan{dest: slices.Concat(head.dest, page.dest), post: slices.Concat(head.post, page.post)}
		q, args := s.SQL.LogTransactionPage(id, f.TransactionHash, f.BlockNumber, f.Limit, f.Offset)
		if out, err := queryRows(ctx, s.Read, q, args, &both, &l); err != nil || len(out) > 0 {
			return out, count, err
		}
	}

	tx, err := s.ReadTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	q, args := s.SQL.LogTransaction(id, f.TransactionHash, f.BlockNumber)
	if found, err := queryRow(ctx, tx, q, args, head.dest...); err != nil {
		return nil, 0, err
	} else if !found {
		if out, count, err := s.historyLogPage(ctx, tx, id, f); err != nil || out != nil {
			return out, count, err
		}
		where := ""
		if f.BlockNumber != nil {
			where = fmt.Sprintf(" in block %d", *f.BlockNumber)
		}
		return nil, 0, chainquery.Errorf(chainquery.ENOTFOUND, "transaction %s is not indexed on %s%s", f.TransactionHash.Hex(), f.Chain, where)
	}
	if err := head.done(); err != nil {
		return nil, 0, err
	}
	args = []any{id, int64(l.BlockNumber), l.TransactionIndex, f.Limit, f.Offset}
	out, err := queryRows(ctx, tx, s.SQL.LogPage, args, &page, &l)
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// historyLogPage returns the page of f's logs when its transaction is in
// history; nil when it is not there either.
func (s *SQLStore) historyLogPage(ctx context.Context, c StoreConn, chain int64, f chainquery.LogFilter) ([]*chainquery.Log, int, error) {
	t, logs, err := s.historyTxLogs(ctx, c, chain, f.TransactionHash, f.BlockNumber)
	if err != nil || t == nil {
		return nil, 0, err
	}
	out := []*chainquery.Log{}
	for _, l := range logs[min(f.Offset, len(logs)):min(f.Offset+f.Limit, len(logs))] {
		l.Timestamp, l.TransactionHash, l.TransactionFrom, l.TransactionTo = t.Timestamp, t.Hash, t.From, t.To
		if len(l.Topics) == 0 {
			l.Topics = nil // as rows give it
		}
		out = append(out, l)
	}
	return out, t.LogCount, nil
}

// FindTokenBalance returns the account's latest balance change at or before
// f.At. It returns ENOTFOUND if f.At is later than the indexed history or if
// the account has no change at or before f.At.
func (s *SQLStore) FindTokenBalance(ctx context.Context, f chainquery.TokenBalanceFilter) (*chainquery.TokenBalance, error) {
	b := &chainquery.TokenBalance{AsOf: f.At, Account: f.Account}
	var upTo, blockTime int64
	var found bool
	var owner []byte
	var amount *big.Int
	var name, symbol *string
	var sc scan
	sc.to(&upTo, &found, &owner).fixed(b.Mint[:]).to(s.ScanAmount(&amount), &b.Decimals, &blockTime).
		counter(&b.Slot).to(&name, &symbol)
	args := []any{f.Account[:], f.At.UnixMilli(), f.IncludeMetadata}
	if ok, err := queryRow(ctx, s.Read, s.SQL.TokenBalance, args, sc.dest...); err != nil {
		return nil, err
	} else if !ok {
		return nil, chainquery.IndexedUpToError(time.Time{})
	} else if f.At.UnixMilli() > upTo {
		return nil, chainquery.IndexedUpToError(time.UnixMilli(upTo))
	} else if !found {
		return nil, chainquery.NoBalanceError(f.Account)
	}
	if err := sc.done(); err != nil {
		return nil, err
	}
	if amount == nil || !amount.IsUint64() {
		return nil, fmt.Errorf("stored token amount %v is not a uint64", amount)
	}
	b.Amount, b.LastUpdated = amount.Uint64(), time.UnixMilli(blockTime).UTC()
	if owner != nil {
		b.Owner = new(chainquery.PublicKey)
		if err := fixedBytes(b.Owner[:], owner); err != nil {
			return nil, err
		}
	}
	if f.IncludeMetadata && name != nil {
		b.TokenName, b.TokenSymbol = name, symbol
	}
	return b, nil
}

// SolanaCursor returns the cursor WriteTokenBalances last recorded, with an
// empty Blockhash when it was stored before hashes were. It reads the
// primary: a resuming ingester must not trust a lagging replica.
func (s *SQLStore) SolanaCursor(ctx context.Context) (chainquery.SolanaCursor, bool, error) {
	var c chainquery.SolanaCursor
	var blockTime int64
	var hash *string
	var sc scan
	sc.counter(&c.Slot).to(&blockTime, &hash)
	if found, err := queryRow(ctx, s.Primary, s.SQL.SolanaCursor, nil, sc.dest...); err != nil || !found {
		return chainquery.SolanaCursor{}, false, err
	}
	if err := sc.done(); err != nil {
		return chainquery.SolanaCursor{}, false, err
	}
	c.BlockTime = time.UnixMilli(blockTime).UTC()
	if hash != nil {
		c.Blockhash = *hash
	}
	return c, true, nil
}

// LatestOwner returns the owner of account's latest change that names one,
// read on the primary for the same reason.
func (s *SQLStore) LatestOwner(ctx context.Context, account chainquery.PublicKey) (chainquery.PublicKey, bool, error) {
	var owner chainquery.PublicKey
	var sc scan
	sc.fixed(owner[:])
	if found, err := queryRow(ctx, s.Primary, s.SQL.LatestOwner, []any{account[:]}, sc.dest...); err != nil || !found {
		return chainquery.PublicKey{}, false, err
	}
	if err := sc.done(); err != nil {
		return chainquery.PublicKey{}, false, err
	}
	return owner, true, nil
}

// CreateAPIKey stores k. It returns ECONFLICT if a key of that name exists
// and EINVALID if a limit is invalid.
func (s *SQLStore) CreateAPIKey(ctx context.Context, k *chainquery.APIKey) error {
	if err := k.Limits.Validate(); err != nil {
		return err
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now().UTC().Truncate(time.Millisecond)
	}
	l := k.Limits
	n, err := s.Write.Exec(ctx, s.SQL.CreateAPIKey, k.Name, k.Hash[:], joinEndpoints(k.Endpoints), k.CreatedAt.UnixMilli(),
		l.Rate, l.Burst, l.CostRate, l.CostBurst, l.Concurrency)
	if err != nil {
		return err
	} else if n == 0 {
		return chainquery.Errorf(chainquery.ECONFLICT, "an API key named %q already exists", k.Name)
	}
	return nil
}

// FindAPIKeyByHash returns the key whose hash is hash. It returns ENOTFOUND
// if there is none.
func (s *SQLStore) FindAPIKeyByHash(ctx context.Context, hash [32]byte) (*chainquery.APIKey, error) {
	var k *chainquery.APIKey
	if err := s.queryAPIKeys(ctx, s.Read, s.SQL.APIKeyByHash, []any{hash[:]}, func(row *chainquery.APIKey) { k = row }); err != nil {
		return nil, err
	} else if k == nil {
		return nil, chainquery.Errorf(chainquery.ENOTFOUND, "API key not found")
	}
	return k, nil
}

// ListAPIKeys returns every key, ordered by name.
func (s *SQLStore) ListAPIKeys(ctx context.Context) ([]*chainquery.APIKey, error) {
	out := []*chainquery.APIKey{}
	if err := s.queryAPIKeys(ctx, s.Read, s.SQL.APIKeys, nil, func(k *chainquery.APIKey) { out = append(out, k) }); err != nil {
		return nil, err
	}
	return out, nil
}

// queryAPIKeys runs a statement of API key rows on c and calls keep with
// each.
func (s *SQLStore) queryAPIKeys(ctx context.Context, c StoreConn, query string, args []any, keep func(*chainquery.APIKey)) error {
	var k chainquery.APIKey
	var endpoints string
	var created int64
	var sc scan
	l := &k.Limits
	sc.to(&k.Name).fixed(k.Hash[:]).to(&endpoints, &created, &l.Rate, &l.Burst, &l.CostRate, &l.CostBurst, &l.Concurrency)
	return c.Query(ctx, query, args, sc.dest, sc.each(func() error {
		row := k
		row.CreatedAt, row.Endpoints = time.UnixMilli(created).UTC(), nil
		if endpoints != "" {
			for _, e := range strings.Split(endpoints, ",") {
				row.Endpoints = append(row.Endpoints, chainquery.Endpoint(e))
			}
		}
		keep(&row)
		return nil
	}))
}

// RevokeAPIKey deletes the key called name. It returns ENOTFOUND if there
// is none.
func (s *SQLStore) RevokeAPIKey(ctx context.Context, name string) error {
	if n, err := s.Write.Exec(ctx, s.SQL.RevokeAPIKey, name); err != nil {
		return err
	} else if n == 0 {
		return chainquery.Errorf(chainquery.ENOTFOUND, "no API key is named %q", name)
	}
	return nil
}

// UpdateAPIKey changes the fields of the key called name that update sets
// and returns the key as it now is, in one statement on the write side (a
// replica may not have the change yet). It returns ENOTFOUND if there is
// none and EINVALID if a limit set is invalid.
func (s *SQLStore) UpdateAPIKey(ctx context.Context, name string, update chainquery.APIKeyUpdate) (*chainquery.APIKey, error) {
	if err := update.Validate(); err != nil {
		return nil, err
	}
	var endpoints any
	if update.Endpoints != nil {
		endpoints = joinEndpoints(*update.Endpoints)
	}
	args := []any{name, endpoints, nullable(update.Rate), nullable(update.Burst),
		nullable(update.CostRate), nullable(update.CostBurst), nullable(update.Concurrency)}
	var k *chainquery.APIKey
	if err := s.queryAPIKeys(ctx, s.Write, s.SQL.UpdateAPIKey, args, func(row *chainquery.APIKey) { k = row }); err != nil {
		return nil, err
	} else if k == nil {
		return nil, chainquery.Errorf(chainquery.ENOTFOUND, "no API key is named %q", name)
	}
	return k, nil
}

// joinEndpoints returns endpoints as stored: their names, comma-separated.
func joinEndpoints(endpoints []chainquery.Endpoint) string {
	names := make([]string, len(endpoints))
	for i, e := range endpoints {
		names[i] = string(e)
	}
	return strings.Join(names, ",")
}

// nullable returns *p as an argument, or nil (NULL) for a nil p.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// BlockAtTime returns the first stored block of chain stamped at or after
// ts, or the last at or before it (BlockService): the seeks of a datetime
// range (blockSeeks).
func (s *SQLStore) BlockAtTime(ctx context.Context, chain chainquery.Chain, ts int64, after bool) (uint64, bool, error) {
	tx, id, err := s.chainTx(ctx, chain)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback()
	firstAtOrAfter, lastAtOrBefore := s.blockSeeks(ctx, tx, id)
	if after {
		return firstAtOrAfter(ts)
	}
	return lastAtOrBefore(ts)
}
