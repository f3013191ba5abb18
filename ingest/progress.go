package ingest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/chainquery/chainquery"
)

// Progress counts what an ingester wrote and shows it: as one line redrawn in
// place on a terminal, as periodic log lines otherwise.
type Progress struct {
	Chain string

	mu      sync.Mutex
	start   time.Time
	blocks  uint64
	rows    uint64
	last    uint64 // highest block written
	head    uint64 // node head
	target  uint64 // where this run is going
	reorgs  int
	started bool
	waiting string // what the ingester waits for, when it waits
}

// Add records a batch of written blocks.
func (p *Progress) Add(blocks []*chainquery.BlockData) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.begin()
	for _, b := range blocks {
		p.blocks++
		txs, logs, traces := b.Counts()
		p.rows += uint64(1 + txs + logs + traces)
		p.last = max(p.last, b.Block.Number)
	}
}

// AddRows records rows written outside blocks (Solana token balances).
func (p *Progress) AddRows(blocks, rows, last uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.begin()
	p.blocks += blocks
	p.rows += rows
	p.last = max(p.last, last)
}

// SetHead records the node's head and the run's target.
func (p *Progress) SetHead(head, target uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.head, p.target = head, target
}

// Wait records what the ingester waits for ("waiting for block N to have
// 128 confirmations (node head H)"), or "" when it no longer waits.
func (p *Progress) Wait(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting = why
}

// Reorg records a rewind.
func (p *Progress) Reorg(depth uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reorgs++
}

func (p *Progress) begin() {
	if !p.started {
		p.start, p.started = time.Now(), true
	}
}

// Snapshot is what Progress knows at one moment.
type Snapshot struct {
	Blocks, Rows           uint64
	Last, Head, Target     uint64
	BlocksPerSec, RowsPerS float64
	Lag                    int64
	ETA                    time.Duration // 0 when unknown or done
	Reorgs                 int
	Waiting                string // what the ingester waits for, if it waits
}

// Snapshot returns the current counts and rates.
func (p *Progress) Snapshot() Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Snapshot{Blocks: p.blocks, Rows: p.rows, Last: p.last, Head: p.head, Target: p.target, Reorgs: p.reorgs, Waiting: p.waiting}
	if p.started {
		if secs := time.Since(p.start).Seconds(); secs > 0 {
			s.BlocksPerSec, s.RowsPerS = float64(p.blocks)/secs, float64(p.rows)/secs
		}
	}
	if p.head > 0 {
		s.Lag = int64(p.head) - int64(p.last)
	}
	if s.BlocksPerSec > 0 && p.target > p.last {
		s.ETA = time.Duration(float64(p.target-p.last) / s.BlocksPerSec * float64(time.Second)).Round(time.Second)
	}
	return s
}

func (s Snapshot) String() string {
	eta := "-"
	if s.ETA > 0 {
		eta = s.ETA.String()
	}
	line := fmt.Sprintf("block %d  head %d  lag %d  %.1f blocks/s  %.0f rows/s  %d blocks  %d rows  reorgs %d  eta %s",
		s.Last, s.Head, s.Lag, s.BlocksPerSec, s.RowsPerS, s.Blocks, s.Rows, s.Reorgs, eta)
	if s.Waiting != "" {
		line += "  " + s.Waiting
	}
	return line
}

// Show reports progress every interval until ctx ends: redrawn in place on w
// when tty is set, else as log lines.
func (p *Progress) Show(ctx context.Context, w io.Writer, tty bool, logger *slog.Logger, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if tty {
				fmt.Fprintf(w, "\r\033[K%s %s\n", p.Chain, p.Snapshot())
			}
			return
		case <-t.C:
			s := p.Snapshot()
			if tty {
				fmt.Fprintf(w, "\r\033[K%s %s", p.Chain, s)
			} else {
				attrs := []any{"chain", p.Chain, "block", s.Last, "head", s.Head, "lag", s.Lag,
					"blocks_per_s", fmt.Sprintf("%.1f", s.BlocksPerSec), "rows_per_s", fmt.Sprintf("%.0f", s.RowsPerS),
					"blocks", s.Blocks, "rows", s.Rows, "reorgs", s.Reorgs, "eta", s.ETA}
				if s.Waiting != "" {
					attrs = append(attrs, "waiting", s.Waiting)
				}
				logger.Info("progress", attrs...)
			}
		}
	}
}
