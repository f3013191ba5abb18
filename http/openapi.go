package http

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery"
)

// operation is what the OpenAPI document says about a route beyond its
// method and path, which come from the route table itself.
type operation struct {
	id          string
	summary     string
	description string
	params      []obj // query parameters; path parameters follow from the pattern
	body        obj   // request body schema; nil when the route takes none
	response    string
	notFound    string // when 404 answers an existing path; "" if never
	unavailable bool   // 503 answers without a key too (readiness)
	cacheable   bool   // deep answers get an ETag and may be cached (etag.go)
	stream      string // the row schema of an NDJSON answer (exports.go); "" for a JSON answer
}

// obj is a JSON object that keeps its keys in the order given, so that the
// document reads in the interface's field order rather than alphabetically.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes o's members in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.k, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ref returns a reference to a schema of the components.
func ref(name string) obj { return obj{{"$ref", "#/components/schemas/" + name}} }

// Documents of the routes.
var (
	filterTracesDoc = operation{
		id:      "filterTraces",
		summary: "Filter Traces",
		description: "Execution traces of a block range (at most 100 blocks, both ends inclusive) or of a datetime range, " +
			"optionally by sender (from_address) and recipient (to_address). Addresses within one field are alternatives; " +
			"both fields together must both match. Results are ordered by block_number, transaction_index and the trace's " +
			"depth-first position (trace_address compared component by component as integers). count is the number of " +
			"matching traces over all pages. Traces are served from the chain's trace history start (polygon: 2025-01-01T00:00:00Z).",
		params:    []obj{limitParam, offsetParam},
		body:      ref("TraceFilter"),
		response:  "TraceList",
		cacheable: true,
	}
	transactionLogsDoc = operation{
		id:          "getTransactionLogs",
		summary:     "Get Transaction Logs",
		description: "Logs emitted by one transaction, in log_index order. count is the transaction's log count.",
		params:      []obj{blockNumberParam(false, "Block of the transaction; narrows the lookup, and a wrong block gives 404."), limitParam, offsetParam},
		response:    "LogList",
		notFound:    "The transaction is not indexed (in the given block, when block_number is given).",
		cacheable:   true,
	}
	blockReceiptsDoc = operation{
		id:          "getBlockReceipts",
		summary:     "Get Block Receipts",
		description: "Transaction receipts of one block, in transaction_index order. count is the block's receipt count.",
		params:      []obj{blockNumberParam(true, "Block to query."), limitParam, offsetParam},
		response:    "ReceiptList",
		notFound:    "The block is not indexed.",
		cacheable:   true,
	}
	blockDoc = operation{
		id:          "getBlock",
		summary:     "Get Block",
		description: "One block; with full_transactions=true, its transactions in transaction_index order.",
		params: []obj{blockNumberParam(true, "Block to query."), boolParam("full_transactions",
			"When true, transactions holds the block's transactions; when false it is null.")},
		response:  "Block",
		notFound:  "The block is not indexed.",
		cacheable: true,
	}
	latestBlockDoc = operation{
		id:          "getLatestBlock",
		summary:     "Get Latest Block",
		description: "The highest block number indexed for the chain.",
		response:    "LatestBlock",
		notFound:    "Nothing is indexed for the chain yet.",
	}
	tokenBalanceDoc = operation{
		id:      "getTokenBalanceByAccount",
		summary: "Token Balance by Account",
		description: "Balance of one Solana token account at a snapshot time: the account's latest balance change at " +
			"or before datetime_filter.",
		params: []obj{datetimeFilterParam, boolParam("include_metadata",
			"When true, token_name and token_symbol are filled from the token registry.")},
		response: "TokenBalance",
		notFound: "The account is unknown, has no balance at or before datetime_filter, or datetime_filter is later than the indexed history.",
	}
	filterLogsDoc = operation{
		id:      "filterLogs",
		summary: "Filter Logs",
		description: "Event logs of a block range or of a datetime range (both ends inclusive; of any length with an address or a topic0, " +
			"else at most 100 blocks either way), " +
			"optionally by the contract that emitted them (address) and by topic (topic0 to topic3), as eth_getLogs matches them: " +
			"the values of one field are alternatives, and every field given must match; a log without a topic at a " +
			"position never matches a filter on it. Results are ordered by block_number and log_index. count is the " +
			"number of matching logs over all pages; with an address or a topic0 it costs the same whatever the matches. " +
			"503 names the blocks of a store written by an earlier release whose logs are not indexed yet (chainquery migrate).",
		params:    []obj{limitParam, offsetParam},
		body:      ref("LogFilter"),
		response:  "LogPage",
		cacheable: true,
	}
	transactionDoc = operation{
		id:      "getTransaction",
		summary: "Get Transaction",
		description: "One transaction by its hash, with its receipt's fields: the transaction object of Get Block with " +
			"full_transactions=true. No block number is needed; should a chain hold the hash twice, the highest block's wins " +
			"unless block_number names the block.",
		params:    []obj{blockNumberParam(false, "Block of the transaction; narrows the lookup, and a wrong block gives 404.")},
		response:  "Transaction",
		notFound:  "The transaction is not indexed (in the given block, when block_number is given).",
		cacheable: true,
	}
	transactionReceiptDoc = operation{
		id:          "getTransactionReceipt",
		summary:     "Get Transaction Receipt",
		description: "The receipt of one transaction by its hash, as Get Block Receipts shows it.",
		params:      []obj{blockNumberParam(false, "Block of the transaction; narrows the lookup, and a wrong block gives 404.")},
		response:    "Receipt",
		notFound:    "The transaction is not indexed (in the given block, when block_number is given).",
		cacheable:   true,
	}
	transactionTracesDoc = operation{
		id:      "getTransactionTraces",
		summary: "Get Transaction Traces",
		description: "The call tree of one transaction by its hash: its traces in Filter Traces' row shape and order " +
			"(depth-first, trace_address compared component by component as integers). count is the transaction's " +
			"trace count: 0 where the chain's blocks are stored without traces (see /api/v1/customer/status, traces_indexed) " +
			"and for a transaction before the chain's trace history start, as Filter Traces (polygon: 2025-01-01T00:00:00Z).",
		params:    []obj{blockNumberParam(false, "Block of the transaction; narrows the lookup, and a wrong block gives 404."), limitParam, offsetParam},
		response:  "TransactionTraceList",
		notFound:  "The transaction is not indexed (in the given block, when block_number is given).",
		cacheable: true,
	}
	blockLogsDoc = operation{
		id:          "getBlockLogs",
		summary:     "Get Block Logs",
		description: "Every log of one block, in log_index order, each with its transaction's hash, sender and recipient. count is the block's log count.",
		params:      []obj{blockNumberParam(true, "Block to query."), limitParam, offsetParam},
		response:    "BlockLogList",
		notFound:    "The block is not indexed.",
		cacheable:   true,
	}
	ownerBalancesDoc = operation{
		id:      "getTokenBalancesByOwner",
		summary: "Token Balances by Owner",
		description: "Every token account of one Solana wallet at a snapshot time, each with its balance as Token Balance by " +
			"Account gives it (zero balances included). An account is the owner's when its latest balance change at or before " +
			"datetime_filter that names an owner names this one. Ordered by token account (its 32 bytes, not its base58 text); " +
			"count is the number of such accounts. An owner with none answers an empty result.",
		params: []obj{datetimeFilterParam, boolParam("include_metadata",
			"When true, token_name and token_symbol are filled from the token registry."), limitParam, offsetParam},
		response: "TokenBalanceList",
		notFound: "datetime_filter is later than the indexed history, or no token balances are indexed yet.",
	}
	openAPIDoc = operation{
		id:          "getOpenAPI",
		summary:     "OpenAPI document",
		description: "This document. Needs no API key.",
	}
	healthDoc = operation{
		id:          "getHealth",
		summary:     "Health check",
		description: "Answers 200 while the process serves requests. Needs no API key.",
		response:    "Health",
	}
	readyDoc = operation{
		id:      "getReady",
		summary: "Readiness check",
		description: "Answers 200 when the server can serve: its database answers and has applied every migration of " +
			"this version, each chain it follows (serve --config) has a stored block, and, where serve is configured so " +
			"(--ready-max-lag), each is no further behind its node than allowed. Otherwise 503 with a detail naming what " +
			"is not ready, such as a followed chain with no block yet and its follower's last error. Needs no API key.",
		response:    "Ready",
		unavailable: true,
	}
)

