// Package jsonrpc is a JSON-RPC 2.0 client over HTTP, shared by the EVM and
// Solana readers: it batches calls, retries what a node may answer
// differently next time (honouring Retry-After), falls back to one call per
// request when a node refuses batches, halves batches whose answer is too
// large, and reads the answer envelope without decoding the results. It
// imports only the standard library and knows nothing of any chain.
package jsonrpc

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Client is a JSON-RPC 2.0 client over HTTP that batches calls where the node
// accepts batches and retries what a node may answer differently next time:
// transport errors, timeouts, HTTP 429 and 5xx (honouring Retry-After),
// JSON-RPC errors other than "method not found" and "invalid params", and
// truncated or malformed responses.
type Client struct {
	URL        string
	HTTP       *http.Client
	Logger     *slog.Logger
	MaxBatch   int           // most calls in one batch request
	Attempts   int           // tries per call before giving up
	MinBackoff time.Duration // first retry delay; doubles up to MaxBackoff, with jitter
	MaxBackoff time.Duration
	Timeout    time.Duration // per HTTP request, the whole answer read included

	// MaxResponse is the largest answer read, in bytes (after gzip): a node
	// or proxy gone wrong must not be able to make us hold gigabytes. A
	// batch whose answer is larger is sent again in smaller batches.
	MaxResponse int64

	// Observer, when set, hears of every call, failure and retry (for
	// metrics).
	Observer Observer

	// PoisonAnswers, for tests, overwrites the answers BatchCallThen
	// releases, so that a value still pointing into one shows.
	PoisonAnswers bool

	noBatch  atomic.Bool  // set once the node refused a batch
	batchCap atomic.Int64 // most calls per batch after a too large answer; 0: MaxBatch
	nextID   atomic.Uint64
}

// DefaultMaxResponse is the answer size NewClient allows: far above a
// batch of the largest blocks seen (an Ethereum block's traces run to a few
// MB), far below what would exhaust memory.
const DefaultMaxResponse = 256 << 20

// NewClient returns a client of the node at url with defaults fit for public
// and local nodes alike.
func NewClient(url string) *Client {
	return &Client{
		URL:        url,
		HTTP:       &http.Client{Transport: transport()},
		Logger:     slog.New(slog.DiscardHandler),
		MaxBatch:   100,
		Attempts:   10,
		MinBackoff: 250 * time.Millisecond,
		MaxBackoff: 30 * time.Second,
		Timeout:    60 * time.Second,

		MaxResponse: DefaultMaxResponse,
	}
}

// maxIdlePerHost is how many idle connections to the node a client keeps:
// the EVM fetcher has up to three requests in flight for each block of its
// window (120 at once by default), and net/http's default of 2 closed all
// but two after each round, to open them again for the next: 64 still
// cost a fifth more system time, in connects and closes, once the block,
// its receipts and its traces were asked for at once.
const maxIdlePerHost = 256

// transport is net/http's default transport keeping maxIdlePerHost idle
// connections to a node.
func transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxIdlePerHost
	t.MaxIdleConns = max(t.MaxIdleConns, maxIdlePerHost)
	return t
}

// Request is one call of a batch. After BatchCall, Result holds the raw
// result (JSON null when the node answered null) or Err the final error.
type Request struct {
	Method string
	Params []any
	Result json.RawMessage
	Err    error

	// Loose lets the client leave the result of a call sent alone unread
	// (parseAnswers): Result then runs from the result to the end of the
	// answer's object. A caller that sets it decodes Result as exactly one
	// value, and when that fails, calls Exact and decodes again if it
	// reports true: only an answer with members after its result (which no
	// node here sends) takes the second pass.
	Loose  bool
	answer []byte // the whole answer, while Result is bounded loosely
}

// RPCError is an error object a node answered with.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Permanent reports whether asking again cannot help: the node does not have
// the method or refuses the parameters.
func (e *RPCError) Permanent() bool { return e.Code == -32601 || e.Code == -32602 }

// IsMethodNotFound reports whether err says the node lacks the method. Nodes
// disagree on the code, so the message counts too.
func IsMethodNotFound(err error) bool {
	var re *RPCError
	if !errors.As(err, &re) {
		return false
	}
	if re.Code == -32601 {
		return true
	}
	msg := bytes.ToLower([]byte(re.Message))
	return bytes.Contains(msg, []byte("not found")) && bytes.Contains(msg, []byte("method")) ||
		bytes.Contains(msg, []byte("not supported")) || bytes.Contains(msg, []byte("unsupported")) ||
		bytes.Contains(msg, []byte("not available")) || bytes.Contains(msg, []byte("does not exist"))
}

