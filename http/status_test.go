package http_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

const statusPath = "/api/v1/customer/status"

// TestStatus checks GET /api/v1/customer/status on the fixture: each stored
// chain's range, last time and traces, the Solana cursor, any key's access,
// and, with followers, the node's head, the lag behind it, where each
// follower is and its last error. Do checks every answer against the
// OpenAPI document.
func TestStatus(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s := MustOpenServer(t)
		resp := s.Do(t, "GET", statusPath, s.Key, nil)
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		want := `{"chains":[` +
			`{"chain":"ethereum","first_block":18000000,"last_block":18000000,"last_block_time":"2023-08-26T17:49:59",` +
			`"traces_indexed":false,"traces_from_block":null,"traces_from_time":null,` +
			`"followed":false,"node_head":null,"lag_blocks":null,"lag_seconds":null,` +
			`"follow_state":null,"follow_error":null,"follow_error_time":null},` +
			`{"chain":"polygon","first_block":68000000,"last_block":68000002,"last_block_time":"2025-03-01T00:00:04",` +
			`"traces_indexed":true,"traces_from_block":68000000,"traces_from_time":"2025-03-01T00:00:00",` +
			`"followed":false,"node_head":null,"lag_blocks":null,"lag_seconds":null,` +
			`"follow_state":null,"follow_error":null,"follow_error_time":null}],` +
			`"solana":{"last_slot":250000400,"last_block_time":"2025-06-01T13:00:00"}}` + "\n"
		if string(resp.Body) != want {
			t.Errorf("body\n%s\nwant\n%s", resp.Body, want)
		}
	})
	t.Run("AnyKey", func(t *testing.T) {
		// A key enabled for one endpoint only may ask; no key, or a
		// revoked one, may not.
		s := MustOpenServer(t)
		for _, tc := range []struct {
			name, key string
			status    int
		}{{"LogsKey", s.LogsKey, 200}, {"NoKey", NoKey, 401}, {"RevokedKey", s.RevokedKey, 401}} {
			if resp := s.Do(t, "GET", statusPath, tc.key, nil); resp.Status != tc.status {
				t.Errorf("%s: status %d, want %d: %s", tc.name, resp.Status, tc.status, resp.Body)
			}
		}
	})
	t.Run("Followed", func(t *testing.T) {
		// polygon's node is 10 blocks ahead (2 s blocks: 20 s); base is
		// followed but nothing is stored nor heard yet, its node refusing;
		// ethereum's node is behind what is stored, and failed once;
		// arbitrum's node answered, nothing is stored yet.
		failed := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		s := MustOpenServer(t, func(c *cqhttp.Config) {
			c.NodeHeads = func() map[chainquery.Chain]uint64 {
				return map[chainquery.Chain]uint64{
					chainquery.Polygon:  storetest.PolygonLaterBlock + 10,
					chainquery.Base:     0,
					chainquery.Ethereum: storetest.EthereumBlock - 1,
					chainquery.Arbitrum: 42,
				}
			}
			c.FollowErrors = func() map[chainquery.Chain]cqhttp.FollowError {
				return map[chainquery.Chain]cqhttp.FollowError{
					chainquery.Base:     {Text: "connection refused", Time: failed},
					chainquery.Ethereum: {Text: "timeout", Time: failed.Add(time.Second)},
				}
			}
		})
		resp := s.Do(t, "GET", statusPath, s.Key, nil)
		var body struct {
			Chains []struct {
				Chain      string   `json:"chain"`
				LastBlock  *uint64  `json:"last_block"`
				Followed   bool     `json:"followed"`
				NodeHead   *uint64  `json:"node_head"`
				LagBlocks  *uint64  `json:"lag_blocks"`
				LagSeconds *float64 `json:"lag_seconds"`
				State      *string  `json:"follow_state"`
				Error      *string  `json:"follow_error"`
				ErrorTime  *string  `json:"follow_error_time"`
			} `json:"chains"`
		}
		if err := json.Unmarshal(resp.Body, &body); err != nil || len(body.Chains) != 4 {
			t.Fatalf("%v: %s; want ethereum, polygon, base and arbitrum", err, resp.Body)
		}
		byName := map[string]int{}
		for i, c := range body.Chains {
			byName[c.Chain] = i
		}
		eth, poly, base, arb := body.Chains[byName["ethereum"]], body.Chains[byName["polygon"]], body.Chains[byName["base"]], body.Chains[byName["arbitrum"]]
		str := func(p *string) string {
			if p == nil {
				return "null"
			}
			return *p
		}
		for _, tc := range []struct {
			chain, state, err, at string
		}{
			{"ethereum", "following", "timeout", "2025-03-01T12:00:01"},
			{"polygon", "following", "null", "null"},
			{"base", "not_started", "connection refused", "2025-03-01T12:00:00"},
			{"arbitrum", "no_block_yet", "null", "null"},
		} {
			c := body.Chains[byName[tc.chain]]
			if str(c.State) != tc.state || str(c.Error) != tc.err || str(c.ErrorTime) != tc.at {
				t.Errorf("%s: follow_state %s, follow_error %s at %s; want %s, %s at %s",
					tc.chain, str(c.State), str(c.Error), str(c.ErrorTime), tc.state, tc.err, tc.at)
			}
		}
		if eth.Chain != "ethereum" || !eth.Followed || eth.NodeHead == nil || *eth.NodeHead != storetest.EthereumBlock-1 ||
			eth.LagBlocks == nil || *eth.LagBlocks != 0 || eth.LagSeconds == nil || *eth.LagSeconds != 0 {
			t.Errorf("ethereum, node behind the store: %s", resp.Body)
		}
		if poly.Chain != "polygon" || !poly.Followed || poly.NodeHead == nil || *poly.NodeHead != storetest.PolygonLaterBlock+10 ||
			poly.LagBlocks == nil || *poly.LagBlocks != 10 || poly.LagSeconds == nil || *poly.LagSeconds != 20 {
			t.Errorf("polygon, 10 blocks of 2 s behind: %s", resp.Body)
		}
		if base.Chain != "base" || !base.Followed || base.LastBlock != nil || base.NodeHead != nil || base.LagBlocks != nil {
			t.Errorf("base, followed, nothing stored or heard: %s", resp.Body)
		}
		if arb.LastBlock != nil || arb.NodeHead == nil || *arb.NodeHead != 42 || arb.LagBlocks != nil {
			t.Errorf("arbitrum, followed, heard, nothing stored: %s", resp.Body)
		}
	})
}
