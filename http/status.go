package http

import (
	"math"
	"net/http"

	"github.com/chainquery/chainquery"
)

// pathStatus is the indexing status: what each chain holds, for a client
// to know which blocks and times the other endpoints can answer.
const pathStatus = "/api/v1/customer/status"

// statusBody is the answer of GET /api/v1/customer/status.
type statusBody struct {
	Chains []chainStatusBody `json:"chains"`
	Solana *solanaStatusBody `json:"solana"`
}

// chainStatusBody is one EVM chain of statusBody. The fields of what is
// stored are null when nothing is; those of the node are null unless this
// process follows the chain and has heard from its node; those of the
// follower are null unless it follows the chain.
type chainStatusBody struct {
	Chain           chainquery.Chain `json:"chain"`
	FirstBlock      *uint64          `json:"first_block"`
	LastBlock       *uint64          `json:"last_block"`
	LastBlockTime   *string          `json:"last_block_time"`
	TracesIndexed   bool             `json:"traces_indexed"`
	TracesFromBlock *uint64          `json:"traces_from_block"`
	TracesFromTime  *string          `json:"traces_from_time"`
	Followed        bool             `json:"followed"`
	NodeHead        *uint64          `json:"node_head"`
	LagBlocks       *uint64          `json:"lag_blocks"`
	LagSeconds      *float64         `json:"lag_seconds"`
	FollowState     *string          `json:"follow_state"`
	FollowError     *string          `json:"follow_error"`
	FollowErrorTime *string          `json:"follow_error_time"`
}

// The follow_state of a followed chain: the first two say why a server that
// follows a chain is not ready yet (/readyz).
const (
	followNotStarted = "not_started"  // the follower has not heard from the node yet
	followNoBlockYet = "no_block_yet" // it has, but no block of the chain is stored yet
	followFollowing  = "following"    // it has, and blocks are stored
)

// solanaStatusBody is the Solana part of statusBody: token balances are
// indexed up to this slot and time.
type solanaStatusBody struct {
	LastSlot      uint64 `json:"last_slot"`
	LastBlockTime string `json:"last_block_time"`
}

