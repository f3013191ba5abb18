package ingest

// An internal test: the pipeline is unexported, and the loops' tests cannot
// steer the order in which fetches finish.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// collect runs p over batches 0..n-1 and returns each write's items.
func collect(t *testing.T, p pipeline[int, int], n int) ([][]int, error) {
	t.Helper()
	var writes [][]int
	p.write = func(ctx context.Context, last int, items []int) error {
		if items[len(items)-1] != last {
			t.Errorf("write of %v says its last batch is %d", items, last)
		}
		writes = append(writes, slices.Clone(items))
		return nil
	}
	err := p.run(context.Background(), func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	})
	return writes, err
}

func TestPipeline(t *testing.T) {
	t.Run("InOrder", func(t *testing.T) {
		// Later batches finish first; the writes come in batch order, one
		// batch each without grouping.
		p := pipeline[int, int]{concurrency: 4, fetch: func(ctx context.Context, b int) ([]int, error) {
			time.Sleep(time.Duration(20-b) * time.Millisecond / 4)
			return []int{b}, nil
		}}
		writes, err := collect(t, p, 20)
		if err != nil {
			t.Fatal(err)
		}
		if len(writes) != 20 {
			t.Fatalf("%d writes, want 20: %v", len(writes), writes)
		}
		for i, w := range writes {
			if len(w) != 1 || w[0] != i {
				t.Fatalf("write %d is %v", i, w)
			}
		}
	})
	t.Run("Groups", func(t *testing.T) {
		// Batch 0 arrives last: the batches already there when it is
		// written join it, up to maxGroup items.
		var wg sync.WaitGroup
		wg.Add(7)
		p := pipeline[int, int]{concurrency: 8, maxGroup: 3, fetch: func(ctx context.Context, b int) ([]int, error) {
			if b == 0 {
				wg.Wait()
				time.Sleep(50 * time.Millisecond) // their results are sent after they return
			} else {
				defer wg.Done()
			}
			return []int{b}, nil
		}}
		writes, err := collect(t, p, 8)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(slices.Concat(writes...), []int{0, 1, 2, 3, 4, 5, 6, 7}) {
			t.Fatalf("writes %v", writes)
		}
		if len(writes[0]) != 3 {
			t.Errorf("first write %v, want the three arrived batches 0-2", writes[0])
		}
		for _, w := range writes {
			if len(w) > 3 {
				t.Errorf("write %v holds more than maxGroup items", w)
			}
		}
	})
	t.Run("ErrFetch", func(t *testing.T) {
		// The batches before the failed one are written, grouped or not;
		// nothing after it is.
		for _, group := range []int{0, 100} {
			p := pipeline[int, int]{concurrency: 4, maxGroup: group,
				fetch: func(ctx context.Context, b int) ([]int, error) {
					if b == 3 {
						return nil, errors.New("node says no")
					}
					return []int{b}, nil
				},
				fail: func(b int, err error) error { return fmt.Errorf("batch %d: %w", b, err) },
			}
			writes, err := collect(t, p, 10)
			if err == nil || err.Error() != "batch 3: node says no" {
				t.Fatalf("maxGroup %d: err = %v", group, err)
			}
			if got := slices.Concat(writes...); !slices.Equal(got, []int{0, 1, 2}) {
				t.Fatalf("maxGroup %d: written %v, want 0 1 2", group, got)
			}
		}
	})
	t.Run("ErrPanic", func(t *testing.T) {
		p := pipeline[int, int]{concurrency: 2, fetch: func(ctx context.Context, b int) ([]int, error) {
			var m map[int]int
			m[b]++ // assignment to entry in nil map
			return nil, nil
		}}
		_, err := collect(t, p, 3)
		var pe *PanicError
		if !errors.As(err, &pe) || !strings.Contains(pe.Where, "TestPipeline") {
			t.Fatalf("err = %v, want a PanicError naming the fetch", err)
		}
	})
	t.Run("ErrWrite", func(t *testing.T) {
		p := pipeline[int, int]{concurrency: 1, fetch: func(ctx context.Context, b int) ([]int, error) {
			return []int{b}, nil
		}}
		p.write = func(ctx context.Context, last int, items []int) error { return errors.New("disk full") }
		err := p.run(context.Background(), func(yield func(int) bool) {
			for i := 0; ; i++ { // endless: a write error must stop the producer too
				if !yield(i) {
					return
				}
			}
		})
		if err == nil || err.Error() != "disk full" {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestPipelineWindow: against fetches that wait (a slow node) the window
// widens past concurrency while the machine has CPU to spare, and not
// when it has none; either way the writes stay whole and in order.
func TestPipelineWindow(t *testing.T) {
	for _, spare := range []bool{true, false} {
		t.Run(fmt.Sprint("Spare", spare), func(t *testing.T) {
			var c fetchCounter
			p := pipeline[int, int]{concurrency: 1, widest: 4, period: time.Millisecond,
				spare: func() bool { return spare }, fetch: c.fetch(2 * time.Millisecond)}
			writes, err := collect(t, p, 300)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Concat(writes...); len(got) != 300 || !slices.IsSorted(got) || got[299] != 299 {
				t.Fatalf("wrote %v", got)
			}
			// One fetch may run for a batch the writer has taken: least+1
			// without room to spare.
			if spare && c.most < 3 || !spare && c.most > 2 {
				t.Fatalf("at most %d fetches at once, with CPU to spare %v", c.most, spare)
			}
		})
	}
}

func TestMachineSpare(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat here: the window widens whenever the writer waits")
	}
	ts, ok := cpuTimes()
	if !ok || ts.total == 0 || ts.idle > ts.total {
		t.Fatalf("cpuTimes() = %+v, %v", ts, ok)
	}
	if machineSpare() == nil {
		t.Fatal("no spare on Linux")
	}
}

// TestPipelineLongWrite: while a write runs long (a commit), fetches go on
// past the window into the room ahead, at most writeFetches at once; the
// writes stay whole and in order.
func TestPipelineLongWrite(t *testing.T) {
	// Room ahead for 60 fetches of 10 ms: one at a time they last past the
	// point where the count starts, four at a time too.
	const concurrency, ahead = 4, 60
	var c fetchCounter
	p := pipeline[int, int]{concurrency: concurrency, ahead: ahead, writeFetches: 1, fetch: c.fetch(10 * time.Millisecond)}
	var during struct{ started, most int }
	var got []int
	p.write = func(ctx context.Context, last int, items []int) error {
		got = append(got, items...)
		if last == 0 {
			// Past longWrite, the fetches that ran when it began are done;
			// from then on, count.
			time.Sleep(longWrite + 50*time.Millisecond)
			c.mu.Lock()
			c.most = c.now
			c.mu.Unlock()
			time.Sleep(1500 * time.Millisecond)
			c.mu.Lock()
			during.started, during.most = c.started, c.most
			c.mu.Unlock()
		}
		return nil
	}
	err := p.run(context.Background(), func(yield func(int) bool) {
		for i := range 100 {
			if !yield(i) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || !slices.IsSorted(got) || got[99] != 99 {
		t.Fatalf("wrote %v", got)
	}
	// Batch 0 taken, then the window and the room ahead filled.
	if during.started != 1+concurrency+ahead {
		t.Fatalf("%d fetches started while the first write ran, want %d", during.started, 1+concurrency+ahead)
	}
	if during.most > 1 {
		t.Fatalf("%d fetches at once while the first write ran, want 1", during.most)
	}
}

// TestWindowLateTimer: a long-write timer that fires as its write ends
// does not hold the fetches back in the gap before the next write.
func TestWindowLateTimer(t *testing.T) {
	w := newWindow(4, 4, nil, 0)
	w.writeFetches = 1
	long := w.beginWrite()
	w.endWrite()
	long() // fired late
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 4 {
		if !w.enter(ctx) {
			t.Fatalf("fetch %d did not start", i)
		}
	}
	w = newWindow(4, 4, nil, 0)
	w.writeFetches = 1
	w.beginWrite()() // a write that runs long
	w.enter(context.Background())
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if w.enter(ctx) {
		t.Fatal("a second fetch started during a long write")
	}
}

// fetchCounter counts the fetches of a pipeline's fetch that sleeps: how
// many started, how many run now, and the most at once.
type fetchCounter struct {
	mu                 sync.Mutex
	started, now, most int
}

func (c *fetchCounter) fetch(d time.Duration) func(ctx context.Context, b int) ([]int, error) {
	return func(ctx context.Context, b int) ([]int, error) {
		c.mu.Lock()
		c.started++
		c.now++
		c.most = max(c.most, c.now)
		c.mu.Unlock()
		time.Sleep(d)
		c.mu.Lock()
		c.now--
		c.mu.Unlock()
		return []int{b}, nil
	}
}
