package http

import "github.com/chainquery/chainquery"

var (
	hashSchema    = obj{{"type", "string"}, {"pattern", "^0x[a-fA-F0-9]{64}$"}}
	addressSchema = obj{{"type", "string"}, {"pattern", "^0x[a-fA-F0-9]{40}$"}}
	hexSchema     = obj{{"type", "string"}, {"pattern", "^0x([a-f0-9]{2})*$"}, {"description", "0x-prefixed lowercase hex; 0x when empty."}}
	datetimeShape = obj{{"type", "string"}, {"examples", []string{"2025-03-01T00:00:00"}},
		{"description", "UTC, YYYY-MM-DDTHH:MM:SS, no zone designator."}}
	balanceDatetime = obj{{"type", "string"}, {"examples", []string{"2025-06-01 12:00:00.000"}},
		{"description", "UTC, YYYY-MM-DD HH:MM:SS.mmm."}}
	integer    = obj{{"type", "integer"}}
	nonNegInt  = obj{{"type", "integer"}, {"minimum", 0}}
	boolean    = obj{{"type", "boolean"}}
	weiString  = obj{{"type", "string"}, {"pattern", "^[0-9]+$"}, {"description", "Wei, decimal digits."}}
	nullable   = func(t string, desc string) obj { return obj{{"type", []string{t, "null"}}, {"description", desc}} }
	addrOrNull = obj{{"type", []string{"string", "null"}}, {"pattern", "^0x[a-f0-9]{40}$"}}
)

