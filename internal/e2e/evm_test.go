package e2e_test

import (
	"context"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/ingest"
)

// ingestTo runs the ingester over the node's blocks up to head.
func (s *stack) ingestTo(head uint64, traces string) {
	s.t.Helper()
	ctx := context.Background()
	plan, err := evm.Probe(ctx, s.rpc, traces)
	if err != nil {
		s.t.Fatal(err)
	}
	e := &ingest.EVMLoop{Chain: chainquery.Polygon, Store: s.db, Source: evm.NewFetcher(s.rpc, chainquery.Polygon, plan, nil),
		From: new(uint64), To: &head, BatchBlocks: 3, Concurrency: 2, PollInterval: 10 * time.Millisecond}
	if err := e.Run(ctx); err != nil {
		s.t.Fatal(err)
	}
}

func (s *stack) head() uint64 {
	return nodeInt(s.node("eth_blockNumber")).Uint64()
}

// TestIngestAnvilMatchesNode sends every kind of transaction to anvil,
// ingests the chain, and compares every answer of the API with what the
// node answers for the same block, transaction and trace.
func TestIngestAnvilMatchesNode(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := s.traffic.Round(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.traffic.MineEmpty(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.traffic.Round(ctx); err != nil {
		t.Fatal(err)
	}
	head := s.head()
	s.ingestTo(head, evm.TracesAuto)

	latest := s.get("GET", "/api/v1/customer/polygon/blocks/latest", nil, 200)
	eqQ(t, "latest block", latest["block_number"], hexNum(head))
	for n := uint64(0); n <= head; n++ {
		s.compareBlock(n)
	}
}

// compareBlock compares Get Block, Get Block Receipts, Get Transaction Logs
// and Filter Traces for block n with the node's own answers.
func (s *stack) compareBlock(n uint64) {
	t := s.t
	nb := m(s.node("eth_getBlockByNumber", hexNum(n), true))
	ab := s.get("GET", fmt.Sprintf("/api/v1/customer/polygon/block?block_number=%d&full_transactions=true", n), nil, 200)
	at := fmt.Sprintf("block %d ", n)
	eqQ(t, at+"block_number", ab["block_number"], nb["number"])
	eqQ(t, at+"timestamp", ab["timestamp"], nb["timestamp"])
	for api, node := range map[string]string{"block_hash": "hash", "block_parent_hash": "parentHash", "logs_bloom": "logsBloom",
		"transactions_root": "transactionsRoot", "state_root": "stateRoot", "receipts_root": "receiptsRoot", "miner": "miner", "extra_data": "extraData"} {
		eqH(t, at+api, ab[api], nb[node])
	}
	for api, node := range map[string]string{"size": "size", "gas_limit": "gasLimit", "gas_used": "gasUsed", "base_fee_per_gas": "baseFeePerGas"} {
		eqQ(t, at+api, ab[api], nb[node])
	}
	wantDatetime := time.Unix(nodeInt(nb["timestamp"]).Int64(), 0).UTC().Format("2006-01-02T15:04:05")
	if ab["datetime"] != wantDatetime {
		t.Errorf("%sdatetime %v, want %s", at, ab["datetime"], wantDatetime)
	}
	ntxs, atxs := list(nb["transactions"]), list(ab["transactions"])
	eqQ(t, at+"transaction_count", ab["transaction_count"], hexNum(uint64(len(ntxs))))
	if len(atxs) != len(ntxs) {
		t.Fatalf("%s%d transactions, node %d", at, len(atxs), len(ntxs))
	}
	receipts := list(s.node("eth_getBlockReceipts", hexNum(n)))
	for i := range ntxs {
		nt, a, r := m(ntxs[i]), m(atxs[i]), m(receipts[i])
		tx := fmt.Sprintf("%stx %d ", at, i)
		eqH(t, tx+"hash", a["transaction_hash"], nt["hash"])
		eqQ(t, tx+"index", a["transaction_index"], nt["transactionIndex"])
		eqH(t, tx+"from", a["from_address"], nt["from"])
		eqH(t, tx+"to", a["to_address"], nt["to"])
		eqH(t, tx+"input", a["input"], nt["input"])
		for api, node := range map[string]string{"value": "value", "gas_limit": "gas", "gas_price": "gasPrice", "nonce": "nonce",
			"max_fee_per_gas": "maxFeePerGas", "max_priority_fee_per_gas": "maxPriorityFeePerGas", "transaction_type": "type"} {
			eqQ(t, tx+api, a[api], nt[node])
		}
		for api, node := range map[string]string{"gas_used": "gasUsed", "cumulative_gas_used": "cumulativeGasUsed", "effective_gas_price": "effectiveGasPrice"} {
			eqQ(t, tx+api, a[api], r[node])
		}
		eqH(t, tx+"contract_address", a["contract_address"], r["contractAddress"])
		if a["status"] != (r["status"] == "0x1") {
			t.Errorf("%sstatus %v, node %v", tx, a["status"], r["status"])
		}
	}
	s.compareReceipts(n, receipts)
	for _, r := range receipts {
		s.compareLogs(n, m(r))
	}
	s.compareTraces(n, ntxs)
}

func (s *stack) compareReceipts(n uint64, receipts []any) {
	t := s.t
	ar := s.get("GET", fmt.Sprintf("/api/v1/customer/polygon/blocks/receipts?block_number=%d&limit=50", n), nil, 200)
	eqQ(t, "receipts count", ar["count"], hexNum(uint64(len(receipts))))
	got := list(ar["result"])
	if len(got) != len(receipts) {
		t.Fatalf("block %d: %d receipts, node %d", n, len(got), len(receipts))
	}
	for i, r := range receipts {
		nr, a := m(r), m(got[i])
		at := fmt.Sprintf("block %d receipt %d ", n, i)
		eqH(t, at+"transaction_hash", a["transaction_hash"], nr["transactionHash"])
		for api, node := range map[string]string{"block_number": "blockNumber", "transaction_index": "transactionIndex", "gas_used": "gasUsed",
			"cumulative_gas_used": "cumulativeGasUsed", "effective_gas_price": "effectiveGasPrice"} {
			eqQ(t, at+api, a[api], nr[node])
		}
		eqH(t, at+"contract_address", a["contract_address"], nr["contractAddress"])
		if a["status"] != (nr["status"] == "0x1") {
			t.Errorf("%sstatus %v, node %v", at, a["status"], nr["status"])
		}
	}
}

// compareLogs compares Get Transaction Logs with the receipt's logs and with
// eth_getLogs over the block.
func (s *stack) compareLogs(n uint64, receipt map[string]any) {
	t := s.t
	hash := receipt["transactionHash"].(string)
	nodeLogs := list(receipt["logs"])
	var filtered []any
	for _, l := range list(s.node("eth_getLogs", map[string]any{"fromBlock": hexNum(n), "toBlock": hexNum(n)})) {
		if m(l)["transactionHash"] == hash {
			filtered = append(filtered, l)
		}
	}
	if len(filtered) != len(nodeLogs) {
		t.Fatalf("tx %s: eth_getLogs has %d logs, the receipt %d", hash, len(filtered), len(nodeLogs))
	}
	al := s.get("GET", fmt.Sprintf("/api/v1/customer/polygon/transactions/%s/logs?limit=50&block_number=%d", hash, n), nil, 200)
	eqQ(t, "logs count", al["count"], hexNum(uint64(len(nodeLogs))))
	eqH(t, "logs transaction_hash", al["transaction_hash"], hash)
	got := list(al["result"])
	if len(got) != len(nodeLogs) {
		t.Fatalf("tx %s: %d logs, node %d", hash, len(got), len(nodeLogs))
	}
	for i, l := range filtered {
		nl, a := m(l), m(got[i])
		at := fmt.Sprintf("tx %s log %d ", hash, i)
		eqQ(t, at+"log_index", a["log_index"], nl["logIndex"])
		eqQ(t, at+"block_number", a["block_number"], nl["blockNumber"])
		eqQ(t, at+"transaction_index", a["transaction_index"], nl["transactionIndex"])
		eqH(t, at+"address", a["address"], nl["address"])
		eqH(t, at+"data", a["data"], nl["data"])
		topics := list(nl["topics"])
		if len(list(a["topics"])) != len(topics) {
			t.Errorf("%stopics %v, node %v", at, a["topics"], topics)
			continue
		}
		for j := 0; j < 4; j++ {
			var want any
			if j < len(topics) {
				want = topics[j]
				eqH(t, fmt.Sprintf("%stopics[%d]", at, j), list(a["topics"])[j], want)
			}
			eqH(t, fmt.Sprintf("%stopic%d", at, j+1), a[fmt.Sprintf("topic%d", j+1)], want)
		}
	}
}

// compareTraces compares Filter Traces over block n with trace_block.
func (s *stack) compareTraces(n uint64, txs []any) {
	t := s.t
	var node []map[string]any
	for _, tr := range list(s.node("trace_block", hexNum(n))) {
		if m(tr)["type"] != "reward" {
			node = append(node, m(tr))
		}
	}
	var got []any
	for offset := 0; ; offset += 50 {
		page := s.get("POST", fmt.Sprintf("/api/v1/customer/polygon/traces/filter?limit=50&offset=%d", offset),
			map[string]any{"from_block": n, "to_block": n}, 200)
		eqQ(t, "traces count", page["count"], hexNum(uint64(len(node))))
		got = append(got, list(page["result"])...)
		if len(list(page["result"])) < 50 {
			break
		}
	}
	if len(got) != len(node) {
		t.Fatalf("block %d: %d traces, node %d", n, len(got), len(node))
	}
	for i, nt := range node {
		a, action, result := m(got[i]), m(nt["action"]), m(nt["result"])
		at := fmt.Sprintf("block %d trace %d ", n, i)
		var addr []string
		for _, x := range list(nt["traceAddress"]) {
			addr = append(addr, fmt.Sprint(x))
		}
		if want := joinDots(addr); a["trace_address"] != want {
			t.Fatalf("%strace_address %v, node %q (API order differs from the node's)", at, a["trace_address"], want)
		}
		eqH(t, at+"transaction_hash", a["transaction_hash"], nt["transactionHash"])
		eqQ(t, at+"transaction_index", a["transaction_index"], hexNum(uint64(nt["transactionPosition"].(float64))))
		eqQ(t, at+"subtraces", a["subtraces"], hexNum(uint64(nt["subtraces"].(float64))))
		tx := m(txs[int(nt["transactionPosition"].(float64))])
		eqH(t, at+"transaction_from", a["transaction_from"], tx["from"])
		eqH(t, at+"transaction_to", a["transaction_to"], tx["to"])
		wantErr, _ := nt["error"].(string)
		if e, _ := a["error"].(string); e != wantErr || (wantErr == "") != (a["error"] == nil) {
			t.Errorf("%serror %v, node %q", at, a["error"], wantErr)
		}
		if a["type"] != nt["type"] {
			t.Errorf("%stype %v, node %v", at, a["type"], nt["type"])
		}
		gasUsed := result["gasUsed"]
		if gasUsed == nil {
			gasUsed = "0x0"
		}
		switch nt["type"] {
		case "call":
			callType := action["callType"]
			if callType == "callcode" {
				callType = "call"
			}
			if a["call_type"] != callType {
				t.Errorf("%scall_type %v, node %v", at, a["call_type"], callType)
			}
			eqH(t, at+"from_address", a["from_address"], action["from"])
			eqH(t, at+"to_address", a["to_address"], action["to"])
			eqH(t, at+"input", a["input"], action["input"])
			output := result["output"]
			if output == nil {
				output = "0x"
			}
			eqH(t, at+"output", a["output"], output)
			eqQ(t, at+"value", a["value"], action["value"])
			eqQ(t, at+"gas", a["gas"], action["gas"])
			eqQ(t, at+"gas_used", a["gas_used"], gasUsed)
		case "create":
			if a["call_type"] != "create" {
				t.Errorf("%scall_type %v, want create", at, a["call_type"])
			}
			eqH(t, at+"from_address", a["from_address"], action["from"])
			eqH(t, at+"to_address", a["to_address"], result["address"])
			eqH(t, at+"input", a["input"], action["init"])
			code := result["code"]
			if code == nil {
				code = "0x"
			}
			eqH(t, at+"output", a["output"], code)
			eqQ(t, at+"value", a["value"], action["value"])
			eqQ(t, at+"gas", a["gas"], action["gas"])
			eqQ(t, at+"gas_used", a["gas_used"], gasUsed)
		case "suicide":
			eqH(t, at+"from_address", a["from_address"], action["address"])
			eqH(t, at+"to_address", a["to_address"], action["refundAddress"])
			eqQ(t, at+"value", a["value"], action["balance"])
			eqQ(t, at+"gas", a["gas"], "0x0")
			eqQ(t, at+"gas_used", a["gas_used"], "0x0")
			eqH(t, at+"input", a["input"], "0x")
			eqH(t, at+"output", a["output"], "0x")
		default:
			t.Errorf("%sunexpected node trace type %v", at, nt["type"])
		}
		if nt["type"] != "suicide" {
			refund := new(big.Int).Sub(nodeInt(action["gas"]), nodeInt(gasUsed))
			eqQ(t, at+"gas_refund", a["gas_refund"], "0x"+refund.Text(16))
		}
	}
}

func joinDots(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += "."
		}
		out += p
	}
	return out
}
