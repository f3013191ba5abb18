package jsonrpc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// httpError is a non-200 answer.
type httpError struct {
	status     int
	retryAfter time.Duration
	body       string
}

func (e *httpError) Error() string {
	msg := fmt.Sprintf("http %d", e.status)
	if text := http.StatusText(e.status); text != "" {
		msg += " " + text
	}
	if e.body != "" {
		msg += ": " + e.body
	}
	return msg
}

// errTooLarge is an answer longer than Client.MaxResponse.
var errTooLarge = errors.New("answer too large")

// post sends body and returns the answer's body. Everything about the
// exchange that is not JSON-RPC is checked here: status, size, encoding,
// and the time it takes, the body's last byte included (a node that drips
// its answer is cut off at Timeout like one that never answers).
func (c *Client) post(ctx context.Context, body []byte, pooled bool) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, hideURL(err)
	}
	defer resp.Body.Close()
	limit := c.MaxResponse
	if limit <= 0 {
		limit = DefaultMaxResponse
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: %d bytes announced, the limit is %d", errTooLarge, resp.ContentLength, limit)
	}
	// net/http undoes a gzip Content-Encoding it asked for itself; a body
	// that is gzip all the same (a proxy that compresses unasked, or names
	// it otherwise) is undone here.
	br := bufio.NewReader(resp.Body)
	var rd io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &FaultError{Fault: "a gzip body that does not decode: " + err.Error()}
		}
		defer zr.Close()
		rd = zr
	}
	data, err := readBody(rd, resp.ContentLength, rd == io.Reader(br), limit, pooled)
	if err != nil {
		return nil, fmt.Errorf("read answer (%d bytes read): %w", len(data), hideURL(err))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &httpError{status: resp.StatusCode, retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")), body: excerpt(data)}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		// Gateways answer 200 with an HTML error page: say so rather than
		// report a JSON syntax error.
		if mt, _, _ := mime.ParseMediaType(ct); mt == "text/html" {
			return nil, &FaultError{Fault: "an HTML page instead of JSON: " + excerpt(data)}
		}
	}
	return data, nil
}

// readBody reads at most limit+1 bytes of an answer. When the length is
// announced (size, of the bytes rd gives when plain), the buffer is made
// that size at once: growing it from nothing copied a batch's megabytes
// of blocks and traces several times over (its share of the ingester's
// CPU: docs/benchmarks.md, "What changed, each from a profile", Ingestion).
func readBody(rd io.Reader, size int64, plain bool, limit int64, pooled bool) ([]byte, error) {
	if !plain || size <= 0 || size > limit {
		return io.ReadAll(io.LimitReader(rd, limit+1))
	}
	var data []byte
	if pooled {
		data = getAnswer(int(size))
	} else {
		data = make([]byte, size, size+1)
	}
	n, err := io.ReadFull(rd, data)
	if err != nil {
		return data[:n], err
	}
	// net/http stops at the announced length; read on all the same, so that
	// a reader that gives more is read as io.ReadAll would.
	rest, err := io.ReadAll(io.LimitReader(rd, limit+1-size))
	return append(data, rest...), err
}

// answers holds the buffers of answers that BatchCallThen released, by
// size class: answers[k] those of 2^k bytes. A block's header answer is a
// tenth of its receipts and traces; one pool would hand the small buffers
// to the large answers, which could not use them.
var answers [40]sync.Pool

// getAnswer returns a buffer of size bytes (and room for one more) from
// the pool, or a new one. Its bytes are not zeroed: the answer is read
// over them.
func getAnswer(size int) []byte {
	k := bits.Len(uint(size)) // 2^k > size
	if k >= len(answers) {
		return make([]byte, size, size+1)
	}
	if p, ok := answers[k].Get().(*[]byte); ok {
		return (*p)[:size]
	}
	return make([]byte, size, 1<<k)
}

// putAnswer gives b back to the pool of its size class.
func putAnswer(b []byte) {
	k := bits.Len(uint(cap(b))) - 1 // 2^k <= cap(b)
	if k < 0 || k >= len(answers) {
		return
	}
	b = b[:0]
	answers[k].Put(&b)
}

// hideURL keeps only the cause of a net/http error: it quotes the URL, and
// hosted nodes keep the customer's key in it.
func hideURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s node: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
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

// snippet is a JSON value fit for an error message: its first 200 bytes.
func snippet(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// maxExcerpt is the most of a foreign answer's body an error message shows.
const maxExcerpt = 200

// excerpt is the body of an answer that is not JSON-RPC (a gateway's HTML
// page, a proxy's error text) fit for an error message: its first non-blank
// line, at most maxExcerpt bytes of it, and "…" where anything was cut. A
// whole page of markup would bury the message, and its first line says
// what answered.
func excerpt(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimRight(line, " \t\r")
	cut := len(bytes.TrimSpace(rest)) > 0
	if len(line) > maxExcerpt {
		n := maxExcerpt
		for n > 0 && !utf8.RuneStart(line[n]) {
			n-- // not in the middle of a character
		}
		line, cut = line[:n], true
	}
	if cut {
		return string(line) + "…"
	}
	return string(line)
}
