package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/chainquery/chainquery"
)

// SolanaSource is what the Solana loop reads from a node, decoded; the
// solana package's Source implements it over JSON-RPC.
type SolanaSource interface {
	// Slot returns the node's confirmed slot.
	Slot(ctx context.Context) (uint64, error)

	// Slots returns the slots from..to (inclusive) holding a confirmed
	// block, in order; skipped slots are absent.
	Slots(ctx context.Context, from, to uint64) ([]uint64, error)

	// Blocks returns the blocks at slots (which Slots listed), decoded, in
	// order. It asks again for a block the node does not have yet and fails
	// only when retrying cannot help. The changes carry owners within each
	// block only; the loop carries them across blocks.
	Blocks(ctx context.Context, slots []uint64) ([]*chainquery.SolanaBlock, error)

	// BlockHash returns the blockhash of the block at slot, and ok false
	// when the node has none there (skipped, pruned or not confirmed yet).
	BlockHash(ctx context.Context, slot uint64) (hash string, ok bool, err error)

	// Tokens returns registry entries for those of mints (Mint and Decimals
	// set) whose name and symbol the chain holds. On a failed read it
	// returns what it found before it, and the error.
	Tokens(ctx context.Context, mints []*chainquery.Token) ([]*chainquery.Token, error)
}

// SolanaLoop ingests SPL token balance changes. Each batch of slots is one
// store transaction that also moves the cursor to the batch's last block, so
// what is stored is always a whole prefix of the chain.
//
// The loop also carries token account owners from block to block (see
// carryOwners): the source decodes batches concurrently, and only the loop
// sees the blocks in slot order.
type SolanaLoop struct {
	Store  chainquery.TokenBalanceWriter
	Source SolanaSource
	Logger *slog.Logger

	From         *uint64 // first slot when the store has no cursor; nil: the head when following
	To           *uint64 // last slot; nil: follow (with Follow) or stop at the current head
	Follow       bool
	Concurrency  int           // batches fetched at once
	BatchSlots   int           // blocks per getBlock batch and per store transaction
	Window       uint64        // slots listed per getBlocks call
	PollInterval time.Duration // wait between head checks when caught up
	Metadata     bool          // fill the registry from Metaplex metadata (or the Token-2022 extension) of new mints
	SOL          bool          // write the blocks' SOL balance changes too (the source must be reading them)
	StoreRetry   time.Duration // first wait when the store is unavailable

	Progress *Progress // optional
	Observer Observer  // optional: hears of heads and writes (metrics)

	owners   map[chainquery.PublicKey]chainquery.PublicKey // the last owner seen of each token account
	asked    map[chainquery.PublicKey]bool                 // accounts whose owner the store was asked for
	mints    map[chainquery.PublicKey]bool                 // mints whose metadata was looked up
	patience patience
}

func (e *SolanaLoop) defaults() {
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if e.Observer == nil {
		e.Observer = nopObserver{}
	}
	if e.Concurrency < 1 {
		e.Concurrency = 2
	}
	if e.BatchSlots < 1 {
		e.BatchSlots = 4
	}
	if e.Window == 0 {
		e.Window = 1000
	}
	if e.PollInterval <= 0 {
		e.PollInterval = time.Second
	}
	if e.StoreRetry <= 0 {
		e.StoreRetry = time.Second
	}
	if e.owners == nil {
		e.owners = make(map[chainquery.PublicKey]chainquery.PublicKey)
		e.asked = make(map[chainquery.PublicKey]bool)
		e.mints = make(map[chainquery.PublicKey]bool)
	}
	e.patience = patience{chain: chainquery.Solana, logger: e.Logger, backoff: storeBackoff(e.StoreRetry)}
}

// Run ingests until To is reached, or until ctx ends when following. It
// returns nil when done or stopped by ctx, and an error naming the slot and
// cause when retrying cannot help.
func (e *SolanaLoop) Run(ctx context.Context) (err error) {
	defer func() {
		if pe, ok := err.(*PanicError); ok { // a panic of this goroutine; the fetchers' come wrapped
			err = fmt.Errorf("solana: %w", pe)
		}
	}()
	defer Recover(&err)
	e.defaults()
	next, err := e.start(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("solana: %w", err)
	}
	for ctx.Err() == nil {
		head, err := e.Source.Slot(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("solana: getSlot: %w", err)
		}
		target := head
		if e.To != nil && (!e.Follow || *e.To < target) {
			target = min(*e.To, target)
		}
		if e.Progress != nil {
			e.Progress.SetHead(head, target)
		}
		e.Observer.NodeHead(head)
		if next > target {
			if e.To != nil && next > *e.To {
				e.Logger.Info("ingestion done", "chain", "solana", "last", *e.To)
				return nil
			}
			if !e.Follow && e.To == nil {
				e.Logger.Info("caught up with the node", "chain", "solana", "last", next-1)
				return nil
			}
			if !chainquery.Sleep(ctx, e.PollInterval) {
				break
			}
			continue
		}
		end := min(target, next+e.Window-1)
		slots, err := e.Source.Slots(ctx, next, end)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("solana: getBlocks %d-%d: %w", next, end, err)
		}
		if err := e.ingest(ctx, slots); err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("solana: %w", err)
		}
		next = end + 1
	}
	return nil
}

