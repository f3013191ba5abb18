package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// rpcResponse is one answer of a JSON-RPC exchange. Result is nil when the
// answer has no result member, and the text null when the result is null.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
	loose  bool            // Result runs to the end of the object: see parseAnswers
}

// parseAnswers splits a JSON-RPC answer (one response object or an array of
// them) into its responses without decoding the results: each Result is a
// slice of data. encoding/json would validate the whole body and then scan
// every result a second time to copy it into a json.RawMessage; on a local
// node that double pass was the largest single cost of ingestion
// (docs/benchmarks.md, "EVM ingestion vs the raw fetch rate"). The results
// are decoded (and so validated) by whoever reads them.
//
// With loose, a single response object whose id comes before its result
// (as every node here writes it) is not read past the result's start: its
// Result runs to the object's closing brace, and is marked loose. Finding a
// large result's end costs a scan of all of it (5% of the ingester's CPU on
// Polygon-sized blocks, docs/benchmarks.md, issue 30, session 19), which
// the decoder makes anyway. A decoder that reads one value and nothing
// after it accepts such a Result exactly when no member follows the
// result: a value followed by a comma is not one value.
func parseAnswers(data []byte, loose bool) ([]rpcResponse, error) {
	p := envelopeParser{data: data}
	p.space()
	switch p.peek() {
	case '{':
		p.loose = loose
		r, err := p.response()
		if err != nil {
			return nil, err
		}
		if p.space(); p.i != len(p.data) {
			return nil, errors.New("data after the response")
		}
		return []rpcResponse{r}, nil
	case '[':
		p.i++
		var out []rpcResponse
		for {
			p.space()
			if p.peek() == ']' && len(out) == 0 {
				p.i++
				break
			}
			r, err := p.response()
			if err != nil {
				return nil, err
			}
			out = append(out, r)
			p.space()
			if c := p.next(); c == ']' {
				break
			} else if c != ',' {
				return nil, p.fail("want , or ]")
			}
		}
		if p.space(); p.i != len(p.data) {
			return nil, errors.New("data after the responses")
		}
		return out, nil
	}
	return nil, errors.New("empty or non-JSON response")
}

type envelopeParser struct {
	data  []byte
	i     int
	loose bool // see parseAnswers
}

func (p *envelopeParser) peek() byte {
	if p.i < len(p.data) {
		return p.data[p.i]
	}
	return 0
}

func (p *envelopeParser) next() byte {
	c := p.peek()
	p.i++
	return c
}

func (p *envelopeParser) space() {
	for p.i < len(p.data) && isSpace(p.data[p.i]) {
		p.i++
	}
}

func (p *envelopeParser) fail(what string) error {
	if p.i >= len(p.data) {
		return errors.New("truncated response")
	}
	return fmt.Errorf("malformed response at byte %d: %s", p.i, what)
}

// response reads one response object.
func (p *envelopeParser) response() (rpcResponse, error) {
	var r rpcResponse
	if p.next() != '{' {
		return r, p.fail("want {")
	}
	for first := true; ; first = false {
		p.space()
		if p.peek() == '}' && first {
			p.i++
			return r, nil
		}
		key, err := p.value()
		if err != nil {
			return r, err
		}
		if p.space(); p.next() != ':' {
			return r, p.fail("want :")
		}
		p.space()
		key = bytes.Trim(key, `"`)
		if p.loose && r.ID != nil && bytes.EqualFold(key, []byte("result")) {
			if end := p.objectEnd(); end > p.i {
				r.Result, r.loose = p.data[p.i:end], true
				p.i = len(p.data)
				return r, nil
			}
		}
		val, err := p.value()
		if err != nil {
			return r, err
		}
		// encoding/json matches keys without regard to case; so does this.
		switch {
		case bytes.EqualFold(key, []byte("id")):
			r.ID = val
		case bytes.EqualFold(key, []byte("result")):
			r.Result = val
		case bytes.EqualFold(key, []byte("error")):
			r.Error = nil
			if string(val) != "null" {
				r.Error = new(RPCError)
				if err := json.Unmarshal(val, r.Error); err != nil {
					return r, fmt.Errorf("malformed error object: %w", err)
				}
			}
		}
		p.space()
		switch p.next() {
		case ',':
		case '}':
			return r, nil
		default:
			p.i--
			return r, p.fail("want , or }")
		}
	}
}

// objectEnd returns where the text before the answer's closing brace ends
// (white space left out), or -1 when the answer does not end with a brace.
func (p *envelopeParser) objectEnd() int {
	j := len(p.data)
	for j > p.i && isSpace(p.data[j-1]) {
		j--
	}
	if j == p.i || p.data[j-1] != '}' {
		return -1
	}
	j--
	for j > p.i && isSpace(p.data[j-1]) {
		j--
	}
	return j
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// value returns the bytes of the JSON value at the cursor and moves past it.
// It checks only what it needs to find the value's end; results are fully
// checked when decoded.
func (p *envelopeParser) value() ([]byte, error) {
	start := p.i
	switch p.peek() {
	case '"':
		if err := p.skipString(); err != nil {
			return nil, err
		}
	case '{', '[':
		depth := 0
		for p.i < len(p.data) {
			switch p.data[p.i] {
			case '"':
				if err := p.skipString(); err != nil {
					return nil, err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			p.i++
			if depth == 0 {
				return p.data[start:p.i], nil
			}
		}
		return nil, p.fail("unclosed value")
	default:
		for p.i < len(p.data) {
			c := p.data[p.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			p.i++
		}
		if p.i == start {
			return nil, p.fail("want a value")
		}
		if p.i == len(p.data) {
			return nil, p.fail("truncated value")
		}
	}
	return p.data[start:p.i], nil
}

// skipString moves past the string at the cursor. Results are mostly long
// hex strings, so it looks for the next quote with bytes.IndexByte rather
// than byte by byte (a share of the ingester's CPU: docs/benchmarks.md,
// "What changed, each from a profile", Ingestion): the quote ends the
// string unless an odd run of backslashes escapes it.
func (p *envelopeParser) skipString() error {
	p.i++ // opening quote
	for {
		j := bytes.IndexByte(p.data[p.i:], '"')
		if j < 0 {
			p.i = len(p.data)
			return p.fail("unclosed string")
		}
		end := p.i + j
		// The byte before this stretch is a quote (the opening one, or an
		// escaped one), so the run of backslashes cannot reach past p.i.
		k := end
		for k > p.i && p.data[k-1] == '\\' {
			k--
		}
		p.i = end + 1
		if (end-k)%2 == 0 {
			return nil
		}
	}
}
