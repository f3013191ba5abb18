// Package solanareplay answers Solana JSON-RPC from recorded blocks, without
// a validator. Its Node is the node of the ingester's tests (solanatest
// serves it on httptest), and of chainquery dev, which replays the recorded
// mainnet block this package embeds (Mainnet) into its database through the
// same ingester as chainquery ingest solana.
//
// It imports only the standard library, and not testing, since the
// chainquery binary holds it.
package solanareplay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Node is a Solana JSON-RPC node that knows only the blocks and accounts
// it was given. It answers getSlot, getBlocks, getBlocksWithLimit, getBlock,
// getBlockTime and getMultipleAccounts, singly or in batches. It is an
// http.Handler, safe for concurrent use.
type Node struct {
	mu       sync.Mutex
	blocks   map[uint64]json.RawMessage // slot -> getBlock result
	accounts map[string][]byte          // address -> data
	owners   map[string]string          // address -> owner program, when not Metaplex
	head     uint64
	nulls    map[uint64]int // slot -> how many more getBlock calls answer null

	Calls atomic.Int64 // requests served, batches counting once per call
}

// NewNode returns a node that knows no block yet.
func NewNode() *Node {
	return &Node{blocks: map[uint64]json.RawMessage{}, accounts: map[string][]byte{}, owners: map[string]string{}, nulls: map[uint64]int{}}
}

// AddBlock makes raw (a getBlock result) the block at slot and moves the
// head up to it.
func (n *Node) AddBlock(slot uint64, raw json.RawMessage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blocks[slot] = raw
	n.head = max(n.head, slot)
}

// SetHead sets the confirmed slot that getSlot answers.
func (n *Node) SetHead(slot uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.head = slot
}

// NullFor makes the next count getBlock calls for slot answer null, as a
// node behind a load balancer sometimes does.
func (n *Node) NullFor(slot uint64, count int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nulls[slot] = count
}

// AddAccount makes data the data of the account at address.
func (n *Node) AddAccount(address string, data []byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.accounts[address] = data
}

// AddOwnedAccount is AddAccount for an account of another program than
// Metaplex's (a Token-2022 mint, say).
func (n *Node) AddOwnedAccount(address, owner string, data []byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.accounts[address] = data
	n.owners[address] = owner
}

// SetBlockhash rewrites the blockhash of the block at slot, as a node of
// another chain or fork would answer. It panics if no block was added at
// slot.
func (n *Node) SetBlockhash(slot uint64, hash string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b map[string]json.RawMessage
	if err := json.Unmarshal(n.blocks[slot], &b); err != nil || b == nil {
		panic(fmt.Sprintf("solanareplay: SetBlockhash: no block at slot %d", slot))
	}
	b["blockhash"], _ = json.Marshal(hash)
	n.blocks[slot], _ = json.Marshal(b)
}

// Server is a Node listening on loopback.
type Server struct {
	URL string // http://127.0.0.1:port
	srv *http.Server
}

// Serve serves n on 127.0.0.1, on a port the system picks, until Close.
func Serve(n *Node) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("solanareplay: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: n, ReadHeaderTimeout: 10 * time.Second}}
	go s.srv.Serve(ln) // ends with http.ErrServerClosed at Close
	return s, nil
}

// Close stops the server at once, dropping the requests in flight.
func (s *Server) Close() error { return s.srv.Close() }

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params []any           `json:"params"`
}

// ServeHTTP answers one JSON-RPC request or a batch of them.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	body = bytes.TrimSpace(body)
	var reqs []request
	batch := len(body) > 0 && body[0] == '['
	if batch {
		if err := json.Unmarshal(body, &reqs); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	} else {
		var one request
		if err := json.Unmarshal(body, &one); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reqs = []request{one}
	}
	var out bytes.Buffer
	if batch {
		out.WriteByte('[')
	}
	for i, q := range reqs {
		n.Calls.Add(1)
		if i > 0 {
			out.WriteByte(',')
		}
		result, rpcErr := n.answer(q)
		id := q.ID
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(id)
		if rpcErr != "" {
			out.WriteString(`,"error":{"code":-32602,"message":` + strconv.Quote(rpcErr) + `}}`)
			continue
		}
		out.WriteString(`,"result":`)
		out.Write(result)
		out.WriteByte('}')
	}
	if batch {
		out.WriteByte(']')
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out.Bytes())
}

func uintParam(p []any, i int) (uint64, bool) {
	if i >= len(p) {
		return 0, false
	}
	f, ok := p[i].(float64)
	return uint64(f), ok && f >= 0
}

func (n *Node) answer(q request) (json.RawMessage, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch q.Method {
	case "getSlot":
		return json.RawMessage(strconv.FormatUint(n.head, 10)), ""
	case "getBlocks", "getBlocksWithLimit":
		from, ok := uintParam(q.Params, 0)
		if !ok {
			return nil, "start slot required"
		}
		to, limit := n.head, uint64(1<<63)
		if v, ok := uintParam(q.Params, 1); ok {
			if q.Method == "getBlocks" {
				to = min(v, n.head)
			} else {
				limit = v
			}
		}
		var slots []uint64
		for slot := range n.blocks {
			if slot >= from && slot <= to {
				slots = append(slots, slot)
			}
		}
		slices.Sort(slots)
		slots = slots[:min(uint64(len(slots)), limit)]
		b, _ := json.Marshal(append([]uint64{}, slots...))
		return b, ""
	case "getBlock":
		slot, ok := uintParam(q.Params, 0)
		if !ok {
			return nil, "slot required"
		}
		if n.nulls[slot] > 0 {
			n.nulls[slot]--
			return json.RawMessage("null"), ""
		}
		if b, ok := n.blocks[slot]; ok {
			return b, ""
		}
		return nil, "Slot " + strconv.FormatUint(slot, 10) + " was skipped, or missing in long-term storage"
	case "getBlockTime":
		slot, _ := uintParam(q.Params, 0)
		b, ok := n.blocks[slot]
		if !ok {
			return json.RawMessage("null"), ""
		}
		var t struct {
			BlockTime json.RawMessage `json:"blockTime"`
		}
		json.Unmarshal(b, &t)
		return t.BlockTime, ""
	case "getMultipleAccounts":
		var keys []any
		if len(q.Params) > 0 {
			keys, _ = q.Params[0].([]any)
		}
		var vals []any
		for _, k := range keys {
			addr, _ := k.(string)
			d, ok := n.accounts[addr]
			if !ok {
				vals = append(vals, nil)
				continue
			}
			owner := n.owners[addr]
			if owner == "" {
				owner = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s"
			}
			vals = append(vals, map[string]any{"data": []string{base64.StdEncoding.EncodeToString(d), "base64"},
				"owner": owner, "executable": false, "lamports": 5616720})
		}
		b, _ := json.Marshal(map[string]any{"context": map[string]any{"slot": n.head}, "value": vals})
		return b, ""
	}
	return nil, "method not found: " + q.Method
}
