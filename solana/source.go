package solana

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/chainquery/chainquery"
)

// Source reads what the Solana ingester stores from a node, decoded into
// domain records: the slots holding blocks, each block's token balance
// changes, blockhash and time, and the registry entries of mints. It
// implements ingest.SolanaSource. Its methods are safe for concurrent use.
type Source struct {
	Client *Client
	Logger *slog.Logger

	// A block that getBlocks listed but getBlock answers null for (the node
	// is not there yet, or a load balancer reached one that is behind) is
	// asked again up to NullRetries times, waiting NullWait first and
	// doubling up to 30 s. It is never taken for an empty block.
	NullRetries int
	NullWait    time.Duration

	// SOL makes Blocks read each block's rewards and return its SOL
	// balance changes (SolanaBlock.SOL) besides its token balance changes.
	SOL bool
}

// NewSource returns a source reading from c with default patience for null
// blocks: eight more asks over about two minutes. logger may be nil.
func NewSource(c *Client, logger *slog.Logger) *Source {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Source{Client: c, Logger: logger, NullRetries: 8, NullWait: 500 * time.Millisecond}
}

// Slot returns the node's confirmed slot.
func (s *Source) Slot(ctx context.Context) (uint64, error) { return s.Client.Slot(ctx) }

// Slots returns the slots from..to (inclusive) holding a confirmed block, in
// order; skipped slots are absent.
func (s *Source) Slots(ctx context.Context, from, to uint64) ([]uint64, error) {
	return s.Client.Blocks(ctx, from, to)
}

// BlockHash returns the blockhash of the block at slot, and ok false when
// the node has none there (see Client.BlockHash).
func (s *Source) BlockHash(ctx context.Context, slot uint64) (string, bool, error) {
	return s.Client.BlockHash(ctx, slot)
}

// Blocks returns the blocks at slots, decoded, in order. Every slot must
// hold a block (getBlocks listed it): a null answer is asked again (see
// NullRetries), and an error says which slot failed and why.
//
// The changes of each block carry owners within the block only (see
// chainquery.SolanaBlock): blocks are decoded concurrently, so carrying
// owners across blocks is left to the caller, who sees them in slot order.
func (s *Source) Blocks(ctx context.Context, slots []uint64) ([]*chainquery.SolanaBlock, error) {
	raws, err := s.Client.RawBlocks(ctx, slots, s.SOL)
	if err != nil {
		return nil, err
	}
	retries, wait := s.NullRetries, chainquery.Backoff{Min: s.NullWait, Max: 30 * time.Second}
	if retries < 1 {
		retries = 8
	}
	if wait.Min <= 0 {
		wait.Min = 500 * time.Millisecond
	}
	for attempt := 1; ; attempt++ {
		var missing []int
		for i, r := range raws {
			if len(r) == 0 || string(r) == "null" {
				missing = append(missing, i)
			}
		}
		if len(missing) == 0 {
			break
		}
		if attempt > retries {
			return nil, fmt.Errorf("getBlock %d: the node listed the slot but returned no block %d times", slots[missing[0]], attempt)
		}
		s.logger().Warn("node returned no block for a listed slot, retrying", "chain", "solana", "slot", slots[missing[0]], "missing", len(missing), "attempt", attempt)
		if !chainquery.Sleep(ctx, wait.Next(attempt)) {
			return nil, ctx.Err()
		}
		again := make([]uint64, len(missing))
		for j, i := range missing {
			again[j] = slots[i]
		}
		res, err := s.Client.RawBlocks(ctx, again, s.SOL)
		if err != nil {
			return nil, err
		}
		for j, i := range missing {
			raws[i] = res[j]
		}
	}
	out := make([]*chainquery.SolanaBlock, len(raws))
	for i, raw := range raws {
		b, err := DecodeBlock(raw)
		if err != nil {
			return nil, fmt.Errorf("getBlock %d: %w", slots[i], err)
		}
		x := NewExtractor()
		changes, err := x.Changes(b, slots[i])
		if err != nil {
			return nil, err
		}
		out[i] = &chainquery.SolanaBlock{Slot: slots[i], Blockhash: b.Blockhash, Time: b.Time(), Changes: changes, Owners: x.owners}
		if s.SOL {
			if out[i].SOL, err = SOLChanges(b, slots[i]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Tokens returns registry entries for those of mints whose metadata the
// chain holds: the Metaplex metadata account of the mint, else the
// TokenMetadata extension of a Token-2022 mint. mints holds one entry per
// mint with Mint and Decimals set (the metadata does not say the decimals;
// the balances do); the entries returned copy them and add Name and Symbol.
// Metadata that does not decode is logged at debug level and skipped. When
// a read fails, Tokens returns what it found before it with the error.
func (s *Source) Tokens(ctx context.Context, mints []*chainquery.Token) ([]*chainquery.Token, error) {
	var known, pdas []chainquery.PublicKey
	decimals := make(map[chainquery.PublicKey]int, len(mints))
	for _, t := range mints {
		pda, _, err := MetadataAddress(t.Mint)
		if err != nil {
			continue
		}
		decimals[t.Mint] = t.Decimals
		known, pdas = append(known, t.Mint), append(pdas, pda)
	}
	if len(pdas) == 0 {
		return nil, nil
	}
	datas, err := s.Client.Accounts(ctx, pdas)
	if err != nil {
		return nil, fmt.Errorf("read the metadata accounts of %d mints: %w", len(known), err)
	}
	var tokens []*chainquery.Token
	var bare []chainquery.PublicKey // mints without Metaplex metadata
	for i, d := range datas {
		if d == nil {
			bare = append(bare, known[i])
			continue
		}
		m, err := DecodeMetadata(d)
		if err != nil || m.Mint != known[i] {
			s.logger().Debug("unusable token metadata", "chain", "solana", "mint", known[i], "error", err)
			continue
		}
		tokens = append(tokens, &chainquery.Token{Mint: m.Mint, Name: m.Name, Symbol: m.Symbol, Decimals: decimals[m.Mint]})
	}
	more, err := s.token2022Tokens(ctx, bare, decimals)
	return append(tokens, more...), err
}

// token2022Tokens reads the mint accounts of mints and returns the tokens
// that the TokenMetadata extension of Token-2022 mints names. Metaplex
// metadata wins, so Tokens passes only mints without it.
func (s *Source) token2022Tokens(ctx context.Context, mints []chainquery.PublicKey, decimals map[chainquery.PublicKey]int) ([]*chainquery.Token, error) {
	if len(mints) == 0 {
		return nil, nil
	}
	accts, err := s.Client.OwnedAccounts(ctx, mints)
	if err != nil {
		return nil, fmt.Errorf("read %d token mints: %w", len(mints), err)
	}
	var tokens []*chainquery.Token
	for i, a := range accts {
		if a == nil || a.Owner != Token2022Program {
			continue
		}
		m, ok, err := DecodeTokenMetadataExtension(a.Data)
		if err != nil || (ok && m.Mint != mints[i]) {
			s.logger().Debug("unusable token metadata extension", "chain", "solana", "mint", mints[i], "error", err)
			continue
		}
		if ok {
			tokens = append(tokens, &chainquery.Token{Mint: mints[i], Name: m.Name, Symbol: m.Symbol, Decimals: decimals[mints[i]]})
		}
	}
	return tokens, nil
}

func (s *Source) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}
