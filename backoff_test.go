package chainquery_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

func TestBackoffNext(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		b    chainquery.Backoff
		want []time.Duration
	}{
		{chainquery.Backoff{Min: ms, Max: 4 * ms}, []time.Duration{ms, 2 * ms, 4 * ms, 4 * ms, 4 * ms}},
		{chainquery.Backoff{Min: 3 * ms, Max: 10 * ms}, []time.Duration{3 * ms, 6 * ms, 10 * ms, 10 * ms}},
		{chainquery.Backoff{Min: 5 * ms, Max: ms}, []time.Duration{5 * ms, 5 * ms}},
		{chainquery.Backoff{Min: time.Second, Max: 30 * time.Second}, []time.Duration{1e9, 2e9, 4e9, 8e9, 16e9, 30e9, 30e9}},
	} {
		for i, want := range c.want {
			if got := c.b.Next(i + 1); got != want {
				t.Errorf("%+v.Next(%d) = %s, want %s", c.b, i+1, got, want)
			}
		}
	}
	// Far past the cap, no overflow.
	if got := (chainquery.Backoff{Min: time.Second, Max: time.Hour}).Next(1000); got != time.Hour {
		t.Errorf("Next(1000) = %s", got)
	}
}

func TestSleep(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		if !chainquery.Sleep(context.Background(), time.Millisecond) {
			t.Fatal("Sleep stopped without a cancelled context")
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		if chainquery.Sleep(ctx, time.Hour) {
			t.Fatal("Sleep went on after its context ended")
		}
		if time.Since(start) > time.Second {
			t.Fatal("Sleep waited after its context ended")
		}
	})
}
