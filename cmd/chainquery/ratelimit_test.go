package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestServe_RateLimit(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "rl.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "alice", "--endpoints", "all"))
	r := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0", "--rate-limit", "1", "--rate-burst", "1")
	url := r.base() + "/api/v1/customer/polygon/blocks/latest"

	resp := get(t, url, key)
	resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("first request: 429, want it served")
	}
	resp = get(t, url, key)
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After = %q, want whole seconds >= 1", resp.Header.Get("Retry-After"))
	}
	wantStatus(t, resp, http.StatusTooManyRequests)
	// An unknown key is 401 whatever the limit.
	wantStatus(t, get(t, url, "cq_unknown"), http.StatusUnauthorized)
	r.stop(t)
	contains(t, "the log", r.stderr.String(), "rate limit", "burst=1")
}

func TestServe_RateLimitFlags(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "f.db")
	parse := func(env map[string]string, args ...string) (*serveCmd, error) {
		m := NewMain()
		m.Stdout, m.Stderr, m.Getenv = io.Discard, io.Discard, func(k string) string { return env[k] }
		if err := m.ParseFlags(context.Background(), append([]string{"serve", "--db", db}, args...)); err != nil {
			return nil, err
		}
		return m.cmd.(*serveCmd), nil
	}
	for _, tt := range []struct {
		env   map[string]string
		args  []string
		limit float64
		burst int
	}{
		{nil, nil, 0, 0},
		{nil, []string{"--rate-limit", "2.5", "--rate-burst", "4"}, 2.5, 4},
		{map[string]string{"CHAINQUERY_RATE_LIMIT": "7"}, nil, 7, 0},
		{map[string]string{"CHAINQUERY_RATE_LIMIT": "7"}, []string{"--rate-limit", "0"}, 0, 0}, // the flag wins
	} {
		c, err := parse(tt.env, tt.args...)
		if err != nil {
			t.Errorf("%v %v: %v", tt.env, tt.args, err)
		} else if c.rateLimit != tt.limit || c.rateBurst != tt.burst {
			t.Errorf("%v %v: rate limit %v burst %d, want %v %d", tt.env, tt.args, c.rateLimit, c.rateBurst, tt.limit, tt.burst)
		}
	}
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--rate-limit", "-1"}, "--rate-limit must be"},
		{nil, []string{"--rate-limit", "NaN"}, "--rate-limit must be"},
		{nil, []string{"--rate-burst", "-1"}, "--rate-burst must be"},
		{map[string]string{"CHAINQUERY_RATE_LIMIT": "fast"}, nil, "CHAINQUERY_RATE_LIMIT must be"},
	} {
		if _, err := parse(tt.env, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %v: error %v, want %q", tt.env, tt.args, err, tt.want)
		}
	}
}