// Parameters shared by several routes.
var (
	limitParam = param("limit", "query", false, "Page size.",
		obj{{"type", "integer"}, {"minimum", 1}, {"maximum", chainquery.MaxLimit}, {"default", chainquery.DefaultLimit}})
	offsetParam = param("offset", "query", false,
		"Items to skip; page with offset += limit while offset < count. An offset at or past count gives an empty result.",
		obj{{"type", "integer"}, {"minimum", 0}, {"maximum", int64(chainquery.MaxOffset)}, {"default", 0}})
	datetimeFilterParam = param("datetime_filter", "query", true,
		"Snapshot time on the 10-minute grid with a timezone, not within the last hour of the current UTC time.",
		obj{{"type", "string"}, {"format", "date-time"},
			{"pattern", chainquery.SnapshotPattern},
			{"examples", []string{"2025-06-01T12:00:00Z"}}})
)

func blockNumberParam(required bool, desc string) obj {
	return param("block_number", "query", required, desc,
		obj{{"type", "integer"}, {"minimum", 0}, {"maximum", int64(chainquery.MaxBlockNumber)}})
}

func boolParam(name, desc string) obj {
	return param(name, "query", false, desc+" Accepts true, false, 1 or 0 in any case.",
		obj{{"type", "boolean"}, {"default", false}})
}

