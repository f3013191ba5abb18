package main

import (
	"context"
	"sync"
	"time"
)

// group runs functions until the first fails or ctx ends, then cancels the
// rest and waits for them: dev's parts stand or fall together.
type group struct {
	ctx    context.Context
	parent context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	err    error
}

func newGroup(ctx context.Context) *group {
	g := &group{parent: ctx}
	g.ctx, g.cancel = context.WithCancel(ctx)
	return g
}

// run runs f in its own goroutine.
func (g *group) run(f func(context.Context) error) {
	g.wg.Go(func() {
		if err := f(g.ctx); err != nil && g.ctx.Err() == nil {
			// Ctrl-C reaches anvil (it shares the terminal's process group) as
			// it reaches us, and may stop it first: a failure that a signal
			// follows closely is part of the shutdown, not an error.
			select {
			case <-g.parent.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			g.fail(err)
		}
	})
}

// fail records err as the group's error, if it is the first, and stops the
// group.
func (g *group) fail(err error) {
	g.once.Do(func() { g.err = err })
	g.cancel()
}

// wait waits for every function and returns the first error.
func (g *group) wait() error {
	g.wg.Wait()
	g.cancel()
	return g.err
}
