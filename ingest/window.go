package ingest

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"sync"
	"time"
)

// window is how many batches the pipeline keeps ahead of its writer:
// entered (being fetched, or fetched) and not yet taken by the writer. It
// starts at least and moves, a batch at a time each period, between least
// and widest by what the writer waited for fetches in the period.
type window struct {
	least, widest int
	spare         func() bool
	period        time.Duration
	ahead         int // pipeline.ahead
	writeFetches  int // pipeline.writeFetches

	mu          sync.Mutex
	limit       int
	outstanding int           // entered and not yet taken
	running     int           // entered and not yet fetched
	writing     bool          // a write has run longWrite and goes on
	writes      uint64        // writes begun (beginWrite)
	room        chan struct{} // a signal that enter may find room now
	since       time.Time     // the start of the period
	wait        time.Duration // what the writer waited in the period
}

func newWindow(least, widest int, spare func() bool, period time.Duration) *window {
	if period <= 0 {
		period = 200 * time.Millisecond
	}
	return &window{least: least, widest: max(widest, least), spare: spare, period: period,
		limit: least, room: make(chan struct{}, 1), since: time.Now()}
}

// enter waits until the window has room for one more batch, and takes it;
// false when ctx ended first. There is room when fewer than limit fetches
// run (writeFetches during a long write, the window at its narrowest) and
// fewer than limit+ahead batches wait for the writer.
func (w *window) enter(ctx context.Context) bool {
	for {
		w.mu.Lock()
		running := w.limit
		if w.writing && w.writeFetches > 0 && w.limit == w.least {
			running = min(running, w.writeFetches)
		}
		if w.running < running && w.outstanding < w.limit+w.ahead {
			w.running++
			w.outstanding++
			w.mu.Unlock()
			return true
		}
		w.mu.Unlock()
		select {
		case <-w.room:
		case <-ctx.Done():
			return false
		}
	}
}

// fetched says a batch's fetch ended.
func (w *window) fetched() {
	w.mu.Lock()
	w.running--
	w.mu.Unlock()
	w.signal()
}

// beginWrite says a write begins, and returns the function that says it
// has run longWrite: a no-op once the write has ended (endWrite), so that a
// timer that fires as the write ends cannot mark the next gap as writing.
func (w *window) beginWrite() (long func()) {
	w.mu.Lock()
	w.writes++
	n := w.writes
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		if w.writes == n {
			w.writing = true
		}
		w.mu.Unlock()
		w.signal()
	}
}

// endWrite says the write begun last has ended.
func (w *window) endWrite() {
	w.mu.Lock()
	w.writes++
	w.writing = false
	w.mu.Unlock()
	w.signal()
}

// taken says the writer took a batch.
func (w *window) taken() {
	w.mu.Lock()
	w.outstanding--
	w.mu.Unlock()
	w.signal()
}

func (w *window) signal() {
	select {
	case w.room <- struct{}{}:
	default:
	}
}

// waited adds d to what the writer waited for a fetch, and at the end of
// a period moves the window: wider when the writer waited a tenth of it
// or more and the machine has CPU to spare, narrower when it waited
// almost not at all or the machine has none.
func (w *window) waited(d time.Duration) {
	if w.widest == w.least {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wait += d
	elapsed := time.Since(w.since)
	if elapsed < w.period {
		return
	}
	spare := w.spare == nil || w.spare()
	switch {
	case w.wait*10 >= elapsed && spare && w.limit < w.widest:
		w.limit++
		w.signal()
	case (w.wait*50 < elapsed || !spare) && w.limit > w.least:
		w.limit--
	}
	w.since, w.wait = time.Now(), 0
}

// machineSpare returns a spare for the pipeline's window on Linux: true
// when a fifth or more of the machine's CPU time since the last call was
// idle (/proc/stat). Elsewhere it returns nil: the window widens whenever
// the writer waits.
func machineSpare() func() bool {
	last, ok := cpuTimes()
	if !ok {
		return nil
	}
	return func() bool {
		now, ok := cpuTimes()
		if !ok {
			return true
		}
		idle, total := now.idle-last.idle, now.total-last.total
		last = now
		return total > 0 && idle*5 >= total
	}
}

// cpuTimes is the machine's CPU time, idle and in all, in ticks.
type ticks struct{ idle, total uint64 }

func cpuTimes() (ticks, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return ticks{}, false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil || !bytes.HasPrefix(line, []byte("cpu ")) {
		return ticks{}, false
	}
	var t ticks
	// user nice system idle iowait irq softirq steal ...
	fields := bytes.Fields(line)[1:]
	for i, field := range fields[:min(len(fields), 8)] { // guest time is in user's already
		v, err := strconv.ParseUint(string(field), 10, 64)
		if err != nil {
			return ticks{}, false
		}
		t.total += v
		if i == 3 || i == 4 { // idle, iowait
			t.idle += v
		}
	}
	return t, true
}
