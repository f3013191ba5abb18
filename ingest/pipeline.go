package ingest

import (
	"context"
	"iter"
	"time"
)

// pipeline is the ordered fetch-and-write of both loops: batches are fetched
// concurrently and written strictly in order, so that the store always holds
// a whole prefix of the chain and is the cursor.
type pipeline[B, T any] struct {
	// concurrency is the most fetches running at once, and the most
	// batches fetched ahead of the writer: while a group is written, the
	// next batches are fetched (the node stays busy), but no more than that
	// wait decoded in memory. A deeper queue held many more decoded blocks
	// while the writer, slower than the node, worked its way through them
	// (docs/benchmarks.md, "What changed, each from a profile", Ingestion).
	concurrency int

	// widest, when above concurrency, is the most batches in flight: the
	// window widens toward it, a batch at a time, while the writer waits
	// for fetches and spare says the machine has CPU to spare (the node's
	// latency, not decoding, keeps the writer waiting), and narrows back
	// toward concurrency when the writer stops waiting or the CPU is all
	// used. A wider window against a node on the same busy machine only
	// held more answers in memory: 8% more CPU a block than 4
	// (docs/benchmarks.md, issue 30, session 18).
	widest int

	// ahead is how many fetched batches may wait for the writer beyond
	// the window's: fetches start while fewer than the window's run and
	// fewer than the window's and ahead wait to be written. For items that
	// are small once fetched (EVM blocks that the store prepared keep
	// their segments and keys only, ~0.15 MB), so that the fetchers go on
	// while the writer commits; writeFetches says how many.
	ahead int

	// writeFetches, when above 0, is the most fetches running while a
	// write that has run longWrite goes on (a commit), when the window is
	// at its narrowest (the fetchers' CPU, not the node, paces the
	// pipeline). The writer is the pipeline's one serial step, and Go
	// shares the CPUs among runnable goroutines alike: four fetchers
	// decoding on two cores stretched each commit of an append transaction
	// two- or threefold while the fetched batches piled up to the window's
	// end, and a core stood idle for the rest of it (docs/benchmarks.md,
	// issue 30, session 31).
	writeFetches int

	// spare reports whether the machine had CPU to spare since it was last
	// called; nil is always.
	spare func() bool

	// period is how often the window is adjusted; 0 is 200 ms.
	period time.Duration

	// maxGroup, when above 0, lets one write take the batches that have
	// already arrived when the writer gets to them, up to maxGroup items: a
	// commit rewrites every index page it touched, so fewer, larger commits
	// cost less per row. 0 writes each batch on its own.
	maxGroup int

	// fetch returns the items of batch b. It runs on a goroutine of its own;
	// a panic in it comes back from run as a *PanicError.
	fetch func(ctx context.Context, b B) ([]T, error)

	// write stores items, which end with those of batch last. An error
	// stops run, which returns it.
	write func(ctx context.Context, last B, items []T) error

	// fail, when set, names the batch in a fetch's error (panics included).
	fail func(b B, err error) error
}

// longWrite is how long a write runs before writeFetches applies: the
// append of a batch takes milliseconds, a commit of an append transaction
// hundreds.
const longWrite = 50 * time.Millisecond

// fetched is one batch's fetch result.
type fetched[B, T any] struct {
	batch B
	items []T
	err   error
}

// run fetches and writes batches in order. It returns the first error of a
// fetch (in batch order) or of write, ctx's error when ctx ends while the
// writer waits, and nil when every batch is written or the producer stopped
// because ctx ended.
func (p *pipeline[B, T]) run(ctx context.Context, batches iter.Seq[B]) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := newWindow(max(p.concurrency, 1), p.widest, p.spare, p.period)
	w.ahead, w.writeFetches = max(p.ahead, 0), p.writeFetches
	queue := make(chan chan fetched[B, T], w.widest+w.ahead)
	go func() {
		defer close(queue)
		for b := range batches {
			if !w.enter(ctx) {
				return
			}
			ch := make(chan fetched[B, T], 1)
			select {
			case queue <- ch:
			case <-ctx.Done():
				return
			}
			go func() {
				f := fetched[B, T]{batch: b}
				defer func() { ch <- f }()
				f.items, f.err = p.safeFetch(ctx, b)
				w.fetched()
			}()
		}
	}()

	var held chan fetched[B, T] // the next batch, taken from the queue but not written yet
	for {
		ch := held
		held = nil
		if ch == nil {
			var ok bool
			if ch, ok = <-queue; !ok {
				return nil
			}
			w.taken()
		}
		var f fetched[B, T]
		waitFrom := time.Now()
		select {
		case f = <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		w.waited(time.Since(waitFrom))
		if f.err != nil {
			return p.failed(f)
		}
		items, last := f.items, f.batch
	group:
		for p.maxGroup > 0 && len(items) < p.maxGroup {
			select {
			case more, ok := <-queue:
				if !ok {
					break group
				}
				w.taken()
				select {
				case g := <-more:
					if g.err != nil {
						held = more
						more <- g // handled on the next turn, after this group is written
						break group
					}
					items, last = append(items, g.items...), g.batch
				default:
					held = more
					break group
				}
			default:
				break group
			}
		}
		if err := p.timedWrite(ctx, w, last, items); err != nil {
			return err
		}
	}
}

// timedWrite is write, telling w when it has run longWrite (when there is a
// limit to apply then).
func (p *pipeline[B, T]) timedWrite(ctx context.Context, w *window, last B, items []T) error {
	if w.writeFetches <= 0 {
		return p.write(ctx, last, items)
	}
	long := time.AfterFunc(longWrite, w.beginWrite())
	defer func() {
		long.Stop()
		w.endWrite()
	}()
	return p.write(ctx, last, items)
}

// safeFetch is fetch with its panics turned into errors: a decoder's panic
// stops this ingester, not the process.
func (p *pipeline[B, T]) safeFetch(ctx context.Context, b B) (items []T, err error) {
	defer Recover(&err)
	return p.fetch(ctx, b)
}

func (p *pipeline[B, T]) failed(f fetched[B, T]) error {
	if p.fail == nil {
		return f.err
	}
	return p.fail(f.batch, f.err)
}
