package main

import (
	"context"
	"log/slog"
	"time"
)

// storeCheckEvery is how often serve pings its store. /healthz is a liveness
// probe that touches no store (a load balancer must not take every server
// out because the database they share is down: they would answer 503 with a
// detail, which is better than no answer); the log is where an outage of
// the database shows, once when it starts and once when it ends.
const storeCheckEvery = 10 * time.Second

// storePingTimeout bounds one check; a database slower than this to answer
// a ping is as good as down for the API.
const storePingTimeout = 5 * time.Second

// pinger is what watchStore needs of a store.
type pinger interface {
	Ping(ctx context.Context) error
}

// watchStore pings s at once and then every interval until ctx ends, and
// logs when the store stops answering (a warning with the error) and when it
// answers again. It logs nothing while the state stays the same, so that an
// outage of an hour is two lines, not 360.
func watchStore(ctx context.Context, s pinger, logger *slog.Logger, every time.Duration) {
	up := true
	var since time.Time
	for {
		pctx, cancel := context.WithTimeout(ctx, storePingTimeout)
		err := s.Ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && up:
			up, since = false, time.Now()
			logger.Warn("database unavailable: requests that need it get 503 until it answers again", "error", err)
		case err == nil && !up:
			up = true
			logger.Info("database available again", "down_for", time.Since(since).Round(time.Second))
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