// start returns the first slot to ingest: after the stored cursor once the
// node's chain is shown to hold it (see checkCursor), else From, else the
// head when following.
func (e *SolanaLoop) start(ctx context.Context) (uint64, error) {
	c, ok, err := e.Store.SolanaCursor(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the cursor: %w", err)
	}
	if ok {
		if err := e.checkCursor(ctx, c); err != nil {
			return 0, err
		}
		e.Logger.Info("resuming after the stored cursor", "chain", "solana", "slot", c.Slot, "blockhash", c.Blockhash)
		e.Observer.StoredHead(c.Slot)
		return c.Slot + 1, nil
	}
	if e.From != nil {
		return *e.From, nil
	}
	if e.Follow {
		head, err := e.Source.Slot(ctx)
		if err != nil {
			return 0, fmt.Errorf("getSlot: %w", err)
		}
		return head, nil
	}
	return 0, errors.New("no start slot: the store has no cursor and no --from-slot was given")
}

// checkCursor returns nil when the node's block at the cursor's slot has the
// cursor's blockhash: the stored history is a prefix of the node's chain and
// ingestion may go on after it. The cursor is always a slot that held a block
// (the last block of a written batch), and blocks are read at commitment
// confirmed, final in practice, so there is no reorg to rewind: any other
// answer stops the run with what to do.
//
//   - Another blockhash: the database was filled from another cluster or
//     fork. Ingesting on would append the node's chain to a foreign history;
//     a fresh database is the remedy.
//   - No block at the slot, and the node's confirmed slot is below it: the
//     node is behind (or another cluster); wait, or use another node.
//   - No block at the slot otherwise: skipped on the node's chain, or pruned
//     by a node without long-term storage. It cannot vouch for the stored
//     history, and a pruning node's getBlocks would also answer the slots
//     after the cursor from its oldest kept block on, skipping the gap
//     without an error. So this stops too, rather than resuming on a
//     warning.
//   - The cursor has no blockhash (stored before blockhashes were recorded):
//     there is nothing to compare. A warning says so and the run resumes;
//     its first write records a blockhash, so the next start is checked.
func (e *SolanaLoop) checkCursor(ctx context.Context, c chainquery.SolanaCursor) error {
	if c.Blockhash == "" {
		e.Logger.Warn("the stored cursor has no blockhash (stored before blockhashes were recorded): resuming without checking that the node's chain holds it",
			"chain", "solana", "slot", c.Slot)
		return nil
	}
	hash, ok, err := e.Source.BlockHash(ctx, c.Slot)
	if err != nil {
		return fmt.Errorf("check the stored cursor (slot %d) against the node: %w", c.Slot, err)
	}
	if !ok {
		head, err := e.Source.Slot(ctx)
		if err != nil {
			return fmt.Errorf("check the stored cursor (slot %d) against the node: getSlot: %w", c.Slot, err)
		}
		if head < c.Slot {
			return fmt.Errorf("the node's confirmed slot %d is behind the stored cursor (slot %d, blockhash %s): "+
				"wait until it catches up, or use a node that is not behind", head, c.Slot, c.Blockhash)
		}
		return fmt.Errorf("the node has no block at slot %d, where the stored cursor has blockhash %s "+
			"(the slot is skipped on the node's chain, or the node no longer keeps it), so it cannot verify that this database holds its chain: "+
			"use a node that keeps slot %d (one with long-term storage), or a fresh database", c.Slot, c.Blockhash, c.Slot)
	}
	if hash != c.Blockhash {
		return fmt.Errorf("the stored cursor is slot %d with blockhash %s, but the node's block at slot %d has blockhash %s: "+
			"this database holds another chain or fork: use a fresh database for this node, or a node of the chain it holds", c.Slot, c.Blockhash, c.Slot, hash)
	}
	return nil
}

// ingest fetches the blocks of slots, BatchSlots to a batch and
// Concurrency batches at a time, and writes them in order, one store
// transaction per batch: a batch is written only after every earlier one.
func (e *SolanaLoop) ingest(ctx context.Context, slots []uint64) error {
	p := pipeline[[]uint64, *chainquery.SolanaBlock]{
		concurrency: e.Concurrency,
		fetch:       e.fetch,
		write: func(ctx context.Context, _ []uint64, blocks []*chainquery.SolanaBlock) error {
			return e.write(ctx, blocks)
		},
	}
	return p.run(ctx, slices.Chunk(slots, e.BatchSlots))
}