func param(name, in string, required bool, desc string, schema obj) obj {
	return obj{{"name", name}, {"in", in}, {"required", required}, {"description", desc}, {"schema", schema}}
}

// pathParam documents a parameter of a route's pattern; traced are the
// chains the traced operations serve.
func pathParam(rt route, name string, traced []chainquery.Chain) obj {
	switch name {
	case "chain":
		desc, serves := "Chain to query.", rt.endpoint.Chains()
		if slices.Contains(tracedEndpoints, rt.endpoint) {
			desc, serves = "Chain to query: one whose traces this server indexes, as the document it serves lists them "+
				"(polygon; the chains it follows with traces; any chain whose stored blocks hold traces: the status's "+
				"traces_indexed). The list grows when an ingester starts tracing a chain.", traced
		}
		var chains []string
		for _, c := range serves {
			chains = append(chains, string(c))
		}
		return param(name, "path", true, desc, obj{{"type", "string"}, {"enum", chains}})
	case "transaction_hash":
		return param(name, "path", true, "Transaction hash; matched regardless of case.", hashSchema)
	case "owner":
		return param(name, "path", true, "Base58-encoded wallet address; it must decode to 32 bytes.",
			obj{{"type", "string"}, {"minLength", 32}, {"maxLength", 44}, {"pattern", "^[1-9A-HJ-NP-Za-km-z]{32,44}$"}})
	case "token_account":
		return param(name, "path", true, "Base58-encoded token account address; it must decode to 32 bytes.",
			obj{{"type", "string"}, {"minLength", 32}, {"maxLength", 44}, {"pattern", "^[1-9A-HJ-NP-Za-km-z]{32,44}$"}})
	case "account":
		return param(name, "path", true, "Base58-encoded account address (a wallet or any account); it must decode to 32 bytes.",
			obj{{"type", "string"}, {"minLength", 32}, {"maxLength", 44}, {"pattern", "^[1-9A-HJ-NP-Za-km-z]{32,44}$"}})
	}
	panic("openapi: undocumented path parameter " + name) // caught by the tests at once
}

var pathParamRe = regexp.MustCompile(`\{([a-z_]+)\}`)

