package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// TestTracedChains checks which chains Filter Traces and Get Block serve:
// polygon always; another chain when serve's followers trace it
// (Config.TracedChains) or when its stored blocks hold traces, whoever
// wrote them; any other chain is a 400 naming those that are served.
func TestTracedChains(t *testing.T) {
	ethBlock := fmt.Sprintf("?block_number=%d", storetest.EthereumBlock)
	ethRange := fmt.Sprintf(`{"from_block":%d,"to_block":%d}`, storetest.EthereumBlock, storetest.EthereumBlock+1)

	t.Run("PolygonOnly", func(t *testing.T) {
		s := MustOpenServer(t)
		assertTracedEnums(t, s, "polygon")
		RunErrorCases(t, s, []ErrorCase{
			{Name: "Get Block", Path: blockPath("ethereum", ethBlock), Status: http.StatusBadRequest,
				Detail: "chain must be one of: polygon (the chains whose traces this server indexes"},
			{Name: "Filter Traces", Method: http.MethodPost, Path: "/api/v1/customer/ethereum/traces/filter", Body: ethRange,
				Status: http.StatusBadRequest, Detail: "chain must be one of: polygon ("},
			{Name: "not a chain", Path: blockPath("bitcoin", ethBlock), Status: http.StatusBadRequest, Detail: "chain must be one of: polygon ("},
		})
	})
	t.Run("Followed", func(t *testing.T) {
		s := MustOpenServer(t, func(c *cqhttp.Config) { c.TracedChains = []chainquery.Chain{chainquery.Ethereum} })
		assertTracedEnums(t, s, "ethereum", "polygon")
		body := MustOK(t, s.Get(t, blockPath("ethereum", ethBlock)))
		if !strings.HasPrefix(string(body), fmt.Sprintf(`{"block_number":%d,`, storetest.EthereumBlock)) {
			t.Fatalf("ethereum block: %s", body)
		}
		// Followed with traces, none stored yet for this block: an empty page.
		AssertJSON(t, MustOK(t, s.Post(t, "/api/v1/customer/ethereum/traces/filter", ethRange)), `{"offset":0,"limit":10,"result":[],"count":0}`)
		MustErrorDetail(t, s.Get(t, blockPath("base", "?block_number=1")), http.StatusBadRequest)
	})
	t.Run("Stored", func(t *testing.T) {
		// The store's traced chains are read at once (the document was, by
		// MustOpenServer), and trusted for a millisecond.
		s := MustOpenServer(t, func(c *cqhttp.Config) { c.TracedTTL = time.Millisecond })
		assertTracedEnums(t, s, "polygon")
		// Another process stored an ethereum block with a trace.
		d := storetest.Blocks()[chainquery.Ethereum][0]
		n := storetest.EthereumBlock + 1
		d.Block.Number, d.Block.ParentHash, d.Block.Hash = n, d.Block.Hash, storetest.BlockHash(n)
		tx := *d.Transactions[0]
		tx.BlockNumber, tx.Hash, tx.LogCount = n, storetest.H(storetest.TagTx, 0x77), 0
		d.Transactions, d.Logs = []*chainquery.Transaction{&tx}, nil
		d.Traces = []*chainquery.Trace{{BlockNumber: n, Type: chainquery.TraceCall, CallType: chainquery.CallTypeCall,
			From: tx.From, To: tx.To, Gas: 50_000, GasUsed: 21_000, Value: new(big.Int), Input: []byte{}, Output: []byte{}}}
		if err := s.DB.WriteBlocks(context.Background(), chainquery.Ethereum, []*chainquery.BlockData{d}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // past the reading's TTL: the next request reads the store again
		l := decodeList(t, MustOK(t, s.Post(t, "/api/v1/customer/ethereum/traces/filter", ethRange)))
		if l.Count != 1 || l.Result[0]["transaction_hash"] != tx.Hash.Hex() {
			t.Fatalf("ethereum traces: %+v", l)
		}
		MustOK(t, s.Get(t, blockPath("ethereum", ethBlock)))
		// The document lists ethereum too, as those requests found it.
		assertTracedEnums(t, s, "ethereum", "polygon")
		detail := MustErrorDetail(t, s.Get(t, blockPath("gnosis", "?block_number=1")), http.StatusBadRequest)
		if want := "chain must be one of: ethereum, polygon ("; !strings.HasPrefix(detail, want) {
			t.Fatalf("detail %q, want it to start %q", detail, want)
		}
	})
}

// assertTracedEnums checks the chain enums of the document s serves now,
// and of the docs page that holds it: the traced operations list traced,
// which are the chains they serve; the others every chain they serve.
func assertTracedEnums(t *testing.T, s *Server, traced ...string) {
	t.Helper()
	spec := MustOK(t, getPublic(t, s, "/openapi.json"))
	if page := getPublic(t, s, "/docs"); page.Status != http.StatusOK || !bytes.Equal(page.Body, cqhttp.DocsPage(spec)) {
		t.Errorf("the docs page does not hold the document /openapi.json serves")
	}
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	evm := make([]string, len(chainquery.EVMChains))
	for i, c := range chainquery.EVMChains {
		evm[i] = string(c)
	}
	for key, op := range docOperations(doc) {
		for _, p := range asList(op["parameters"]) {
			p := p.(map[string]any)
			if p["name"] != "chain" {
				continue
			}
			var enum []string
			for _, c := range asList(p["schema"].(map[string]any)["enum"]) {
				enum = append(enum, c.(string))
			}
			want := evm
			switch op["operationId"] {
			case "filterTraces", "getBlock", "exportTraces":
				want = traced
			case "getTokenBalanceByAccount", "getTokenBalancesByOwner", "getSolBalanceByAccount":
				want = []string{"solana"}
			}
			if !slices.Equal(enum, want) {
				t.Errorf("%s (%s): chain enum %v, want %v", key, op["operationId"], enum, want)
			}
		}
	}
}
