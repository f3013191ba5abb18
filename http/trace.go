package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
)

// MaxBodyBytes is the largest request body the API reads (64 KiB); a larger
// one is answered with 413 before it is parsed.
const MaxBodyBytes = 64 << 10

// traceFilterFields are the fields of the Filter Traces body, in the order
// the interface lists them; error texts list them for a misspelled field.
var traceFilterFields = []string{"from_block", "to_block", "from_datetime", "to_datetime", "from_address", "to_address"}

// traceList is the Filter Traces response: offset, limit, the page (never
// null) and count.
type traceList struct {
	offset, limit, count int
	traces               []*chainquery.Trace
}

func (l *traceList) appendJSON(dst []byte) []byte {
	return appendPage(append(dst, '{'), l.offset, l.limit, l.count, l.traces, appendTrace)
}

// appendTrace appends a Trace as the interface shows it, fields in its
// order; error is null when the call succeeded.
func appendTrace(dst []byte, t *chainquery.Trace) []byte {
	dst = appendTxHead(dst, t.BlockNumber, t.Timestamp, &t.TransactionHash, t.TransactionIndex)
	dst = append(dst, `,"trace_address":"`...)
	for i, n := range t.TraceAddress { // chainquery.FormatTraceAddress: digits, '-' and '.'
		if i > 0 {
			dst = append(dst, '.')
		}
		dst = appendInt(dst, n)
	}
	dst = append(dst, `","transaction_from":`...)
	dst = appendQuotedHex(dst, t.TransactionFrom[:])
	dst = append(dst, `,"transaction_to":`...)
	dst = appendAddressOrNull(dst, t.TransactionTo)
	dst = append(dst, `,"transaction_status":`...)
	dst = appendBool(dst, t.TransactionStatus)
	dst = append(dst, `,"call_type":`...)
	dst = appendString(dst, t.CallType)
	dst = append(dst, `,"from_address":`...)
	dst = appendQuotedHex(dst, t.From[:])
	dst = append(dst, `,"to_address":`...)
	dst = appendAddressOrNull(dst, t.To)
	dst = append(dst, `,"gas":`...)
	dst = strconv.AppendUint(dst, t.Gas, 10)
	dst = append(dst, `,"gas_used":`...)
	dst = strconv.AppendUint(dst, t.GasUsed, 10)
	dst = append(dst, `,"gas_refund":`...)
	dst = strconv.AppendUint(dst, t.GasRefund(), 10)
	dst = append(dst, `,"value":`...)
	dst = appendBigString(dst, t.Value)
	dst = append(dst, `,"subtraces":`...)
	dst = appendInt(dst, t.Subtraces)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, t.Type)
	dst = append(dst, `,"input":`...)
	dst = appendQuotedHex(dst, t.Input)
	dst = append(dst, `,"output":`...)
	dst = appendQuotedHex(dst, t.Output)
	dst = append(dst, `,"error":`...)
	if t.Error == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, t.Error)
	}
	dst = append(dst, `,"function_signature":`...)
	dst = appendQuotedHex(dst, chainquery.FunctionSignature(t.Input))
	dst = append(dst, `,"version":`...)
	dst = appendInt(dst, t.Version)
	return append(dst, '}')
}