// handleStatus answers what is indexed of each chain and, for the chains
// this process follows, how far behind the node it is. Any valid key may
// ask (chainquery.EndpointAny): it tells what every endpoint can serve.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.store.IndexStatus(r.Context())
	if err != nil {
		return err
	}
	var heads map[chainquery.Chain]uint64
	if s.nodeHeads != nil {
		heads = s.nodeHeads()
	}
	var failures map[chainquery.Chain]FollowError
	if s.followErrors != nil {
		failures = s.followErrors()
	}
	stored := make(map[chainquery.Chain]*chainquery.ChainStatus, len(st.Chains))
	for _, c := range st.Chains {
		stored[c.Chain] = c
	}
	body := statusBody{Chains: []chainStatusBody{}}
	for _, chain := range chainquery.EVMChains {
		c := stored[chain]
		head, followed := heads[chain]
		if c == nil && !followed {
			continue
		}
		out := chainStatusBody{Chain: chain, Followed: followed}
		if c != nil {
			out.FirstBlock, out.LastBlock = &c.FirstBlock, &c.LastBlock
			out.LastBlockTime = datetime(c.LastTime)
			if c.TracesFrom != nil {
				out.TracesIndexed, out.TracesFromBlock = true, c.TracesFrom
				out.TracesFromTime = datetime(c.TracesFromTime)
			}
		}
		if followed {
			state := followFollowing
			if head == 0 {
				state = followNotStarted
			} else if c == nil {
				state = followNoBlockYet
			}
			out.FollowState = &state
			if f, ok := failures[chain]; ok {
				out.FollowError = &f.Text
				out.FollowErrorTime = datetime(f.Time.Unix())
			}
		}
		if followed && head > 0 {
			out.NodeHead = &head
			if c != nil {
				lag := head - min(head, c.LastBlock)
				out.LagBlocks = &lag
				// Seconds as /readyz's --ready-max-lag counts them: blocks
				// behind in the chain's recent block time, unknown while
				// one block is stored (unless none is behind).
				if lag == 0 || c.LastBlock > c.FirstBlock {
					secs := math.Round(float64(lag)*c.BlockTime*1000) / 1000
					out.LagSeconds = &secs
				}
			}
		}
		body.Chains = append(body.Chains, out)
	}
	if st.Solana != nil {
		body.Solana = &solanaStatusBody{LastSlot: st.Solana.Slot,
			LastBlockTime: st.Solana.BlockTime.UTC().Format(chainquery.DatetimeLayout)}
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// datetime formats a unix time in seconds as the API writes datetimes.
func datetime(unix int64) *string {
	s := chainquery.FormatDatetime(unix)
	return &s
}

// statusDoc is what the OpenAPI document says about the status route.
var statusDoc = operation{
	id:      "getStatus",
	summary: "Indexing status",
	description: "What is indexed: for each EVM chain with stored blocks (or followed by this server), the first and last " +
		"indexed block, the last block's time, and whether traces are indexed and from which block. Traces are decided " +
		"from the data: traces_from_block is the lowest stored block holding at least one trace (blocks ingested with " +
		"traces off, or without any call, hold none), so traces_indexed is false until a traced block is stored. " +
		"For Solana, the slot and time token balances are indexed up to (null when none are). " +
		"Where this server follows the chain (serve --config), also the node's head and the lag behind it, in blocks and " +
		"in seconds (the blocks behind times the chain's block time over its last 100 stored blocks, confirmations " +
		"included, as /readyz counts it), what the follower is at (follow_state: not_started until it has heard from the node, " +
		"no_block_yet until a block of the chain is stored, then following) and its last error, such as an unreachable node. " +
		"Any valid API key may call it, whichever endpoints it is enabled for.",
	response: "Status",
}

// statusSchema is the schema of statusBody, for the OpenAPI document.
func statusSchema() obj {
	datetimeOrNull := obj{{"type", []string{"string", "null"}}, {"examples", []string{"2025-03-01T00:00:00"}},
		{"description", "UTC, YYYY-MM-DDTHH:MM:SS, no zone designator; null when nothing is stored."}}
	countOrNull := func(desc string) obj {
		return obj{{"type", []string{"integer", "null"}}, {"minimum", 0}, {"description", desc}}
	}
	chain := object("What is indexed of one EVM chain.", obj{
		{"chain", obj{{"type", "string"}, {"enum", chainquery.EVMChains}}},
		{"first_block", countOrNull("The lowest indexed block; null when none is stored yet (a followed chain).")},
		{"last_block", countOrNull("The highest indexed block (Get Latest Block's answer); null when none is stored yet.")},
		{"last_block_time", datetimeOrNull},
		{"traces_indexed", obj{{"type", "boolean"}, {"description", "Whether any stored block holds a trace."}}},
		{"traces_from_block", countOrNull("The lowest stored block holding a trace; null when none does.")},
		{"traces_from_time", datetimeOrNull},
		{"followed", obj{{"type", "boolean"}, {"description", "Whether this server follows the chain's node (serve --config)."}}},
		{"node_head", countOrNull("The node's latest block as the follower last heard it; null unless followed and heard from.")},
		{"lag_blocks", countOrNull("node_head - last_block (0 when ahead), confirmations included; null when either is.")},
		{"lag_seconds", obj{{"type", []string{"number", "null"}}, {"minimum", 0},
			{"description", "lag_blocks times the block time over the last 100 stored blocks; null when lag_blocks is, or when the block time is unknown (one block stored)."}}},
		{"follow_state", obj{{"type", []string{"string", "null"}}, {"enum", []any{followNotStarted, followNoBlockYet, followFollowing, nil}},
			{"description", "Where the follower is: not_started until it has heard from the node (see follow_error for why not), " +
				"no_block_yet until a block of the chain is stored, then following; null unless followed. /readyz answers 503 " +
				"while a followed chain has no stored block."}}},
		{"follow_error", obj{{"type", []string{"string", "null"}},
			{"description", "The follower's last error, such as its node unreachable or of another chain (the follower " +
				"retries by itself). Kept after it recovers (see follow_error_time); null unless followed and failed."}}},
		{"follow_error_time", obj{{"type", []string{"string", "null"}}, {"examples", []string{"2025-03-01T00:00:00"}},
			{"description", "When follow_error happened, UTC, YYYY-MM-DDTHH:MM:SS, no zone designator; null when it is."}}},
	})
	solana := obj{{"type", []string{"object", "null"}}, {"description", "Solana token balances: indexed up to this slot and time; null when none are."},
		{"required", []string{"last_slot", "last_block_time"}},
		{"properties", obj{
			{"last_slot", nonNegInt},
			{"last_block_time", datetimeShape},
		}}}
	return object("The indexing status.", obj{
		{"chains", obj{{"type", "array"}, {"items", chain}, {"description", "EVM chains with stored blocks or followed, in the interface's order."}}},
		{"solana", solana},
	})
}
