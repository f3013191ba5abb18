package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// flakyStore answers Ping with the errors of its script, one per call, and
// nil once the script is used up.
type flakyStore struct {
	mu     sync.Mutex
	script []error
	calls  int
}

func (s *flakyStore) Ping(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.script) == 0 {
		return nil
	}
	err := s.script[0]
	s.script = s.script[1:]
	return err
}

// pings returns how many times Ping was called.
func (s *flakyStore) pings() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// TestWatchStore checks that serve's watch on the store logs an outage once
// when it starts, with the error, and once when it ends; and nothing while
// the store answers.
func TestWatchStore(t *testing.T) {
	down := errors.New("connection refused")
	s := &flakyStore{script: []error{nil, nil, down, down, down, nil, nil, down, nil}}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		watchStore(ctx, s, slog.New(slog.NewTextHandler(logs, nil)), time.Millisecond)
	}()
	// One ping past the script: the answer to the last scripted one has
	// been logged by then.
	want := len(s.script) + 1
	deadline := time.Now().Add(10 * time.Second)
	for s.pings() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-finished
	got := logs.String()
	if n := strings.Count(got, "database unavailable"); n != 2 {
		t.Errorf("%d outage lines, want 2 (one per outage):\n%s", n, got)
	}
	if n := strings.Count(got, "database available again"); n != 2 {
		t.Errorf("%d recovery lines, want 2:\n%s", n, got)
	}
	contains(t, "the log", got, "level=WARN", `error="connection refused"`, "down_for=")
}