// fetch returns the decoded blocks of slots, one per slot: a source that
// answers otherwise must not move the cursor.
func (e *SolanaLoop) fetch(ctx context.Context, slots []uint64) ([]*chainquery.SolanaBlock, error) {
	blocks, err := e.Source.Blocks(ctx, slots)
	if err != nil {
		return nil, err
	}
	if len(blocks) != len(slots) {
		return nil, fmt.Errorf("getBlock: %d blocks for %d slots", len(blocks), len(slots))
	}
	for i, b := range blocks {
		if b == nil || b.Slot != slots[i] {
			return nil, fmt.Errorf("getBlock %d: the source answered another slot", slots[i])
		}
	}
	return blocks, nil
}

// write stores a batch's changes, owners carried in slot order, with the
// cursor at the batch's last block: a slot that getBlocks listed, so the
// cursor always names a block and its blockhash, whatever skipped slots
// follow it.
func (e *SolanaLoop) write(ctx context.Context, blocks []*chainquery.SolanaBlock) error {
	first, last := blocks[0], blocks[len(blocks)-1]
	w := &chainquery.SolanaWrite{Cursor: chainquery.SolanaCursor{Slot: last.Slot, Blockhash: last.Blockhash, BlockTime: last.Time}}
	if e.SOL {
		w.SOL = &chainquery.SOLChanges{First: chainquery.SolanaCursor{Slot: first.Slot, BlockTime: first.Time}}
	}
	for _, b := range blocks {
		if err := e.carryOwners(ctx, b); err != nil {
			return err
		}
		w.Tokens = append(w.Tokens, b.Changes...)
		if w.SOL != nil {
			if b.SOL == nil {
				return fmt.Errorf("slot %d: the source did not read SOL balances", b.Slot)
			}
			w.SOL.Changes = append(w.SOL.Changes, b.SOL...)
		}
	}
	changes := w.Tokens
	began := time.Now()
	err := e.patience.retry(ctx, "WriteSolana", func() error {
		return e.Store.WriteSolana(ctx, w)
	})
	if err != nil {
		return fmt.Errorf("write slots %d-%d: %w", first.Slot, last.Slot, err)
	}
	e.Observer.Written(Write{Blocks: len(blocks), Last: last.Slot, LastTime: last.Time, TokenBalances: len(changes), Duration: time.Since(began)})
	if e.Progress != nil {
		e.Progress.AddRows(uint64(len(blocks)), uint64(len(changes)), last.Slot)
	}
	if e.Metadata {
		e.fillRegistry(ctx, changes)
	}
	return nil
}

// carryOwners gives the changes of b that name no owner (nodes before 2022
// left owners out) the owner of their account seen in an earlier block or,
// asked once per account and run, the one the store holds, so that an owner
// carries across batches and restarts; then it remembers b's owners for the
// blocks after it. It runs in slot order, which the fetchers do not.
func (e *SolanaLoop) carryOwners(ctx context.Context, b *chainquery.SolanaBlock) error {
	for _, c := range b.Changes {
		if c.Owner != nil {
			continue
		}
		owner, known := e.owners[c.Account]
		if !known && !e.asked[c.Account] {
			e.asked[c.Account] = true
			var err error
			if owner, known, err = e.Store.LatestOwner(ctx, c.Account); err != nil {
				return fmt.Errorf("read the owner of %s: %w", c.Account, err)
			}
			if known {
				e.owners[c.Account] = owner
			}
		}
		if known {
			c.Owner = &owner
		}
	}
	maps.Copy(e.owners, b.Owners)
	return nil
}

// fillRegistry looks up the metadata of the mints the run has not seen
// before and stores what it finds. The registry is a convenience: a failure
// is logged and ingestion goes on, and a mint is asked about once per run.
func (e *SolanaLoop) fillRegistry(ctx context.Context, changes []*chainquery.TokenBalanceChange) {
	var mints []*chainquery.Token
	for _, c := range changes {
		if e.mints[c.Mint] {
			continue
		}
		e.mints[c.Mint] = true
		mints = append(mints, &chainquery.Token{Mint: c.Mint, Decimals: c.Decimals})
	}
	if len(mints) == 0 {
		return
	}
	tokens, err := e.Source.Tokens(ctx, mints)
	if err != nil {
		e.Logger.Warn("could not read token metadata", "chain", "solana", "mints", len(mints), "error", err)
	}
	if len(tokens) == 0 {
		return
	}
	if err := e.Store.AddTokens(ctx, tokens); err != nil {
		e.Logger.Warn("could not store token metadata", "chain", "solana", "tokens", len(tokens), "error", err)
	}
}
