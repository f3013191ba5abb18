// Package solanatest serves recorded Solana RPC answers from a local HTTP
// server, so that the ingester's tests and benchmarks run against real
// mainnet data without a validator.
package solanatest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chainquery/chainquery/internal/testenv"
)

// Server is a Solana JSON-RPC node that knows only the blocks and accounts
// it was given. It answers getSlot, getBlocks, getBlocksWithLimit, getBlock,
// getBlockTime and getMultipleAccounts, singly or in batches.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	blocks   map[uint64]json.RawMessage // slot -> getBlock result
	accounts map[string][]byte          // address -> data
	owners   map[string]string          // address -> owner program, when not Metaplex
	head     uint64
	nulls    map[uint64]int // slot -> how many more getBlock calls answer null

	Calls atomic.Int64 // requests served, batches counting once per call
}

// NewServer starts a server on 127.0.0.1 and stops it when tb ends.
func NewServer(tb testing.TB) *Server {
	s := &Server{blocks: map[uint64]json.RawMessage{}, accounts: map[string][]byte{}, owners: map[string]string{}, nulls: map[uint64]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// AddBlock makes raw (a getBlock result) the block at slot and moves the
// head up to it.
func (s *Server) AddBlock(slot uint64, raw json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocks[slot] = raw
	s.head = max(s.head, slot)
}

// SetHead sets the confirmed slot that getSlot answers.
func (s *Server) SetHead(slot uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.head = slot
}

// NullFor makes the next n getBlock calls for slot answer null, as a node
// behind a load balancer sometimes does.
func (s *Server) NullFor(slot uint64, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nulls[slot] = n
}

// AddAccount makes data the data of the account at address.
func (s *Server) AddAccount(address string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[address] = data
}

// AddOwnedAccount is AddAccount for an account of another program than
// Metaplex's (a Token-2022 mint, say).
func (s *Server) AddOwnedAccount(address, owner string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[address] = data
	s.owners[address] = owner
}

// SetBlockhash rewrites the blockhash of the block at slot, as a node of
// another chain or fork would answer. The block must have been added.
func (s *Server) SetBlockhash(slot uint64, hash string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b map[string]json.RawMessage
	if err := json.Unmarshal(s.blocks[slot], &b); err != nil || b == nil {
		panic(fmt.Sprintf("solanatest: SetBlockhash: no block at slot %d", slot))
	}
	b["blockhash"], _ = json.Marshal(hash)
	s.blocks[slot], _ = json.Marshal(b)
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params []any           `json:"params"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
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
		s.Calls.Add(1)
		if i > 0 {
			out.WriteByte(',')
		}
		result, rpcErr := s.answer(q)
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

func (s *Server) answer(q request) (json.RawMessage, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch q.Method {
	case "getSlot":
		return json.RawMessage(strconv.FormatUint(s.head, 10)), ""
	case "getBlocks", "getBlocksWithLimit":
		from, ok := uintParam(q.Params, 0)
		if !ok {
			return nil, "start slot required"
		}
		to, limit := s.head, uint64(1<<63)
		if n, ok := uintParam(q.Params, 1); ok {
			if q.Method == "getBlocks" {
				to = min(n, s.head)
			} else {
				limit = n
			}
		}
		var slots []uint64
		for slot := range s.blocks {
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
		if s.nulls[slot] > 0 {
			s.nulls[slot]--
			return json.RawMessage("null"), ""
		}
		if b, ok := s.blocks[slot]; ok {
			return b, ""
		}
		return nil, "Slot " + strconv.FormatUint(slot, 10) + " was skipped, or missing in long-term storage"
	case "getBlockTime":
		slot, _ := uintParam(q.Params, 0)
		b, ok := s.blocks[slot]
		if !ok {
			return json.RawMessage("null"), ""
		}
		var t struct {
			BlockTime json.RawMessage `json:"blockTime"`
		}
		json.Unmarshal(b, &t)
		return t.BlockTime, ""
	case "getMultipleAccounts":
		keys, _ := q.Params[0].([]any)
		var vals []any
		for _, k := range keys {
			d, ok := s.accounts[k.(string)]
			if !ok {
				vals = append(vals, nil)
				continue
			}
			owner := s.owners[k.(string)]
			if owner == "" {
				owner = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s"
			}
			vals = append(vals, map[string]any{"data": []string{base64.StdEncoding.EncodeToString(d), "base64"},
				"owner": owner, "executable": false, "lamports": 5616720})
		}
		b, _ := json.Marshal(map[string]any{"context": map[string]any{"slot": s.head}, "value": vals})
		return b, ""
	}
	return nil, "method not found: " + q.Method
}

// Testdata returns the path of a file of the repository's Solana test data,
// testdata/solana (see its SOURCES.md).
func Testdata(tb testing.TB, parts ...string) string {
	tb.Helper()
	return testenv.Testdata(tb, append([]string{"solana"}, parts...)...)
}

// FullBlocks are the two complete mainnet blocks of the test data.
var FullBlocks = []struct {
	File string
	Slot uint64
}{
	{"mainnet_getBlock_110130000.full.json.gz", 110130000},
	{"mainnet_getBlock_110360000.full.json.gz", 110360000},
}

// ReadBlock returns the getBlock result in the test data file name,
// gunzipped and unwrapped from its JSON-RPC response where need be.
func ReadBlock(tb testing.TB, name string) json.RawMessage {
	tb.Helper()
	raw := testenv.ReadTestdata(tb, "solana", "getBlock", name)
	var resp struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(raw, &resp) == nil && len(resp.Result) > 0 {
		return resp.Result
	}
	return raw
}
