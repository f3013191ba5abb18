// Package faultproxy is a JSON-RPC proxy for tests that puts a real node's
// answers through every fault a node, a load balancer or a network has been
// seen to produce: empty and short batches, answers out of order or with
// wrong ids, errors inside a batch, HTML error pages, truncated, gzip,
// oversized, dripping and reset bodies. The ingesters must come out of all
// of them with exactly the node's data.
package faultproxy

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Fault names one way of answering wrongly.
type Fault string

// The faults, in the order All lists them.
const (
	EmptyBatch   Fault = "empty-batch"    // a batch answered with []
	ShortBatch   Fault = "short-batch"    // the last answer of a batch left out
	OutOfOrder   Fault = "out-of-order"   // a batch's answers reversed (correct: ids say which is which)
	MissingIDs   Fault = "missing-ids"    // every id removed
	DuplicateID  Fault = "duplicate-id"   // the first answer given twice, in place of the second
	MistypedIDs  Fault = "mistyped-ids"   // ids as strings
	ErrorInBatch Fault = "error-in-batch" // one answer an internal error, one an error with a null id
	HTML200      Fault = "html-200"       // a gateway's HTML page with status 200
	HTML502      Fault = "html-502"       // a gateway's HTML page with status 502
	NotJSON      Fault = "not-json"       // plain text with status 200
	Truncated    Fault = "truncated"      // the first half of the answer, then a clean end
	Gzip         Fault = "gzip"           // the answer gzipped, announced (correct: the client must read it)
	GzipUnasked  Fault = "gzip-unasked"   // the answer gzipped without saying so
	Huge         Fault = "huge"           // 100 MB of an array that never ends
	Drip         Fault = "drip"           // the answer a few bytes at a time, slower than the client's timeout
	Reset        Fault = "reset"          // half the answer, then a TCP reset
)

// All lists every fault.
var All = []Fault{EmptyBatch, ShortBatch, OutOfOrder, MissingIDs, DuplicateID, MistypedIDs, ErrorInBatch,
	HTML200, HTML502, NotJSON, Truncated, Gzip, GzipUnasked, Huge, Drip, Reset}

// batchOnly are the faults that need a batch request to mean anything.
var batchOnly = map[Fault]bool{EmptyBatch: true, ShortBatch: true, OutOfOrder: true, DuplicateID: true}

// Single are the faults of All that a request of one call can be given:
// those a client meets that sends no batch.
var Single = func() []Fault {
	var out []Fault
	for _, f := range All {
		if !batchOnly[f] {
			out = append(out, f)
		}
	}
	return out
}()

// Proxy forwards JSON-RPC requests to a node, answering some of them with a
// fault: every Every-th request gets the next fault of Faults until each has
// been given Rounds times; the rest pass through unchanged.
type Proxy struct {
	URL string // where to send requests

	target string
	faults []Fault
	every  int
	rounds int
	drip   time.Duration // total time a dripped answer takes

	mu       sync.Mutex
	n        int  // requests seen
	next     int  // index into the schedule
	pending  bool // the next fault needs a batch and was due
	given    map[Fault]int
	srv      *httptest.Server
	upstream *http.Client
}

// Options configure a Proxy.
type Options struct {
	Faults []Fault       // default All
	Every  int           // a fault every Every-th request; default 2
	Rounds int           // times each fault is given; default 1
	Drip   time.Duration // how long a dripped answer takes; set it above the client's timeout; default 3s
	Client *http.Client  // to the node; default a plain client
}

// Start starts a proxy in front of the JSON-RPC node at target, listening on
// 127.0.0.1. Close stops it.
func Start(target string, o Options) *Proxy {
	p := &Proxy{target: target, faults: o.Faults, every: o.Every, rounds: o.Rounds, drip: o.Drip,
		given: map[Fault]int{}, upstream: o.Client}
	if p.faults == nil {
		p.faults = All
	}
	if p.every < 1 {
		p.every = 2
	}
	if p.rounds < 1 {
		p.rounds = 1
	}
	if p.drip <= 0 {
		p.drip = 3 * time.Second
	}
	if p.upstream == nil {
		p.upstream = &http.Client{}
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	return p
}

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.CloseClientConnections(); p.srv.Close() }

// Given returns how many times each fault was given.
func (p *Proxy) Given() map[Fault]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Fault]int, len(p.given))
	for f, n := range p.given {
		out[f] = n
	}
	return out
}

// Done reports whether every fault was given Rounds times.
func (p *Proxy) Done() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next >= len(p.faults)*p.rounds
}

// Missing lists the faults not yet given Rounds times.
func (p *Proxy) Missing() []Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Fault
	for _, f := range p.faults {
		if p.given[f] < p.rounds {
			out = append(out, f)
		}
	}
	return out
}