// Call makes one call and decodes its result into result (which may be a
// *json.RawMessage). A result that does not decode into result is a
// malformed answer, asked again like any other node fault. Its errors, like
// those BatchCall leaves in each Request, say what went wrong but not the
// method: the caller names that, with the block or node it concerns.
func (c *Client) Call(ctx context.Context, result any, method string, params ...any) error {
	for attempt := 1; ; attempt++ {
		r := &Request{Method: method, Params: params}
		if err := c.BatchCall(ctx, []*Request{r}); err != nil {
			return err
		}
		if r.Err != nil {
			return r.Err
		}
		err := json.Unmarshal(r.Result, result)
		if err == nil {
			return nil
		}
		err = &FaultError{Method: method, Fault: fmt.Sprintf("result does not decode: %v: %s", err, snippet(r.Result))}
		c.observer().Error(method, ClassDecode)
		if attempt >= c.Attempts {
			return err
		}
		c.observer().Retry(method)
		d := c.backoff(attempt)
		c.Logger.Warn("rpc call failed, retrying", "method", method, "error", err, "attempt", attempt, "wait", d.Round(time.Millisecond))
		if !sleep(ctx, d) {
			return ctx.Err()
		}
	}
}

// BatchCall makes every call of reqs, in batches of at most MaxBatch, and
// retries the calls that failed in a retryable way. It returns an error only
// when ctx ends; each request's own outcome is in its Result or Err.
func (c *Client) BatchCall(ctx context.Context, reqs []*Request) error {
	return c.batchCall(ctx, reqs, nil)
}

// BatchCallThen is BatchCall followed by use, after which the answers'
// buffers are used again for later answers: the Results of reqs are set to
// nil, and use must keep nothing of them (copy what it keeps). An answer
// of a megabyte a block, made anew each time and zeroed before it was
// read, was the ingester's largest allocation. An answer that holds an
// error is not reused: errors may keep parts of it.
func (c *Client) BatchCallThen(ctx context.Context, reqs []*Request, use func() error) error {
	return c.GroupsThen(ctx, [][]*Request{reqs}, nil, use)
}

// GroupsThen is BatchCallThen for several groups of calls, each group
// BatchCall'ed concurrently with the others (its own requests to the
// node), and use called once when all are answered. A node works on
// concurrent requests at once and on a batch's calls one after another:
// calls that do not depend on each other wait for the slowest alone.
//
// lead, when not nil, is called once the first group is answered; when it
// returns false the other groups are of no use (the first group's answer
// says so: a block the node does not have yet), and their calls are
// canceled rather than retried: they end with context.Canceled, and use
// is still called.
func (c *Client) GroupsThen(ctx context.Context, groups [][]*Request, lead func() bool, use func() error) error {
	bodies := make([][][]byte, len(groups))
	errs := make([]error, len(groups))
	rest, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, g := range groups[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.batchCall(rest, g, &bodies[i+1]) != nil {
				for _, r := range g {
					r.Err = cmp.Or(r.Err, rest.Err())
				}
			}
		}()
	}
	if len(groups) > 0 {
		errs[0] = c.batchCall(ctx, groups[0], &bodies[0])
		if errs[0] == nil && lead != nil && !lead() {
			cancel()
		}
	}
	wg.Wait()
	err := cmp.Or(errs[0], ctx.Err()) // batchCall fails only when its context ends
	if err == nil {
		err = use()
	}
	for i, g := range groups {
		for _, r := range g {
			r.Result, r.answer = nil, nil
		}
		for _, b := range bodies[i] {
			if c.PoisonAnswers {
				for i := range b {
					b[i] = 0xff
				}
			}
			putAnswer(b)
		}
	}
	return err
}

