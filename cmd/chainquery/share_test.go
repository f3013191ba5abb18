package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cqhttp "github.com/chainquery/chainquery/http"
)

// TestServe_ShareFlags: the deadline and fair share flags, their config
// fields (a flag given wins), their defaults and their range checks, and
// what they make of http.Config.
func TestServe_ShareFlags(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "c.json")
	writeFile(t, config, `{"db": "sqlite:file.db", "request_timeout": "2s", "store_concurrency": 6, "key_concurrency": 2,
"key_cost_rate": 250, "key_cost_burst": 900, "queue_wait": "100ms"}`)
	off := filepath.Join(dir, "off.json")
	writeFile(t, off, `{"db": "sqlite:file.db", "fair_share": false, "request_timeout": "0s"}`)
	parse := func(args ...string) (*serveCmd, error) {
		m := NewMain()
		m.Stdout, m.Stderr, m.Getenv = io.Discard, io.Discard, func(string) string { return "" }
		if err := m.ParseFlags(t.Context(), append([]string{"serve"}, args...)); err != nil {
			return nil, err
		}
		return m.cmd.(*serveCmd), nil
	}
	db := "sqlite:" + filepath.Join(dir, "f.db")
	for _, tt := range []struct {
		args []string
		want shareOptions
	}{
		{[]string{"--db", db}, shareOptions{cqhttp.DefaultRequestTimeout, true, 0, 0, cqhttp.DefaultCostRate, 0, cqhttp.DefaultQueueWait}},
		{[]string{"--config", config}, shareOptions{2 * time.Second, true, 6, 2, 250, 900, 100 * time.Millisecond}},
		{[]string{"--config", config, "--request-timeout", "9s", "--key-cost-rate", "10"}, shareOptions{9 * time.Second, true, 6, 2, 10, 900, 100 * time.Millisecond}},
		{[]string{"--config", off}, shareOptions{0, false, 0, 0, cqhttp.DefaultCostRate, 0, cqhttp.DefaultQueueWait}},
		{[]string{"--config", off, "--fair-share"}, shareOptions{0, true, 0, 0, cqhttp.DefaultCostRate, 0, cqhttp.DefaultQueueWait}},
	} {
		c, err := parse(tt.args...)
		if err != nil {
			t.Errorf("%v: %v", tt.args, err)
		} else if c.share != tt.want {
			t.Errorf("%v: %+v, want %+v", tt.args, c.share, tt.want)
		}
	}

	// What http.Config gets: the flag's 0 deadline is none (-1), fair
	// share off is no store slots (-1).
	var cfg cqhttp.Config
	(&shareOptions{requestTimeout: 0, fairShare: false}).apply(&cfg)
	if cfg.RequestTimeout != -1 || cfg.StoreConcurrency != -1 {
		t.Errorf("off: timeout %v, store concurrency %d; want -1 and -1", cfg.RequestTimeout, cfg.StoreConcurrency)
	}
	if s := cqhttp.EffectiveShare(cfg); s.StoreConcurrency != 0 {
		t.Errorf("off: effective share %+v, want none", s)
	}
	cfg = cqhttp.Config{}
	(&shareOptions{requestTimeout: time.Second, fairShare: true, storeConcurrency: 8, keyCostRate: 100, queueWait: time.Second}).apply(&cfg)
	if s := cqhttp.EffectiveShare(cfg); s.StoreConcurrency != 8 || s.Key.Concurrency != 2 || s.Key.CostRate != 100 ||
		s.Key.CostBurst != 100*cqhttp.DefaultCostBurstSecs || s.QueueWait != time.Second {
		t.Errorf("effective share %+v", s)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "--request-timeout", "-1s"}, "--request-timeout must be"},
		{[]string{"--db", db, "--store-concurrency", "-1"}, "--store-concurrency must be"},
		{[]string{"--db", db, "--store-concurrency", "2", "--key-concurrency", "3"}, "--key-concurrency must not be above --store-concurrency (2)"},
		{[]string{"--db", db, "--key-cost-rate", "0"}, "--key-cost-rate must be a positive number"},
		{[]string{"--db", db, "--key-cost-rate", "NaN"}, "--key-cost-rate must be a positive number"},
		{[]string{"--db", db, "--key-cost-burst", "-5"}, "--key-cost-burst must be"},
		{[]string{"--db", db, "--queue-wait", "0s"}, "--queue-wait must be a positive duration"},
	} {
		if _, err := parse(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"request_timeout": 5}`)
	if _, err := parse("--config", bad); err == nil || !strings.Contains(err.Error(), `duration string such as "5s"`) {
		t.Errorf("a number as request_timeout: %v", err)
	}
}

// TestServe_Share: serve logs its limits, sends the cost headers, and
// answers a request of a key whose budget is spent, while another key uses
// the database, with 429.
func TestServe_Share(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "s.db")
	key := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "alice", "--endpoints", "all", "--cost-rate", "0.001", "--cost-burst", "0.001"))
	bob := lastLine(mustExecute(t, nil, "keys", "create", "--db", db, "--name", "bob", "--endpoints", "all"))
	r := start(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0", "--request-timeout", "3s", "--store-concurrency", "4", "--queue-wait", "50ms")
	url := r.base() + "/api/v1/customer/polygon/blocks/latest"
	get(t, url, bob).Body.Close() // another key uses the database: alice's budget binds
	resp := get(t, url, key)
	resp.Body.Close()
	if resp.Header.Get("X-Request-Cost") == "" || resp.Header.Get("X-Cost-Limit") != "0.001/s, burst 0.001" {
		t.Errorf("cost headers %q %q", resp.Header.Get("X-Request-Cost"), resp.Header.Get("X-Cost-Limit"))
	}
	wantStatus(t, get(t, url, key), http.StatusTooManyRequests)
	r.stop(t)
	contains(t, "the log", r.stderr.String(), "request deadline", "timeout=3s", "fair share", "store_concurrency=4", "key_concurrency=1")
}