// pick returns the fault for a request, or "" to pass it through. A fault
// that needs a batch, due on a request of one call, goes to the next batch
// whenever it comes: a client asks for few batches (receipts and traces of
// blocks with transactions), and waiting for one to fall on an Every-th
// request left the schedule stuck once the chain's few were fetched.
func (p *Proxy) pick(batch bool) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.next >= len(p.faults)*p.rounds {
		return ""
	}
	f := p.faults[p.next%len(p.faults)]
	switch {
	case batchOnly[f] && batch && p.pending:
	case p.n%p.every != 0:
		return ""
	case batchOnly[f] && !batch:
		p.pending = true
		return "" // kept for the next batch
	}
	p.pending = false
	p.next++
	p.given[f]++
	return f
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	batch := bytes.HasPrefix(bytes.TrimSpace(body), []byte("["))
	f := p.pick(batch)
	switch f {
	case EmptyBatch:
		writeJSON(w, []byte("[]"))
		return
	case HTML200, HTML502:
		w.Header().Set("Content-Type", "text/html")
		if f == HTML502 {
			w.WriteHeader(http.StatusBadGateway)
		}
		io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>\n")
		return
	case NotJSON:
		io.WriteString(w, "upstream connect error or disconnect/reset before headers. reset reason: overflow")
		return
	case Huge:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "[")
		chunk := []byte(strings.Repeat(`{"jsonrpc":"2.0","id":1,"result":"0x0"},`, 1<<10))
		for written := 0; written < 100<<20; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client gave up, as it should
			}
		}
		return
	}

	answer, status, err := p.forward(r, body)
	if err != nil {
		http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	if status != http.StatusOK {
		w.WriteHeader(status)
		w.Write(answer)
		return
	}
	switch f {
	case "":
		writeJSON(w, answer)
	case ShortBatch, OutOfOrder, MissingIDs, DuplicateID, MistypedIDs, ErrorInBatch:
		writeJSON(w, rewrite(f, answer))
	case Truncated:
		writeJSON(w, answer[:len(answer)/2])
	case Gzip:
		w.Header().Set("Content-Encoding", "gzip")
		writeJSON(w, gz(answer))
	case GzipUnasked:
		writeJSON(w, gz(answer))
	case Drip:
		p.dripOut(w, r, answer)
	case Reset:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
		w.Write(answer[:len(answer)/2])
		http.NewResponseController(w).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // a reset, not a clean close
			}
			conn.Close()
		}
	}
}

// forward sends the request to the node and returns its answer.
func (p *Proxy) forward(r *http.Request, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, p.target, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.upstream.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return answer, resp.StatusCode, err
}

// dripOut writes answer in 32 parts spread over the proxy's drip time, so
// that a client with a shorter timeout gives up before the end.
func (p *Proxy) dripOut(w http.ResponseWriter, r *http.Request, answer []byte) {
	w.Header().Set("Content-Type", "application/json")
	step := max(len(answer)/32, 1)
	pause := p.drip / 32
	for i := 0; i < len(answer); i += step {
		if _, err := w.Write(answer[i:min(i+step, len(answer))]); err != nil {
			return
		}
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(pause):
		}
	}
}

func writeJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// rewrite applies a fault that changes the answers' envelope: it decodes
// them generically, changes them and encodes them again.
func rewrite(f Fault, answer []byte) []byte {
	var many []map[string]json.RawMessage
	single := false
	if json.Unmarshal(answer, &many) != nil {
		var one map[string]json.RawMessage
		if json.Unmarshal(answer, &one) != nil {
			return answer
		}
		many, single = []map[string]json.RawMessage{one}, true
	}
	switch f {
	case ShortBatch:
		many = many[:len(many)-1]
	case OutOfOrder:
		for i, j := 0, len(many)-1; i < j; i, j = i+1, j-1 {
			many[i], many[j] = many[j], many[i]
		}
	case MissingIDs:
		for _, a := range many {
			delete(a, "id")
		}
	case DuplicateID:
		if len(many) > 1 {
			many[1] = many[0]
		}
	case MistypedIDs:
		for _, a := range many {
			a["id"] = json.RawMessage(fmt.Sprintf("%q", string(a["id"])))
		}
	case ErrorInBatch:
		many[0] = map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": many[0]["id"],
			"error": json.RawMessage(`{"code":-32603,"message":"internal error: upstream timed out"}`)}
		if len(many) > 1 {
			many[1] = map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": json.RawMessage("null"),
				"error": json.RawMessage(`{"code":-32000,"message":"request dropped"}`)}
		}
	}
	var out []byte
	if single && len(many) == 1 {
		out, _ = json.Marshal(many[0])
	} else {
		out, _ = json.Marshal(many)
	}
	return out
}
