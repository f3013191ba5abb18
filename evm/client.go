// Package evm reads EVM chains over standard Ethereum JSON-RPC: a client that
// batches and retries, decoding of blocks, receipts and traces (Parity
// trace_block and geth's callTracer) into chainquery records, and a fetcher
// that assembles complete blocks.
package evm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	Timeout    time.Duration // per HTTP request

	noBatch atomic.Bool // set once the node refused a batch
	nextID  atomic.Uint64
}

// NewClient returns a client of the node at url with defaults fit for public
// and local nodes alike.
func NewClient(url string) *Client {
	return &Client{
		URL:        url,
		HTTP:       &http.Client{},
		Logger:     slog.New(slog.DiscardHandler),
		MaxBatch:   100,
		Attempts:   10,
		MinBackoff: 250 * time.Millisecond,
		MaxBackoff: 30 * time.Second,
		Timeout:    60 * time.Second,
	}
}

// Request is one call of a batch. After BatchCall, Result holds the raw
// result (JSON null when the node answered null) or Err the final error.
type Request struct {
	Method string
	Params []any
	Result json.RawMessage
	Err    error
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

// httpError is a non-200 answer.
type httpError struct {
	status     int
	retryAfter time.Duration
	body       string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("http %d: %s", e.status, e.body)
}

// Call makes one call and decodes its result into result (which may be a
// *json.RawMessage).
func (c *Client) Call(ctx context.Context, result any, method string, params ...any) error {
	r := &Request{Method: method, Params: params}
	if err := c.BatchCall(ctx, []*Request{r}); err != nil {
		return err
	}
	if r.Err != nil {
		return r.Err
	}
	if err := json.Unmarshal(r.Result, result); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

// BatchCall makes every call of reqs, in batches of at most MaxBatch, and
// retries the calls that failed in a retryable way. It returns an error only
// when ctx ends; each request's own outcome is in its Result or Err.
func (c *Client) BatchCall(ctx context.Context, reqs []*Request) error {
	pending := reqs
	for attempt := 1; len(pending) > 0; attempt++ {
		var wait time.Duration
		var retry []*Request
		for start := 0; start < len(pending); start += c.batchSize() {
			chunk := pending[start:min(start+c.batchSize(), len(pending))]
			err := c.send(ctx, chunk)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			for _, r := range chunk {
				if err != nil {
					r.Err = err
				}
				if r.Err != nil && retryable(r.Err) && attempt < c.Attempts {
					retry = append(retry, r)
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
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		for _, r := range retry {
			r.Err, r.Result = nil, nil
		}
		pending = retry
	}
	return nil
}

func (c *Client) batchSize() int {
	if c.noBatch.Load() || c.MaxBatch < 1 {
		return 1
	}
	return c.MaxBatch
}

// backoff is the delay before the next attempt: exponential with full jitter
// in its upper half, so that many clients do not retry in step.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.MinBackoff << min(attempt-1, 16)
	if d > c.MaxBackoff || d <= 0 {
		d = c.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
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

type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// send posts one batch (or a single call) and sets each request's Result or
// Err. The error it returns concerns the whole exchange.
func (c *Client) send(ctx context.Context, reqs []*Request) error {
	batch := len(reqs) > 1
	msgs := make([]rpcRequest, len(reqs))
	byID := make(map[uint64]*Request, len(reqs))
	for i, r := range reqs {
		params := r.Params
		if params == nil {
			params = []any{}
		}
		id := c.nextID.Add(1)
		msgs[i] = rpcRequest{"2.0", id, r.Method, params}
		byID[id] = r
		r.Err, r.Result = nil, nil
	}
	var body []byte
	var err error
	if batch {
		body, err = json.Marshal(msgs)
	} else {
		body, err = json.Marshal(msgs[0])
	}
	if err != nil {
		return err
	}
	resp, err := c.post(ctx, body)
	if err != nil {
		return err
	}
	answers, err := parseAnswers(resp)
	if err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	if batch && answers[0].Error != nil && bytes.TrimSpace(resp)[0] == '{' {
		// The node refused the batch as a whole: ask one by one from now on.
		c.noBatch.Store(true)
		c.Logger.Warn("node refused a JSON-RPC batch; sending calls one by one", "error", answers[0].Error)
		return fmt.Errorf("batch refused: %w", &retryLater{answers[0].Error})
	}
	for _, a := range answers {
		id, perr := strconv.ParseUint(string(bytes.Trim(a.ID, `"`)), 10, 64)
		r := byID[id]
		if perr != nil || r == nil {
			if !batch && len(reqs) == 1 && a.Error != nil {
				reqs[0].Err = a.Error // some nodes drop the id on errors
			}
			continue
		}
		delete(byID, id)
		if a.Error != nil {
			r.Err = a.Error
		} else if a.Result == nil {
			r.Err = errors.New("response has neither result nor error")
		} else {
			r.Result = a.Result
		}
	}
	for _, r := range byID {
		if r.Err == nil {
			r.Err = errors.New("no answer to this call in the response (truncated?)")
		}
	}
	return nil
}

// retryLater wraps an error that is not permanent even though it carries an
// RPC error code that usually is (a refused batch is retried unbatched).
type retryLater struct{ err error }

func (e *retryLater) Error() string { return e.err.Error() }

func (c *Client) post(ctx context.Context, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// net/http quotes the URL, and hosted nodes keep the customer's key
		// in it: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, fmt.Errorf("%s node: %w", strings.ToLower(ue.Op), ue.Err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &httpError{status: resp.StatusCode, retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")), body: snippet(data)}
	}
	return data, nil
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func snippet(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