// errorResponses names and describes every error status the API answers.
var errorResponses = []struct {
	status int
	name   string
	desc   string
}{
	{http.StatusBadRequest, "BadRequest", "A path, query or body value breaks a rule; detail names the parameter and the rule."},
	{http.StatusUnauthorized, "Unauthorized", "The apikey header is missing, empty or unknown (detail: Invalid or missing API key)."},
	{http.StatusForbidden, "Forbidden", "The key is not enabled for this endpoint (detail: API key is not enabled for this endpoint)."},
	{http.StatusNotFound, "NotFound", "Nothing indexed answers the request, or the path does not exist."},
	{http.StatusMethodNotAllowed, "MethodNotAllowed", "The path exists but not with this method; the Allow header lists the methods."},
	{http.StatusRequestEntityTooLarge, "PayloadTooLarge", "The request body is larger than 64 KiB."},
	{http.StatusTooManyRequests, "TooManyRequests", "The key has made too many requests: its rate limit is exceeded, its cost budget (database time per second) is spent, or too many of its requests use the database at once; the detail says which and the Retry-After header gives the seconds to wait."},
	{http.StatusInternalServerError, "InternalError", "An unexpected fault; the detail never carries internals."},
	{http.StatusServiceUnavailable, "Unavailable", "The store cannot be reached, or the request ran past the server's request deadline (the detail says how to narrow it); retry later."},
}

// buildOpenAPI returns the OpenAPI 3.1 document of routes, the traced
// operations (tracedEndpoints) serving the chains traced.
func buildOpenAPI(routes []route, traced []chainquery.Chain) []byte {
	paths := obj{}
	index := map[string]int{}
	for _, rt := range routes {
		i, ok := index[rt.pattern]
		if !ok {
			i = len(paths)
			index[rt.pattern] = i
			paths = append(paths, kv{rt.pattern, obj{}})
		}
		item := paths[i].v.(obj)
		paths[i].v = append(item, kv{strings.ToLower(rt.method), buildOperation(rt, traced)})
	}
	responses := obj{}
	for _, e := range errorResponses {
		r := obj{{"description", e.desc}}
		headers := costHeaders()
		switch e.status {
		case http.StatusTooManyRequests:
			headers = append(obj{{"Retry-After", obj{
				{"description", "Whole seconds to wait before the key may make another request."},
				{"required", true},
				{"schema", obj{{"type", "integer"}, {"minimum", 1}}},
			}}}, headers...)
		case http.StatusServiceUnavailable:
			headers = append(obj{{"Retry-After", obj{
				{"description", "Whole seconds to wait before retrying, when the request ran past its deadline."},
				{"schema", obj{{"type", "integer"}, {"minimum", 1}}},
			}}}, headers...)
		}
		r = append(r, kv{"headers", headers})
		responses = append(responses, kv{e.name, append(r,
			kv{"content", obj{{"application/json", obj{{"schema", ref("Error")}}}}})})
	}
	doc := obj{
		{"openapi", "3.1.0"},
		{"info", obj{
			{"title", "chainquery"},
			{"version", "1.0.0"},
			{"description", "Read-only API over indexed blockchain data. Every operation under /api/v1/customer/ needs an API key in the apikey header. " +
				"Every error answers {\"detail\": \"...\"}. Integers, in a query or a request body, are written as decimal digits: " +
				"a sign, a fraction or an exponent (-0, +1, 1.0, 1e3) is a 400 even where the value is a whole number in range. " +
				"Response datetimes are UTC: YYYY-MM-DDTHH:MM:SS, and YYYY-MM-DD HH:MM:SS.mmm for token balances. " +
				"Answers of 1 KiB or more are gzip-compressed when the request's Accept-Encoding allows gzip."},
		}},
		{"paths", paths},
		{"components", obj{
			{"schemas", schemas()},
			{"responses", responses},
			{"securitySchemes", obj{{"apikey", obj{{"type", "apiKey"}, {"in", "header"}, {"name", "apikey"}}}}},
		}},
		{"security", []obj{{{"apikey", []string{}}}}},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic("openapi: " + err.Error()) // static data; the tests build it
	}
	return append(b, '\n')
}

