// Package jsonrpctest writes JSON-RPC answers for the fake nodes of tests
// (the ones no real node here can play: faults, other chains' quirks).
package jsonrpctest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/chainquery/chainquery/jsonrpc"
)

// Answer writes the answer to body, a single call or a batch, asking handle
// for each call's result or error. A batch's answers come in reverse order,
// as nodes may send them: clients must match answers by id.
func Answer(w http.ResponseWriter, body []byte, handle func(method string) (any, *jsonrpc.RPCError)) {
	type req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	one := func(r req) map[string]any {
		res, err := handle(r.Method)
		m := map[string]any{"jsonrpc": "2.0", "id": r.ID}
		if err != nil {
			m["error"] = err
		} else {
			m["result"] = res
		}
		return m
	}
	w.Header().Set("Content-Type", "application/json")
	if strings.HasPrefix(strings.TrimSpace(string(body)), "[") {
		var rs []req
		json.Unmarshal(body, &rs)
		out := make([]map[string]any, 0, len(rs))
		for i := len(rs) - 1; i >= 0; i-- {
			out = append(out, one(rs[i]))
		}
		json.NewEncoder(w).Encode(out)
		return
	}
	var r req
	json.Unmarshal(body, &r)
	json.NewEncoder(w).Encode(one(r))
}
