package metrics

import (
	"sync"

	"github.com/chainquery/chainquery/ingest"
	"github.com/chainquery/chainquery/jsonrpc"
)

// Compile-time checks that the observers implement the interfaces they are
// handed out as.
var (
	_ ingest.Observer  = (*chainObserver)(nil)
	_ jsonrpc.Observer = rpcObserver{}
)

// blockTimeSpan is how many blocks the block time behind lag_seconds is
// measured over: as /readyz's --ready-max-lag does, the last 100.
const blockTimeSpan = 100

// chainObserver records one chain's ingestion. It keeps the node's head,
// the stored head and the ends of the recent writes, from which the lag
// gauges follow.
type chainObserver struct {
	m     *Ingest
	chain string

	mu     sync.Mutex
	head   uint64 // the node's; 0 until known
	stored uint64
	known  bool    // stored is known
	ends   []point // ends of the recent writes, oldest first, spanning about blockTimeSpan blocks
}

// point is a block and its time, in unix seconds.
type point struct {
	n uint64
	t float64
}

func (o *chainObserver) NodeHead(head uint64) {
	o.m.nodeHead.WithLabelValues(o.chain).Set(float64(head))
	o.mu.Lock()
	defer o.mu.Unlock()
	o.head = head
	o.lag()
}

func (o *chainObserver) StoredHead(head uint64) {
	o.m.storedHead.WithLabelValues(o.chain).Set(float64(head))
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stored, o.known = head, true
	o.ends = nil // the block time is measured over this run's writes
	o.lag()
}

func (o *chainObserver) Written(w ingest.Write) {
	c := o.chain
	o.m.lastWrite.WithLabelValues(c).Set(float64(o.m.now().UnixNano()) / 1e9)
	o.m.storedHead.WithLabelValues(c).Set(float64(w.Last))
	o.m.batchBlocks.WithLabelValues(c).Observe(float64(w.Blocks))
	o.m.batchWrite.WithLabelValues(c).Observe(w.Duration.Seconds())
	if c == "solana" {
		o.m.rows.WithLabelValues(c, "token_balances").Add(float64(w.TokenBalances))
	} else {
		o.m.rows.WithLabelValues(c, "blocks").Add(float64(w.Blocks))
		o.m.rows.WithLabelValues(c, "transactions").Add(float64(w.Transactions))
		o.m.rows.WithLabelValues(c, "logs").Add(float64(w.Logs))
		o.m.rows.WithLabelValues(c, "traces").Add(float64(w.Traces))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stored, o.known = w.Last, true
	if n := len(o.ends); n > 0 && w.Last <= o.ends[n-1].n {
		o.ends = nil // a rewind: the blocks measured are gone
	}
	if !w.LastTime.IsZero() { // very old Solana slots have no time
		o.ends = append(o.ends, point{w.Last, float64(w.LastTime.UnixNano()) / 1e9})
	}
	for len(o.ends) > 2 && o.ends[len(o.ends)-1].n-o.ends[1].n >= blockTimeSpan {
		o.ends = o.ends[1:]
	}
	o.lag()
}

func (o *chainObserver) Reorg(depth uint64) {
	o.m.reorgDepth.WithLabelValues(o.chain).Observe(float64(depth))
}

// lag sets the lag gauges once both heads are known; o.mu is held.
func (o *chainObserver) lag() {
	if o.head == 0 || !o.known {
		return
	}
	var blocks uint64
	if o.head > o.stored {
		blocks = o.head - o.stored
	}
	o.m.lagBlocks.WithLabelValues(o.chain).Set(float64(blocks))
	if n := len(o.ends); n >= 2 {
		first, last := o.ends[0], o.ends[n-1]
		blockTime := max(last.t-first.t, 0) / float64(last.n-first.n)
		o.m.lagSeconds.WithLabelValues(o.chain).Set(float64(blocks) * blockTime)
	} else {
		// Unknown (again, after a restart or a rewind): no value rather
		// than a stale one.
		o.m.lagSeconds.DeleteLabelValues(o.chain)
	}
}

// rpcMethods are the JSON-RPC methods the EVM and Solana clients call: the
// values of the method label. Any other (a node call added later and not
// listed here) is "other", so that no input can grow the label set.
var rpcMethods = map[string]bool{
	"eth_chainId": true, "eth_blockNumber": true, "eth_getBlockByNumber": true,
	"eth_getBlockReceipts": true, "eth_getTransactionReceipt": true,
	"trace_block": true, "debug_traceBlockByNumber": true, "debug_traceBlockByHash": true,
	"getSlot": true, "getBlocks": true, "getBlock": true, "getMultipleAccounts": true,
}

// MethodLabel returns the method label of a JSON-RPC method: the method
// itself when the clients call it, else "other".
func MethodLabel(method string) string {
	if rpcMethods[method] {
		return method
	}
	return "other"
}

// classes are the values of the class label: jsonrpc.ErrorClass's.
var classes = map[string]bool{
	jsonrpc.ClassTimeout: true, jsonrpc.ClassNetwork: true, jsonrpc.ClassHTTP: true,
	jsonrpc.ClassRPC: true, jsonrpc.ClassDecode: true, jsonrpc.ClassTooLarge: true,
}

// rpcObserver counts one chain's JSON-RPC calls.
type rpcObserver struct {
	m     *Ingest
	chain string
}

func (o rpcObserver) Call(method string) {
	o.m.rpcRequests.WithLabelValues(o.chain, MethodLabel(method)).Inc()
}

func (o rpcObserver) Error(method, class string) {
	if !classes[class] {
		class = "other"
	}
	o.m.rpcErrors.WithLabelValues(o.chain, MethodLabel(method), class).Inc()
}

func (o rpcObserver) Retry(method string) {
	o.m.rpcRetries.WithLabelValues(o.chain, MethodLabel(method)).Inc()
}