// handleFilterTraces serves POST /api/v1/customer/{chain}/traces/filter.
func (s *Server) handleFilterTraces(w http.ResponseWriter, r *http.Request) error {
	chain, err := s.tracedChain(r.Context(), chainquery.EndpointFilterTraces, r.PathValue("chain"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	page, err := parsePage(q)
	if err != nil {
		return err
	}
	f, err := parseTraceFilterBody(w, r)
	if err != nil {
		return err
	}
	f.Chain, f.Page, f.MinTime = chain, page, s.historyStart[chain]
	if err := f.Validate(); err != nil {
		return err
	}
	bound := s.deepBound(r.Context(), chain)
	traces, count, err := s.store.FindTraces(r.Context(), f)
	if err != nil {
		return err
	}
	s.writeAnswer(w, r, &traceList{offset: page.Offset, limit: page.Limit, count: count, traces: traces},
		s.rangeDeepness(r.Context(), chain, bound, f.ToBlock, f.ToTime))
	return nil
}

// parseTraceFilterBody reads the Filter Traces body into a filter. Each
// field is decoded on its own, from an exact (case-sensitive) name, so that
// every error names the field and a misspelled field is an error rather than
// silently widening the query. The ranges are checked by Validate later.
func parseTraceFilterBody(w http.ResponseWriter, r *http.Request) (chainquery.TraceFilter, error) {
	get, err := readBodyFields(w, r, traceFilterFields)
	if err != nil {
		return chainquery.TraceFilter{}, err
	}
	return traceFilterOf(get)
}

// traceFilterOf reads the Filter Traces fields of a body (readBodyFields).
func traceFilterOf(get func(string) (json.RawMessage, bool)) (f chainquery.TraceFilter, err error) {
	if f.FromBlock, f.ToBlock, f.FromTime, f.ToTime, err = bodyRange(get); err != nil {
		return f, err
	}
	if v, ok := get("from_address"); ok {
		if f.FromAddresses, err = parseBodyAddresses("from_address", v); err != nil {
			return f, err
		}
	}
	if v, ok := get("to_address"); ok {
		if f.ToAddresses, err = parseBodyAddresses("to_address", v); err != nil {
			return f, err
		}
	}
	return f, nil
}

// readBodyFields reads a request body that must be a JSON object of the
// given fields, and returns the getter of its members: a member given as
// JSON null counts as absent, as it does for optional fields in most
// clients' serializers.
func readBodyFields(w http.ResponseWriter, r *http.Request, allowed []string) (func(name string) (json.RawMessage, bool), error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, chainquery.Errorf(chainquery.ETOOLARGE, "request body must not exceed %d bytes", MaxBodyBytes)
	} else if err != nil {
		return nil, chainquery.Errorf(chainquery.EINVALID, "request body could not be read")
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, chainquery.Errorf(chainquery.EINVALID, "request body is required: a JSON object with from_block and to_block, or from_datetime and to_datetime")
	}
	if !json.Valid(body) {
		return nil, errMalformedBody(body)
	}
	if body[0] != '{' {
		return nil, chainquery.Errorf(chainquery.EINVALID, "request body must be a JSON object")
	}
	fields, err := objectFields(body, allowed)
	if chainquery.ErrorCode(err) == chainquery.EINVALID {
		return nil, err
	} else if err != nil {
		return nil, errMalformedBody(body) // unreachable: the body is valid JSON
	}
	return func(name string) (json.RawMessage, bool) {
		v, ok := fields[name]
		if !ok || string(v) == "null" {
			return nil, false
		}
		return v, true
	}, nil
}

// bodyRange reads the range members of a filter body: from_block and
// to_block, from_datetime and to_datetime (checked later by Validate).
func bodyRange(get func(string) (json.RawMessage, bool)) (fromBlock, toBlock *uint64, fromTime, toTime *time.Time, err error) {
	block := func(name string) (*uint64, error) {
		v, ok := get(name)
		if !ok {
			return nil, nil
		}
		n, err := chainquery.ParseBlockNumber(name, string(v))
		return &n, err
	}
	datetime := func(name string) (*time.Time, error) {
		v, ok := get(name)
		if !ok {
			return nil, nil
		}
		t, err := parseBodyDatetime(name, v)
		return &t, err
	}
	if fromBlock, err = block("from_block"); err != nil {
		return
	}
	if toBlock, err = block("to_block"); err != nil {
		return
	}
	if fromTime, err = datetime("from_datetime"); err != nil {
		return
	}
	toTime, err = datetime("to_datetime")
	return
}

// objectFields returns the members of a valid JSON object by name, and
// EINVALID naming the first member, in body order, that is not one of the
// allowed fields: the first misspelling a client wrote is the one to report.
func objectFields(body []byte, allowed []string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string) // object keys are always strings
		if !slices.Contains(allowed, name) {
			return nil, chainquery.Errorf(chainquery.EINVALID, "unknown field %q in request body; allowed fields: %s", name, strings.Join(allowed, ", "))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields[name] = v // a repeated name keeps its last value, as encoding/json does
	}
	return fields, nil
}