func buildOperation(rt route, traced []chainquery.Chain) obj {
	d := rt.doc
	op := obj{{"operationId", d.id}, {"summary", d.summary}, {"description", d.description}}
	if rt.endpoint == "" {
		op = append(op, kv{"security", []obj{}})
	}
	var params []obj
	for _, m := range pathParamRe.FindAllStringSubmatch(rt.pattern, -1) {
		params = append(params, pathParam(rt, m[1], traced))
	}
	params = append(params, d.params...)
	if len(params) > 0 {
		op = append(op, kv{"parameters", params})
	}
	if d.body != nil {
		op = append(op, kv{"requestBody", obj{
			{"required", true},
			{"content", obj{{"application/json", obj{{"schema", d.body}}}}},
		}})
	}
	ok := obj{{"description", "OK"}}
	if d.stream != "" {
		ok = obj{{"description", "OK: NDJSON, each line a " + d.stream + " or an ExportCheckpoint, the last of a complete export {\"cursor\": null}. " +
			"The cost headers come as trailers, for the whole response; X-Cost-Limit as a header."},
			{"content", obj{{contentTypeNDJSON, obj{{"schema", obj{{"oneOf", []obj{ref(d.stream), ref("ExportCheckpoint")}}}}}}}}}
	} else if d.response != "" {
		ok = append(ok, kv{"content", obj{{"application/json", obj{{"schema", ref(d.response)}}}}})
	} else {
		ok = append(ok, kv{"content", obj{{"application/json", obj{{"schema", obj{{"type", "object"}}}}}}})
	}
	var headers obj
	if rt.endpoint != "" {
		headers = costHeaders()
	}
	if d.cacheable {
		headers = append(obj{
			{"Cache-Control", obj{{"description", cacheControlDoc}, {"schema", obj{{"type", "string"}}}}},
			{"ETag", obj{{"description", etagDoc}, {"schema", obj{{"type", "string"}}}}},
		}, headers...)
	}
	if len(headers) > 0 {
		ok = append(ok, kv{"headers", headers})
	}
	responses := obj{{"200", ok}}
	if d.cacheable {
		responses = append(responses, kv{"304", obj{
			{"description", "Not Modified: the request's If-None-Match names the answer's current ETag (compared weakly), or is *. No body."},
			{"headers", append(obj{{"ETag", obj{{"description", "The answer's current entity tag."}, {"schema", obj{{"type", "string"}}}}}}, costHeaders()...)},
		}})
	}
	for _, e := range errorResponses {
		if !answers(rt, e.status) {
			continue
		}
		r := obj{{"$ref", "#/components/responses/" + e.name}}
		if e.status == http.StatusNotFound && d.notFound != "" {
			r = obj{{"description", d.notFound}, {"content", obj{{"application/json", obj{{"schema", ref("Error")}}}}}}
		}
		responses = append(responses, kv{strconv.Itoa(e.status), r})
	}
	return append(op, kv{"responses", responses})
}

// What the OpenAPI document says of the caching headers of cacheable
// operations (etag.go).
const (
	cacheControlDoc = "max-age=3600 when every block the answer is about is at least the chain's confirmations below the latest " +
		"indexed block (such an answer changes only through a reorg deeper than that); no-cache otherwise."
	etagDoc = "A strong entity tag of the answer's bytes, sent only with max-age=3600; the gzip-compressed form has its own " +
		"(suffix -gzip). Send it back in If-None-Match to get 304 while the answer is unchanged."
)

// answers reports whether rt can answer status: which errors a route can
// give follows from what it takes and whether it needs a key.
func answers(rt route, status int) bool {
	keyed := rt.endpoint != ""
	switch status {
	case http.StatusBadRequest:
		return len(rt.doc.params) > 0 || rt.doc.body != nil || strings.Contains(rt.pattern, "{")
	case http.StatusServiceUnavailable:
		return keyed || rt.doc.unavailable
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return keyed
	case http.StatusNotFound:
		return rt.doc.notFound != ""
	case http.StatusRequestEntityTooLarge:
		return rt.doc.body != nil
	case http.StatusMethodNotAllowed, http.StatusInternalServerError:
		return true
	}
	return false
}

// costHeaders are what the document says of the cost headers (share.go),
// which every answer of a keyed operation may carry.
func costHeaders() obj {
	return obj{
		{headerCost, obj{
			{"description", "What the request cost, in milliseconds of database time (a cached answer costs 0). Absent when fair share is off."},
			{"schema", obj{{"type", "string"}}},
		}},
		{headerCostLeft, obj{
			{"description", "What is left of the key's cost budget after this request, in milliseconds of database time; below zero, the key's next requests get 429 until it refills."},
			{"schema", obj{{"type", "string"}}},
		}},
		{headerCostLimit, obj{
			{"description", "The key's cost budget: its refill per second and what it holds when full, e.g. \"500/s, burst 1000\"."},
			{"schema", obj{{"type", "string"}}},
		}},
	}
}
