package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/http"
)

// shareOptions are serve's flags of fair share between keys and of the
// request deadline (http/admission.go, docs/operations.md "Limits"). Each has a
// config file field of the same name with underscores; a flag given wins.
type shareOptions struct {
	requestTimeout   time.Duration // 0: no deadline
	fairShare        bool
	storeConcurrency int     // 0: http.DefaultStoreConcurrency
	keyConcurrency   int     // 0: a quarter of storeConcurrency
	keyCostRate      float64 // ms of store time a second
	keyCostBurst     float64 // 0: http.DefaultCostBurstSecs of keyCostRate
	queueWait        time.Duration
}

func (o *shareOptions) register(fs *flag.FlagSet) {
	fs.DurationVar(&o.requestTimeout, "request-timeout", http.DefaultRequestTimeout,
		"deadline of every keyed request, `DURATION`: past it the database statement is\ninterrupted and the client gets 503 saying how to narrow the request; 0: none\n(config: request_timeout)")
	fs.BoolVar(&o.fairShare, "fair-share", true,
		"admit keyed requests to the database by each key's share (--store-concurrency,\n--key-concurrency, --key-cost-rate); --fair-share=false admits everything\n(config: fair_share)")
	fs.IntVar(&o.storeConcurrency, "store-concurrency", 0,
		"keyed requests that may use the database at once, all keys together, `N`;\n0: 2 per core (config: store_concurrency)")
	fs.IntVar(&o.keyConcurrency, "key-concurrency", 0,
		"default of a key's share of --store-concurrency while other keys use the database,\n`N` (a key alone may use all but one; keys update --concurrency sets a key's own,\na cap); 0: a quarter of --store-concurrency (config: key_concurrency)")
	fs.Float64Var(&o.keyCostRate, "key-cost-rate", http.DefaultCostRate,
		"default cost budget of a key, `MS` of database time per second (keys update\n--cost-rate sets a key's own); over it requests get 429 (config: key_cost_rate)")
	fs.Float64Var(&o.keyCostBurst, "key-cost-burst", 0,
		"default of what a key's cost budget holds when full, `MS`; 0: 2 seconds of\n--key-cost-rate (config: key_cost_burst)")
	fs.DurationVar(&o.queueWait, "queue-wait", http.DefaultQueueWait,
		"how long a request may wait for its key's share of the database before it\ngets 429, `DURATION` (config: queue_wait)")
}

// shareConfig are the config file's fields of shareOptions.
type shareConfig struct {
	RequestTimeout   *duration `json:"request_timeout"`
	FairShare        *bool     `json:"fair_share"`
	StoreConcurrency *int      `json:"store_concurrency"`
	KeyConcurrency   *int      `json:"key_concurrency"`
	KeyCostRate      *float64  `json:"key_cost_rate"`
	KeyCostBurst     *float64  `json:"key_cost_burst"`
	QueueWait        *duration `json:"queue_wait"`
}

var shareFields = []string{"request_timeout", "fair_share", "store_concurrency", "key_concurrency", "key_cost_rate", "key_cost_burst", "queue_wait"}

// fromConfig takes the file's values of the flags not given (set).
func (o *shareOptions) fromConfig(c shareConfig, set map[string]bool) {
	if c.RequestTimeout != nil && !set["request-timeout"] {
		o.requestTimeout = time.Duration(*c.RequestTimeout)
	}
	if c.FairShare != nil && !set["fair-share"] {
		o.fairShare = *c.FairShare
	}
	if c.StoreConcurrency != nil && !set["store-concurrency"] {
		o.storeConcurrency = *c.StoreConcurrency
	}
	if c.KeyConcurrency != nil && !set["key-concurrency"] {
		o.keyConcurrency = *c.KeyConcurrency
	}
	if c.KeyCostRate != nil && !set["key-cost-rate"] {
		o.keyCostRate = *c.KeyCostRate
	}
	if c.KeyCostBurst != nil && !set["key-cost-burst"] {
		o.keyCostBurst = *c.KeyCostBurst
	}
	if c.QueueWait != nil && !set["queue-wait"] {
		o.queueWait = time.Duration(*c.QueueWait)
	}
}

// check returns a usage error for a value out of range.
func (o *shareOptions) check(help string) error {
	switch {
	case o.requestTimeout < 0:
		return usagef(help, "--request-timeout must be a duration of at least 0 (0: no deadline), e.g. 5s")
	case o.storeConcurrency < 0:
		return usagef(help, "--store-concurrency must be at least 0 (0: 2 per core)")
	case o.keyConcurrency < 0:
		return usagef(help, "--key-concurrency must be at least 0 (0: a quarter of --store-concurrency)")
	case o.storeConcurrency > 0 && o.keyConcurrency > o.storeConcurrency:
		return usagef(help, "--key-concurrency must not be above --store-concurrency (%d)", o.storeConcurrency)
	case !(o.keyCostRate > 0) || math.IsInf(o.keyCostRate, 1):
		return usagef(help, "--key-cost-rate must be a positive number of milliseconds of database time per second, e.g. %d", http.DefaultCostRate)
	case !(o.keyCostBurst >= 0) || math.IsInf(o.keyCostBurst, 1):
		return usagef(help, "--key-cost-burst must be a number of milliseconds of at least 0 (0: %d seconds of --key-cost-rate)", http.DefaultCostBurstSecs)
	case o.queueWait <= 0:
		return usagef(help, "--queue-wait must be a positive duration, e.g. %s", http.DefaultQueueWait)
	}
	return nil
}

// apply sets the http.Config fields of the options.
func (o *shareOptions) apply(cfg *http.Config) {
	cfg.RequestTimeout = o.requestTimeout
	if o.requestTimeout == 0 {
		cfg.RequestTimeout = -1 // the flag's 0 is none; the Config's is the default
	}
	if !o.fairShare {
		cfg.StoreConcurrency = -1
		return
	}
	cfg.StoreConcurrency = o.storeConcurrency
	cfg.KeyDefaults = chainquery.KeyLimits{Concurrency: o.keyConcurrency, CostRate: o.keyCostRate, CostBurst: o.keyCostBurst}
	cfg.QueueWait = o.queueWait
}

// log says what the limits are, once at start.
func (o *shareOptions) log(logger *slog.Logger, cfg http.Config) {
	if o.requestTimeout > 0 {
		logger.Info("request deadline", "timeout", o.requestTimeout)
	} else {
		logger.Info("request deadline off")
	}
	if !o.fairShare {
		logger.Info("fair share off")
		return
	}
	l := http.EffectiveShare(cfg)
	logger.Info("fair share", "store_concurrency", l.StoreConcurrency, "key_concurrency", l.Key.Concurrency,
		"key_cost_rate_ms_per_s", l.Key.CostRate, "key_cost_burst_ms", l.Key.CostBurst, "queue_wait", l.QueueWait)
}

// duration is a config file's duration: a string such as "5s" or "500ms",
// as Go's flags take it.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"5s\" or \"500ms\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"5s\" or \"500ms\"", s)
	}
	*d = duration(v)
	return nil
}