// errMalformedBody reports where the body stops being JSON. The position is
// of the client's own bytes, so it reveals nothing of the server.
func errMalformedBody(body []byte) error {
	var syntax *json.SyntaxError
	if err := json.Unmarshal(body, new(any)); errors.As(err, &syntax) {
		return chainquery.Errorf(chainquery.EINVALID, "request body is not valid JSON (error at byte %d)", syntax.Offset)
	}
	return chainquery.Errorf(chainquery.EINVALID, "request body is not valid JSON")
}

// parseBodyDatetime decodes a JSON string holding an RFC 3339 date-time with
// a zone.
func parseBodyDatetime(name string, v json.RawMessage) (time.Time, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return time.Time{}, chainquery.Errorf(chainquery.EINVALID, "%s must be a string holding an ISO 8601 date-time with a timezone, e.g. 2025-01-01T00:00:00Z", name)
	}
	return chainquery.ParseDatetime(name, s)
}

// parseBodyAddresses decodes an address field: one address string, or an
// array of 1 to MaxFilterAddresses of them. Case is ignored and duplicates
// are dropped; the order of first appearance is kept.
func parseBodyAddresses(name string, v json.RawMessage) ([]chainquery.Address, error) {
	var list []string
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, errAddressType(name)
		}
		a, err := chainquery.ParseAddress(name, s)
		if err != nil {
			return nil, err
		}
		return []chainquery.Address{a}, nil
	case '[':
		if err := json.Unmarshal(v, &list); err != nil {
			return nil, errAddressType(name)
		}
	default:
		return nil, errAddressType(name)
	}
	switch {
	case len(list) == 0:
		return nil, chainquery.Errorf(chainquery.EINVALID, "%s must not be an empty array: give at least one address or leave the field out", name)
	case len(list) > chainquery.MaxFilterAddresses:
		return nil, chainquery.Errorf(chainquery.EINVALID, "%s must have at most %d addresses", name, chainquery.MaxFilterAddresses)
	}
	out := make([]chainquery.Address, 0, len(list))
	seen := make(map[chainquery.Address]bool, len(list))
	for i, s := range list {
		a, err := chainquery.ParseAddress(fmt.Sprintf("%s[%d]", name, i), s)
		if err != nil {
			return nil, err
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

func errAddressType(name string) error {
	return chainquery.Errorf(chainquery.EINVALID, "%s must be an address string or an array of at most %d address strings", name, chainquery.MaxFilterAddresses)
}

// traceSchema is the schema of a trace, field for field as
// appendTrace writes it.
func traceSchema() kv {
	return kv{"Trace", object("One call frame of a transaction's execution.", obj{
		{"block_number", nonNegInt},
		{"timestamp", integer},
		{"datetime", datetimeShape},
		{"transaction_hash", hashSchema},
		{"transaction_index", nonNegInt},
		{"trace_address", obj{{"type", "string"}, {"pattern", `^([0-9]+(\.[0-9]+)*)?$`}, {"description", "Dot-separated position in the call tree; empty for the top-level call."}}},
		{"transaction_from", addressSchema},
		{"transaction_to", nullable("string", "Recipient of the transaction; null when it created a contract.")},
		{"transaction_status", boolean},
		{"call_type", obj{{"type", "string"}, {"enum", []string{"call", "delegatecall", "staticcall", "create"}}}},
		{"from_address", addressSchema},
		{"to_address", nullable("string", "Recipient of this call; for a create the new contract (null when creation failed).")},
		{"gas", nonNegInt},
		{"gas_used", nonNegInt},
		{"gas_refund", obj{{"type", "integer"}, {"minimum", 0}, {"description", "gas - gas_used."}}},
		{"value", weiString},
		{"subtraces", nonNegInt},
		{"type", obj{{"type", "string"}, {"enum", []string{"call", "create", "suicide"}}}},
		{"input", hexSchema},
		{"output", hexSchema},
		{"error", nullable("string", "The node's error text when the call failed; null otherwise.")},
		{"function_signature", obj{{"type", "string"}, {"pattern", "^0x([a-f0-9]{2}){0,4}$"}, {"description", "First 4 bytes of input; 0x when input is empty."}}},
		{"version", nonNegInt},
	})}
}