// batchCall is BatchCall; when bodies is not nil, the answers are read
// into buffers of the pool, and those whose calls all succeeded are
// appended to *bodies for the caller to release.
func (c *Client) batchCall(ctx context.Context, reqs []*Request, bodies *[][]byte) error {
	obs := c.observer()
	pending := reqs
	for attempt := 1; len(pending) > 0; attempt++ {
		var wait time.Duration
		var retry []*Request
		for start := 0; start < len(pending); {
			chunk := pending[start:min(start+c.batchSize(), len(pending))]
			start += len(chunk)
			err := c.send(ctx, chunk, bodies)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			for _, r := range chunk {
				if err != nil {
					r.Err = err
				}
				if r.Err == nil {
					continue
				}
				obs.Error(r.Method, ErrorClass(r.Err))
				if retryable(r.Err) && attempt < c.Attempts {
					retry = append(retry, r)
					obs.Retry(r.Method)
				}
			}
			var he *httpError
			if errors.As(err, &he) && he.retryAfter > wait {
				wait = he.retryAfter
			}
		}
		if len(retry) == 0 {
			return nil
		}
		if d := c.backoff(attempt); d > wait {
			wait = d
		}
		c.Logger.Warn("rpc calls failed, retrying", "calls", len(retry), "method", retry[0].Method,
			"error", retry[0].Err, "attempt", attempt, "wait", wait.Round(time.Millisecond))
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		for _, r := range retry {
			r.Err, r.Result, r.answer = nil, nil, nil
		}
		pending = retry
	}
	return nil
}

// batchSize is the most calls sent in one request now: MaxBatch, one once
// the node refused a batch, and fewer after an answer too large to read.
func (c *Client) batchSize() int {
	if c.noBatch.Load() || c.MaxBatch < 1 {
		return 1
	}
	if n := int(c.batchCap.Load()); n > 0 && n < c.MaxBatch {
		return n
	}
	return c.MaxBatch
}

// backoff is the delay before the next attempt: exponential with full jitter
// in its upper half, so that many clients do not retry in step. It is
// chainquery.Backoff's schedule with jitter; this package imports only the
// standard library, so it keeps these few lines (and sleep) of its own.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.MinBackoff << min(attempt-1, 16)
	if d > c.MaxBackoff || d <= 0 {
		d = c.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends; it reports whether to go on.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func retryable(err error) bool {
	var re *RPCError
	if errors.As(err, &re) {
		return !re.Permanent()
	}
	var he *httpError
	if errors.As(err, &he) {
		return he.status == http.StatusTooManyRequests || he.status >= 500 || he.status == http.StatusRequestTimeout
	}
	return !errors.Is(err, context.Canceled)
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

// send posts one batch (or a single call) and sets each request's Result or
// Err. The error it returns concerns the whole exchange. When bodies is not
// nil, the answer is read into a buffer of the pool, appended to *bodies
// when every call of the batch succeeded.
func (c *Client) send(ctx context.Context, reqs []*Request, bodies *[][]byte) error {
	msgs := make([]rpcRequest, len(reqs))
	ids := make([]uint64, len(reqs))
	obs := c.observer()
	for i, r := range reqs {
		obs.Call(r.Method)
		params := r.Params
		if params == nil {
			params = []any{}
		}
		ids[i] = c.nextID.Add(1)
		msgs[i] = rpcRequest{"2.0", ids[i], r.Method, params}
		r.Err, r.Result, r.answer = nil, nil, nil
	}
	var body []byte
	var err error
	if len(reqs) > 1 {
		body, err = json.Marshal(msgs)
	} else {
		body, err = json.Marshal(msgs[0])
	}
	if err != nil {
		return err
	}
	resp, err := c.post(ctx, body, bodies != nil)
	if errors.Is(err, errTooLarge) && len(reqs) > 1 {
		// Fewer calls per request make smaller answers: halve the batches
		// from now on rather than fail calls that fit one at a time.
		half := int64(len(reqs) / 2)
		if cur := c.batchCap.Load(); cur == 0 || half < cur {
			c.batchCap.Store(half)
			c.Logger.Warn("node answer too large; sending smaller batches", "calls", half, "limit_bytes", c.MaxResponse)
		}
	}
	if err != nil {
		return exchangeError(reqs, err)
	}
	err = matchAnswers(reqs, ids, resp)
	if bodies != nil && err == nil && !slices.ContainsFunc(reqs, func(r *Request) bool { return r.Err != nil }) {
		*bodies = append(*bodies, resp)
	}
	var refused *batchRefusedError
	if errors.As(err, &refused) {
		c.noBatch.Store(true)
		c.Logger.Warn("node refused a JSON-RPC batch; sending calls one by one", "error", refused.err)
	}
	return err
}
