package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/jsonrpc"
	"github.com/chainquery/chainquery/sqlite"
)

// stack is one anvil node, one store and one API server.
type stack struct {
	t       *testing.T
	anvil   *devchain.Anvil
	rpc     *jsonrpc.Client
	traffic *devchain.Traffic
	db      *sqlite.DB
	api     *httptest.Server
	key     string
}

func newStack(t *testing.T) *stack {
	t.Helper()
	ctx := context.Background()
	node, err := devchain.StartAnvil(ctx, 137)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	s := &stack{t: t, anvil: node, rpc: jsonrpc.NewClient(node.URL)}
	if s.traffic, err = devchain.Deploy(ctx, s.rpc); err != nil {
		t.Fatal(err)
	}
	if s.db, err = sqlite.Open(filepath.Join(t.TempDir(), "db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.db.Close() })
	key, hash := chainquery.NewAPIKey()
	if err := s.db.CreateAPIKey(ctx, &chainquery.APIKey{Name: "e2e", Hash: hash, Endpoints: chainquery.Endpoints}); err != nil {
		t.Fatal(err)
	}
	s.key = key
	s.api = httptest.NewServer(cqhttp.NewServer(cqhttp.Config{Store: s.db}).Handler())
	t.Cleanup(s.api.Close)
	return s
}

// node calls the node and decodes its answer into a generic value.
func (s *stack) node(method string, params ...any) any {
	s.t.Helper()
	var v any
	if err := s.rpc.Call(context.Background(), &v, method, params...); err != nil {
		s.t.Fatalf("%s: %v", method, err)
	}
	return v
}

// get asks the API and returns the decoded JSON body; it fails unless the
// status is want.
func (s *stack) get(method, path string, body any, want int) map[string]any {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.api.URL+path, rd)
	req.Header.Set("apikey", s.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		s.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return v
}

// eqQ compares an API integer (a JSON number or a decimal string) with a
// node quantity (hex). A missing node quantity must be an API null or 0 as
// zero says.
func eqQ(t *testing.T, what string, api, node any) {
	t.Helper()
	a, n := apiInt(api), nodeInt(node)
	if (a == nil) != (n == nil) || a != nil && a.Cmp(n) != 0 {
		t.Errorf("%s: API %v, node %v", what, api, node)
	}
}

// eqH compares an API hex string (or null) with the node's, ignoring case.
func eqH(t *testing.T, what string, api, node any) {
	t.Helper()
	a, _ := api.(string)
	n, _ := node.(string)
	if (api == nil) != (node == nil) || !strings.EqualFold(a, n) {
		t.Errorf("%s: API %v, node %v", what, api, node)
	}
}

func apiInt(v any) *big.Int {
	switch x := v.(type) {
	case json.Number:
		n, _ := new(big.Int).SetString(x.String(), 10)
		return n
	case string:
		n, _ := new(big.Int).SetString(x, 10)
		return n
	}
	return nil
}

func nodeInt(v any) *big.Int {
	x, ok := v.(string)
	if !ok {
		return nil
	}
	n, _ := new(big.Int).SetString(strings.TrimPrefix(x, "0x"), 16)
	return n
}

// m returns the object field of v.
func m(v any) map[string]any { x, _ := v.(map[string]any); return x }

// list returns the array v.
func list(v any) []any { x, _ := v.([]any); return x }

// hexNum formats n as a quantity.
func hexNum(n uint64) string { return fmt.Sprintf("0x%x", n) }
