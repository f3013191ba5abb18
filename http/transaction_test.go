package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

func txPath(chain, hash, rest string) string {
	return "/api/v1/customer/" + chain + "/transactions/" + hash + rest
}

// rawItems returns the items of a list answer as they were written, so
// that answers of two endpoints can be compared item by item.
func rawItems(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var l struct {
		Result []json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("decode: %v: %s", err, body)
	}
	return l.Result
}

// TestTransactionEndpoints holds each new endpoint to the answer the
// specification's endpoints give for the same data, byte for byte: Get
// Transaction to the transaction of Get Block with full_transactions, its
// receipt to Get Block Receipts', its traces to its rows of Filter Traces,
// and Get Block Logs to the transactions' Get Transaction Logs, in order.
func TestTransactionEndpoints(t *testing.T) {
	s := MustOpenServer(t)
	block := storetest.PolygonBlock
	var full struct {
		Transactions []json.RawMessage `json:"transactions"`
	}
	if err := json.Unmarshal(MustOK(t, s.Get(t, blockPath("polygon", fmt.Sprintf("?block_number=%d&full_transactions=true", block)))), &full); err != nil {
		t.Fatal(err)
	}
	receipts := rawItems(t, MustOK(t, s.Get(t, receiptsPath("polygon", fmt.Sprintf("?block_number=%d&limit=50", block)))))
	traces := rawItems(t, MustOK(t, s.Post(t, tracesPath+"?limit=50", fmt.Sprintf(`{"from_block":%d,"to_block":%d}`, block, block))))
	var tracesOf = map[string][]json.RawMessage{}
	for _, tr := range traces {
		var head struct {
			Hash string `json:"transaction_hash"`
		}
		if err := json.Unmarshal(tr, &head); err != nil {
			t.Fatal(err)
		}
		tracesOf[head.Hash] = append(tracesOf[head.Hash], tr)
	}
	var allLogs []json.RawMessage
	for i, raw := range full.Transactions {
		var tx struct {
			Hash string `json:"transaction_hash"`
		}
		if err := json.Unmarshal(raw, &tx); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"", fmt.Sprintf("?block_number=%d", block)} {
			AssertJSON(t, MustOK(t, s.Get(t, txPath("polygon", tx.Hash, q))), string(raw))
			AssertJSON(t, MustOK(t, s.Get(t, txPath("polygon", tx.Hash, "/receipt"+q))), string(receipts[i]))
		}
		body := MustOK(t, s.Get(t, txPath("polygon", tx.Hash, "/traces?limit=50")))
		l := decodeList(t, body)
		if l.TransactionHash != tx.Hash || l.Count != len(tracesOf[tx.Hash]) {
			t.Fatalf("traces of %s: hash %s, count %d, want %d", tx.Hash, l.TransactionHash, l.Count, len(tracesOf[tx.Hash]))
		}
		for j, tr := range rawItems(t, body) {
			AssertJSON(t, tr, string(tracesOf[tx.Hash][j]))
		}
		allLogs = append(allLogs, rawItems(t, MustOK(t, s.Get(t, logsPath("polygon", tx.Hash)+"?limit=50")))...)
	}
	body := MustOK(t, s.Get(t, "/api/v1/customer/polygon/blocks/logs?block_number="+fmt.Sprint(block)+"&limit=50"))
	if !strings.HasPrefix(string(body), `{"block_number":68000000,"offset":0,"limit":50,"result":[`) {
		t.Errorf("envelope order: %s", body)
	}
	got := rawItems(t, body)
	if len(got) != len(allLogs) || decodeList(t, body).Count != len(allLogs) {
		t.Fatalf("block logs: %d, want %d", len(got), len(allLogs))
	}
	for i := range got {
		AssertJSON(t, got[i], string(allLogs[i]))
	}
}

