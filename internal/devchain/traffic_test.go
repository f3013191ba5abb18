package devchain_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/jsonrpc"
)

// TestTraffic checks that a round mines one block whose transactions
// succeed or fail as designed and whose trace holds every trace kind.
func TestTraffic(t *testing.T) {
	ctx := context.Background()
	node, err := devchain.StartAnvil(ctx, 137)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	rpc := jsonrpc.NewClient(node.URL)
	traffic, err := devchain.Deploy(ctx, rpc)
	if err != nil {
		t.Fatal(err)
	}
	hashes, err := traffic.Round(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := []string{"0x1", "0x0", "0x1", "0x1", "0x1", "0x1"}
	var block string
	for i, h := range hashes {
		var r struct {
			Status      string `json:"status"`
			BlockNumber string `json:"blockNumber"`
			Logs        []struct {
				Topics []string `json:"topics"`
			} `json:"logs"`
		}
		raw, err := traffic.WaitReceipt(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != wantStatus[i] {
			t.Errorf("tx %d status %s, want %s", i, r.Status, wantStatus[i])
		}
		if block == "" {
			block = r.BlockNumber
		} else if r.BlockNumber != block {
			t.Errorf("tx %d in block %s, want all in %s", i, r.BlockNumber, block)
		}
		if i == 0 {
			topics := map[int]bool{}
			for _, l := range r.Logs {
				topics[len(l.Topics)] = true
			}
			for n := 0; n <= 4; n++ {
				if !topics[n] {
					t.Errorf("nested() emitted no log with %d topics", n)
				}
			}
		}
	}
	var traces []struct {
		Type   string `json:"type"`
		Action struct {
			CallType string `json:"callType"`
		} `json:"action"`
		Error string `json:"error"`
	}
	if err := rpc.Call(ctx, &traces, "trace_block", block); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, tr := range traces {
		kinds[tr.Type+"/"+tr.Action.CallType] = true
		if tr.Error != "" {
			kinds["error"] = true
		}
	}
	for _, k := range []string{"call/call", "call/delegatecall", "call/staticcall", "create/", "suicide/", "error"} {
		if !kinds[k] {
			raw, _ := json.Marshal(kinds)
			t.Errorf("no %s trace in the round's block; saw %s", k, raw)
		}
	}
}
