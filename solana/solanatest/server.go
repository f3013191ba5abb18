// Package solanatest serves recorded Solana RPC answers from a local HTTP
// server, so that the ingester's tests and benchmarks run against real
// mainnet data without a validator.
package solanatest

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/chainquery/chainquery/internal/solanareplay"
	"github.com/chainquery/chainquery/internal/testenv"
)

// Server is a Solana JSON-RPC node that knows only the blocks and accounts
// it was given (a solanareplay.Node, whose methods set them), served on
// 127.0.0.1.
type Server struct {
	*httptest.Server
	*solanareplay.Node
}

// NewServer starts a server on 127.0.0.1 and stops it when tb ends.
func NewServer(tb testing.TB) *Server {
	n := solanareplay.NewNode()
	s := &Server{Server: httptest.NewServer(n), Node: n}
	tb.Cleanup(s.Close)
	return s
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