func TestTransactionEndpoints_Pages(t *testing.T) {
	s := MustOpenServer(t)
	hash := storetest.TxNested.Hex()
	l := decodeList(t, MustOK(t, s.Get(t, txPath("polygon", hash, "/traces?limit=3&offset=2"))))
	if l.Offset != 2 || l.Limit != 3 || l.Count != 2+storetest.NestedSubcalls || len(l.Result) != 3 || l.Result[0]["trace_address"] != "0.0" {
		t.Errorf("a page of traces: offset %d limit %d count %d %v", l.Offset, l.Limit, l.Count, l.Result)
	}
	body := MustOK(t, s.Get(t, txPath("polygon", hash, "/traces?offset=13")))
	AssertJSON(t, body, `{"transaction_hash":"`+hash+`","offset":13,"limit":10,"result":[],"count":13}`)

	l = decodeList(t, MustOK(t, s.Get(t, fmt.Sprintf("/api/v1/customer/polygon/blocks/logs?block_number=%d&limit=2&offset=3", storetest.PolygonBlock))))
	if l.Count != 5 || len(l.Result) != 2 || l.Result[0]["log_index"].(float64) != 3 {
		t.Errorf("a page of logs: count %d %v", l.Count, l.Result)
	}
	body = MustOK(t, s.Get(t, fmt.Sprintf("/api/v1/customer/polygon/blocks/logs?block_number=%d", storetest.PolygonEmptyBlock)))
	AssertJSON(t, body, fmt.Sprintf(`{"block_number":%d,"offset":0,"limit":10,"result":[],"count":0}`, storetest.PolygonEmptyBlock))

	// Another chain's transaction, by hash alone.
	body = MustOK(t, s.Get(t, txPath("ethereum", storetest.TxEthereum.Hex(), "")))
	if !strings.Contains(string(body), fmt.Sprintf(`"block_number":%d`, storetest.EthereumBlock)) {
		t.Errorf("ethereum transaction: %s", body)
	}
}

func TestTransactionEndpoints_Errors(t *testing.T) {
	s := MustOpenServer(t)
	unknown := storetest.H(storetest.TagTx, 200).Hex()
	nested := storetest.TxNested.Hex()
	RunErrorCases(t, s, []ErrorCase{
		{Name: "unknown transaction", Path: txPath("polygon", unknown, ""), Status: http.StatusNotFound, Detail: "is not indexed on polygon"},
		{Name: "unknown receipt", Path: txPath("polygon", unknown, "/receipt"), Status: http.StatusNotFound, Detail: "is not indexed"},
		{Name: "unknown traces", Path: txPath("polygon", unknown, "/traces"), Status: http.StatusNotFound, Detail: "is not indexed"},
		{Name: "wrong block", Path: txPath("polygon", nested, fmt.Sprintf("?block_number=%d", storetest.PolygonEmptyBlock)), Status: http.StatusNotFound, Detail: "in block 68000001"},
		{Name: "other chain", Path: txPath("ethereum", nested, "/receipt"), Status: http.StatusNotFound, Detail: "on ethereum"},
		{Name: "bad hash", Path: txPath("polygon", "0x12", ""), Status: http.StatusBadRequest, Detail: "transaction_hash"},
		{Name: "solana", Path: txPath("solana", nested, ""), Status: http.StatusBadRequest, Detail: "chain must be one of"},
		{Name: "limit", Path: txPath("polygon", nested, "/traces?limit=51"), Status: http.StatusBadRequest, Detail: "limit"},
		{Name: "block logs without a block", Path: "/api/v1/customer/polygon/blocks/logs", Status: http.StatusBadRequest, Detail: "block_number is required"},
		{Name: "block logs of a block not indexed", Path: "/api/v1/customer/polygon/blocks/logs?block_number=1", Status: http.StatusNotFound, Detail: "block 1 is not indexed"},
		{Name: "POST", Method: http.MethodPost, Path: txPath("polygon", nested, ""), Status: http.StatusMethodNotAllowed, Detail: "GET"},
	})
}
