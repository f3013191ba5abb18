// Package metrics records what the ingesters and their node clients do as
// Prometheus metrics: it implements the observer interfaces of package
// ingest (heads, writes, reorgs) and package jsonrpc (calls, errors,
// retries) with client_golang, so that those packages and the root stay
// free of it. It imports them only for the types of those interfaces, as
// sqlite/ imports the root for the interfaces it implements; only
// cmd/chainquery wires it in. The HTTP API's own metrics stay in package
// http, next to the middleware that records them.
//
// Every label has a bounded set of values: chain is a chain of the fixed
// list (anything else is "other"), method a JSON-RPC method the clients
// call (anything else is "other"), class one of jsonrpc's error classes,
// and table one of the tables the ingesters write.
package metrics

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/jsonrpc"
)

// Ingest holds the ingestion metrics of one process, on one registry: serve
// registers them on the API server's registry for its followers, ingest on
// a registry of its own. It is safe for concurrent use.
type Ingest struct {
	nodeHead, storedHead, lagBlocks, lagSeconds, lastWrite *prometheus.GaugeVec
	rows                                                   *prometheus.CounterVec
	batchBlocks, batchWrite, reorgDepth                    *prometheus.HistogramVec
	rpcRequests, rpcErrors, rpcRetries                     *prometheus.CounterVec

	now func() time.Time

	mu     sync.Mutex
	chains map[string]*chainObserver
}

// NewIngest returns the ingestion metrics, registered on reg. It returns
// the registry's error when they are registered there already.
func NewIngest(reg prometheus.Registerer) (*Ingest, error) {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"chain"})
	}
	m := &Ingest{
		nodeHead:   gauge("chainquery_ingest_node_head", "The node's head: its latest EVM block, or Solana's confirmed slot, as the ingester last asked."),
		storedHead: gauge("chainquery_ingest_stored_head", "The highest block (Solana: slot) the store holds, as the ingester last wrote or found it."),
		lagBlocks:  gauge("chainquery_ingest_lag_blocks", "Blocks (Solana: slots) between the node's head and the stored head; confirmations included."),
		lagSeconds: gauge("chainquery_ingest_lag_seconds", "The lag in blocks times the chain's block time over the last 100 stored blocks; absent until two writes have shown the block time."),
		lastWrite:  gauge("chainquery_ingest_last_write_timestamp_seconds", "Unix time of the ingester's last committed store transaction."),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainquery_ingest_rows_total",
			Help: "Rows written, by chain and table (receipts share the rows of transactions; reorg rewrites count again).",
		}, []string{"chain", "table"}),
		batchBlocks: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chainquery_ingest_batch_blocks",
			Help:    "Blocks (Solana: blocks of slots) per committed store transaction.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
		}, []string{"chain"}),
		batchWrite: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chainquery_ingest_batch_write_seconds",
			Help:    "Time of one store transaction of blocks, waits for an unavailable store included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"chain"}),
		reorgDepth: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chainquery_ingest_reorg_depth_blocks",
			Help:    "Depth of each reorg rewound, in blocks; its count is the number of reorgs.",
			Buckets: []float64{1, 2, 3, 5, 10, 20, 50, 100, 256},
		}, []string{"chain"}),
		rpcRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainquery_rpc_requests_total",
			Help: "JSON-RPC calls sent to the node, by method (each call of a batch counts; methods outside the fixed set are \"other\").",
		}, []string{"chain", "method"}),
		rpcErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainquery_rpc_errors_total",
			Help: "JSON-RPC calls that failed, by method and class: timeout, network, http, rpc, decode, too_large.",
		}, []string{"chain", "method", "class"}),
		rpcRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainquery_rpc_retries_total",
			Help: "JSON-RPC calls asked again after a failure, by method.",
		}, []string{"chain", "method"}),
		now:    time.Now,
		chains: make(map[string]*chainObserver),
	}
	for _, c := range []prometheus.Collector{m.nodeHead, m.storedHead, m.lagBlocks, m.lagSeconds, m.lastWrite,
		m.rows, m.batchBlocks, m.batchWrite, m.reorgDepth, m.rpcRequests, m.rpcErrors, m.rpcRetries} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// chainLabel bounds the chain label to the fixed list of chains.
func chainLabel(c chainquery.Chain) string {
	if c.IsEVM() || c == chainquery.Solana {
		return string(c)
	}
	return "other"
}

// Chain returns the ingest.Observer of chain's loop. A chain has one, kept
// across the attempts of a follower that starts over, so that what it
// learnt of the block time survives a restart.
func (m *Ingest) Chain(chain chainquery.Chain) ingest.Observer {
	label := chainLabel(chain)
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.chains[label]
	if o == nil {
		o = &chainObserver{m: m, chain: label}
		m.chains[label] = o
	}
	return o
}

// RPC returns the jsonrpc.Observer of chain's node clients.
func (m *Ingest) RPC(chain chainquery.Chain) jsonrpc.Observer {
	return rpcObserver{m: m, chain: chainLabel(chain)}
}

// NewRegistry returns a registry with the Go runtime and process collectors,
// for a process without an API server (ingest).
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg at GET /metrics and nothing else (404): ingest's
// listener is for the scraper only.
func Handler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// storePingTimeout is how long chainquery_store_up waits for the store at
// each scrape: a database slower than this to answer a ping is as good as
// down for the ingester, and a scrape must not hang on it.
const storePingTimeout = time.Second

// RegisterStoreUp registers chainquery_store_up on reg: 1 when ping returns
// nil within one second at scrape time, else 0.
func RegisterStoreUp(reg prometheus.Registerer, ping func(ctx context.Context) error) error {
	return reg.Register(storeUp{ping: ping, desc: prometheus.NewDesc("chainquery_store_up",
		"1 if the store answered a ping within 1 s at scrape time, else 0.", nil, nil)})
}

// storeUp is a collector that pings the store when scraped.
type storeUp struct {
	ping func(ctx context.Context) error
	desc *prometheus.Desc
}

func (s storeUp) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

func (s storeUp) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), storePingTimeout)
	defer cancel()
	// The ping runs apart, so that a store that ignores ctx cannot hold
	// the scrape past the timeout.
	done := make(chan error, 1)
	go func() { done <- s.ping(ctx) }()
	up := 0.0
	select {
	case err := <-done:
		if err == nil {
			up = 1
		}
	case <-ctx.Done():
	}
	ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, up)
}