// object returns an object schema whose every property is required: the API
// always writes every field (null where the value is absent), except those
// named in optional.
func object(desc string, props obj, optional ...string) obj {
	var required []string
	for _, p := range props {
		if !contains(optional, p.k) {
			required = append(required, p.k)
		}
	}
	return obj{{"type", "object"}, {"description", desc}, {"required", required}, {"properties", props}}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func list(desc, item string, extra ...kv) obj {
	props := obj{}
	props = append(props, extra...)
	props = append(props,
		// No "maximum" (the offset parameter has one): validators that read
		// JSON numbers as float64 would round the largest offset, echoed
		// here, above it (see balance_source).
		kv{"offset", obj{{"type", "integer"}, {"minimum", 0}, {"description", "The offset applied."}}},
		kv{"limit", obj{{"type", "integer"}, {"minimum", 1}, {"maximum", chainquery.MaxLimit}, {"description", "The limit applied."}}},
		kv{"result", obj{{"type", "array"}, {"items", ref(item)}}},
		kv{"count", obj{{"type", "integer"}, {"minimum", 0}, {"description", "Number of items that match over all pages."}}},
	)
	return object(desc, props)
}

func addressFilter(desc string) obj {
	return obj{{"description", desc + " Matched regardless of case; duplicates are ignored."}, {"oneOf", []obj{
		addressSchema,
		{{"type", "array"}, {"items", addressSchema}, {"minItems", 1}, {"maxItems", chainquery.MaxFilterAddresses}},
		{{"type", "null"}, {"description", "Same as leaving the field out."}},
	}}}
}

func topicFilter(desc string) obj {
	return obj{{"description", desc + " Matched regardless of case; duplicates are ignored."}, {"oneOf", []obj{
		hashSchema,
		{{"type", "array"}, {"items", hashSchema}, {"minItems", 1}, {"maxItems", chainquery.MaxFilterAddresses}},
		{{"type", "null"}, {"description", "Same as leaving the field out."}},
	}}}
}

// rangeBody is the schema of a filter's request body (TraceFilter,
// LogFilter): exactly one of its two ranges, and the filter's own members.
func rangeBody(desc string, members ...kv) obj {
	// A null member of the Filter Traces body counts as absent, as the
	// handler reads it (parseTraceFilterBody): each member allows null, and
	// the two ranges are told apart by which members are not null.
	bodyDatetime := func(desc string) obj {
		return obj{{"type", []string{"string", "null"}}, {"format", "date-time"},
			{"pattern", chainquery.DatetimePattern},
			{"description", desc + " RFC 3339 with a timezone (Z or an offset), compared with block timestamps; null counts as absent."}}
	}
	blockNum := func(desc string) obj {
		return obj{{"type", []string{"integer", "null"}}, {"minimum", 0}, {"maximum", int64(chainquery.MaxBlockNumber)},
			{"description", desc + " null counts as absent."}}
	}
	// rangeOf is one of the two exclusive forms of the Filter Traces body:
	// both members of its range given and not null, those of the other
	// range absent or null. Presence alone (required, dependentRequired)
	// cannot say it, as a null member is present but counts as absent.
	rangeOf := func(title string, given, other [2]string) obj {
		return obj{
			{"title", title},
			{"required", given[:]},
			{"properties", obj{
				{given[0], obj{{"not", obj{{"type", "null"}}}}},
				{given[1], obj{{"not", obj{{"type", "null"}}}}},
				{other[0], obj{{"type", "null"}}},
				{other[1], obj{{"type", "null"}}},
			}},
		}
	}
	blocks, datetimes := [2]string{"from_block", "to_block"}, [2]string{"from_datetime", "to_datetime"}
	props := obj{
		{"from_block", blockNum("First block of a block range, inclusive; goes with to_block.")},
		{"to_block", blockNum("Last block of a block range, inclusive; goes with from_block, at least from_block and at most from_block + 99.")},
		{"from_datetime", bodyDatetime("Start of a datetime range, inclusive; goes with to_datetime.")},
		{"to_datetime", bodyDatetime("End of a datetime range, inclusive; goes with from_datetime and is not before it.")},
	}
	return obj{
		{"type", "object"},
		{"description", desc},
		{"additionalProperties", false},
		{"properties", append(props, members...)},
		{"oneOf", []obj{
			rangeOf("Block range", blocks, datetimes),
			rangeOf("Datetime range", datetimes, blocks),
		}},
	}
}

// traceFilterMembers are the members of the Filter Traces body besides its
// range.
func traceFilterMembers() []kv {
	return []kv{
		{"from_address", addressFilter("Sender of the trace call; any of the addresses matches.")},
		{"to_address", addressFilter("Recipient of the trace call; any of the addresses matches.")},
	}
}

// logFilterMembers are the members of the Filter Logs body besides its
// range.
func logFilterMembers() []kv {
	return []kv{
		{"address", addressFilter("Contract that emitted the log; any of the addresses matches.")},
		{"topic0", topicFilter("First topic (the event's signature hash); any of the values matches.")},
		{"topic1", topicFilter("Second topic; any of the values matches.")},
		{"topic2", topicFilter("Third topic; any of the values matches.")},
		{"topic3", topicFilter("Fourth topic; any of the values matches.")},
	}
}

// schemas are the schemas of the OpenAPI document. Each mirrors a response
// struct of this package field for field, in the same order; the tests check
// that every field a handler writes is documented.
func schemas() obj {
	return append(obj{
		{"Error", object("Every error response.", obj{{"detail", obj{{"type", "string"}, {"minLength", 1}}}})},
		{"Health", object("Liveness.", obj{{"status", obj{{"type", "string"}, {"const", "ok"}}}})},
		{"Ready", object("Readiness.", obj{{"status", obj{{"type", "string"}, {"const", "ready"}}}})},
		{"TraceFilter", rangeBody("Exactly one range: from_block with to_block, or from_datetime with to_datetime; a member whose value is null "+
			"counts as absent, so the members of the other range may be left out or null. Rules the schema cannot state: "+
			"to_block is at least from_block and to_block - from_block is at most 99 (both ends inclusive, at most 100 blocks); "+
			"to_datetime is not before from_datetime. Unknown fields are rejected.",
			traceFilterMembers()...,
		)},
		{"LogFilter", rangeBody("Exactly one range, as in TraceFilter: from_block with to_block, or from_datetime with to_datetime; a "+
			"member whose value is null counts as absent. Rules the schema cannot state: to_block is at least from_block, "+
			"to_datetime is not before from_datetime, and without an address or a topic0, to_block - from_block is at most 99 "+
			"and a datetime range spans at most 100 blocks. Unknown fields are rejected.",
			logFilterMembers()...,
		)},
		{"LogPage", list("A page of logs.", "Log")},
		traceSchema(),
		{"TraceList", list("A page of traces.", "Trace")},
		logSchema(),
		{"LogList", list("A page of a transaction's logs.", "Log", kv{"transaction_hash", hashSchema})},
		receiptSchema(),
		{"ReceiptList", list("A page of a block's receipts.", "Receipt", kv{"block_number", nonNegInt})},
		blockSchema(),
		transactionSchema(),
		{"TransactionTraceList", list("A page of a transaction's traces.", "Trace", kv{"transaction_hash", hashSchema})},
		{"BlockLogList", list("A page of a block's logs.", "Log", kv{"block_number", nonNegInt})},
		{"TokenBalanceList", list("A page of an owner's token balances.", "TokenBalance", kv{"owner", obj{{"type", "string"}, {"description", "The owner asked for (base58)."}}})},
		{"LatestBlock", object("The latest indexed block.", obj{{"block_number", nonNegInt}})},
		solBalanceSchema(),
		{"Status", statusSchema()},
		tokenBalanceSchema(),
	}, exportSchemas()...)
}
