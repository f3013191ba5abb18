package http_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery/internal/storetest"
)

// Request bodies generated from the document's schemas, for
// TestOpenAPI_GeneratedRequests.

// fixtureBody are JSON values of body properties that name something in the
// fixture; the first of each is the one every body uses unless it varies
// that property.
var fixtureBody = map[string][]string{
	"from_block":    {fmt.Sprint(storetest.PolygonBlock)},
	"to_block":      {fmt.Sprint(storetest.PolygonLaterBlock)},
	"from_datetime": {`"2025-03-01T00:00:00Z"`},
	"to_datetime":   {`"2025-03-01T00:00:04Z"`},
	"from_address":  {`"` + storetest.EOA1.Hex() + `"`},
	"to_address":    {`"` + upper(storetest.Router) + `"`},
	// Filter Logs: the fixture block's logs are Token's; log i's topic j
	// is H(TagTopic, 10i+j).
	"address": {`"` + upper(storetest.Token) + `"`},
	"topic0":  {`"` + storetest.H(storetest.TagTopic, 40).Hex() + `"`},
	"topic1":  {`"0x` + strings.ToUpper(storetest.H(storetest.TagTopic, 41).Hex()[2:]) + `"`},
	"topic2":  {`"` + storetest.H(storetest.TagTopic, 42).Hex() + `"`},
	"topic3":  {`"` + storetest.H(storetest.TagTopic, 43).Hex() + `"`},
}

// bodiesBreakingRules are Filter Traces bodies that break a rule the
// document gives in words; that at rangeOver100 does not break an export's.
var bodiesBreakingRules = []string{
	fmt.Sprintf(`{"from_block": %d, "to_block": %d}`, storetest.PolygonBlock, storetest.PolygonBlock-1),
	fmt.Sprintf(`{"from_block": %d, "to_block": %d}`, storetest.PolygonBlock, storetest.PolygonBlock+100),
	`{"from_datetime": "2025-03-01T00:00:04Z", "to_datetime": "2025-03-01T00:00:00Z"}`,
	`{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:30:00+01:00"}`,
	// Whole numbers in range, but not written as decimal digits.
	fmt.Sprintf(`{"from_block": %d.0, "to_block": %d}`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
	fmt.Sprintf(`{"from_block": %d, "to_block": 6.8000002e7}`, storetest.PolygonBlock),
	`{"from_block": -0, "to_block": 0}`,
	`{"from_block": 9223372036854775807, "to_block": 9223372036854775806}`,
}

const rangeOver100 = 1

// Block numbers at and past the largest the service takes, 2^63-1.
const (
	maxBlock      = "9223372036854775807"
	pastMaxBlock  = "9223372036854775808"
	pastMaxUint64 = "18446744073709551616"
)

// bodiesServed are valid bodies at the edges of the rules in words, at the
// bounds of block numbers, and with null members, which count as absent.
// They are named here rather than generated from the schema, so that a
// document that loses a bound or a form of null is caught.
var bodiesServed = []string{
	fmt.Sprintf(`{"from_block": %d, "to_block": %d}`, storetest.PolygonBlock, storetest.PolygonBlock),
	fmt.Sprintf(`{"from_block": %d, "to_block": %d}`, storetest.PolygonBlock, storetest.PolygonBlock+99),
	`{"from_datetime": "2025-03-01T01:00:00.5+01:00", "to_datetime": "2025-03-01T00:00:04.123456789Z"}`,
	`{"from_block": 0, "to_block": 0}`,
	`{"from_block": 0, "to_block": 99}`,
	`{"from_block": ` + maxBlock + `, "to_block": ` + maxBlock + `}`,
	`{"from_block": 9223372036854775708, "to_block": ` + maxBlock + `}`,
	fmt.Sprintf(`{"from_block": %d, "to_block": %d, "from_datetime": null, "to_datetime": null}`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
	fmt.Sprintf(`{"from_datetime": null, "from_block": %d, "to_block": %d}`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
	`{"from_block": null, "to_block": null, "from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04Z"}`,
	`{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04Z", "to_block": null}`,
	fmt.Sprintf(`{"from_block": %d, "to_block": %d, "from_address": null, "to_address": null}`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
	fmt.Sprintf(`{"from_block": %d, "to_block": %d, "address": null, "topic0": null, "topic1": null, "topic2": null, "topic3": null}`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
	fmt.Sprintf(`{"from_block": %d, "to_block": %d, "cursor": null}`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
}

// bodiesBreakingSchema are bodies the document must reject: the halves of
// a range, given alone or beside a null other half, mixes of the two
// ranges, and block numbers past the largest. They are named here for the
// same reason as bodiesServed; the third-party tester found the first ones.
var bodiesBreakingSchema = []string{
	`{"from_block": 0, "to_block": null}`,
	`{"from_block": null, "to_block": 0}`,
	`{"from_block": null, "to_block": null}`,
	`{"from_datetime": "2025-03-01T00:00:00Z", "to_datetime": null}`,
	`{"from_datetime": null, "to_datetime": "2025-03-01T00:00:04Z"}`,
	`{"from_block": null, "to_block": null, "from_datetime": null, "to_datetime": null}`,
	`{"from_block": 0, "to_block": null, "from_datetime": "2025-03-01T00:00:00Z", "to_datetime": null}`,
	fmt.Sprintf(`{"from_block": %d, "to_block": %d, "from_datetime": "2025-03-01T00:00:00Z"}`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
	fmt.Sprintf(`{"from_block": %d, "to_block": %d, "to_datetime": null, "from_datetime": "2025-03-01T00:00:00Z"}`, storetest.PolygonBlock, storetest.PolygonLaterBlock),
	fmt.Sprintf(`{"from_block": %d, "from_datetime": "2025-03-01T00:00:00Z", "to_datetime": "2025-03-01T00:00:04Z"}`, storetest.PolygonBlock),
	fmt.Sprintf(`{"from_block": %d, "to_datetime": "2025-03-01T00:00:04Z"}`, storetest.PolygonBlock),
	fmt.Sprintf(`{"to_block": %d, "from_datetime": "2025-03-01T00:00:00Z"}`, storetest.PolygonLaterBlock),
	`{"from_block": ` + pastMaxBlock + `, "to_block": ` + pastMaxBlock + `}`,
	`{"from_block": ` + maxBlock + `, "to_block": ` + pastMaxBlock + `}`,
	fmt.Sprintf(`{"from_block": %d, "to_block": %s}`, storetest.PolygonBlock, pastMaxUint64),
	`{"from_block": 99999999999999999999999, "to_block": 99999999999999999999999}`,
}

// onlyProperties reports whether every member of the JSON object body is
// one of props: the named bodies are Filter Traces', and those naming its
// address fields are no bodies of another schema.
func onlyProperties(body string, props map[string]any) bool {
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return true // a malformed body is one for every schema
	}
	for k := range m {
		if _, ok := props[k]; !ok {
			return false
		}
	}
	return true
}

// genBody is one generated request body.
type genBody struct {
	text string
	kind genKind
}

// generateBodies returns request bodies for an object schema whose oneOf
// branches each require a set of properties (the TraceFilter shape): the
// first body is valid and is the one requests use unless they vary the
// body.
func generateBodies(doc, schema map[string]any) []genBody {
	props, _ := schema["properties"].(map[string]any)
	var names []string
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	var branches [][]string
	for _, b := range asList(schema["oneOf"]) {
		var req []string
		for _, r := range asList(schemaOf(doc, b)["required"]) {
			req = append(req, r.(string))
		}
		branches = append(branches, req)
	}
	if len(branches) == 0 {
		branches = [][]string{nil}
	}
	for _, r := range asList(schema["required"]) {
		for i := range branches {
			branches[i] = append(branches[i], r.(string))
		}
	}
	required := map[string]bool{}
	for _, b := range branches {
		for _, r := range b {
			required[r] = true
		}
	}
	first := func(n string) string {
		if v := fixtureBody[n]; len(v) > 0 {
			return v[0]
		}
		return validJSON(doc, schemaOf(doc, props[n]), n)[0]
	}
	// object writes members in the order given; a nil value leaves one out.
	type member struct{ k, v string }
	object := func(ms []member) string {
		var parts []string
		for _, m := range ms {
			parts = append(parts, strconv.Quote(m.k)+": "+m.v)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	branchBody := func(b []string) []member {
		var ms []member
		for _, n := range b {
			ms = append(ms, member{n, first(n)})
		}
		return ms
	}
	with := func(ms []member, k, v string) []member {
		out := slices.Clone(ms)
		for i := range out {
			if out[i].k == k {
				out[i].v = v
				return out
			}
		}
		return append(out, member{k, v})
	}
	without := func(ms []member, k string) []member {
		return slices.DeleteFunc(slices.Clone(ms), func(m member) bool { return m.k == k })
	}

	base := branchBody(branches[0])
	// baseOf is the body that a value of property n replaces or joins: one
	// of the branch that requires n, so that only n's value is wrong.
	baseOf := func(n string) []member {
		for _, b := range branches {
			if slices.Contains(b, n) {
				return branchBody(b)
			}
		}
		return base
	}
	out := []genBody{{object(base), genServed}}
	for _, b := range branches[1:] {
		out = append(out, genBody{object(branchBody(b)), genServed})
	}
	for _, b := range bodiesServed {
		if onlyProperties(b, props) {
			out = append(out, genBody{b, genServed})
		}
	}
	for _, n := range names {
		s := schemaOf(doc, props[n])
		if !required[n] {
			for _, v := range validJSON(doc, s, n) {
				kind := genServed
				if n == "cursor" && v != "null" {
					kind = genRule // an export's cursor belongs to the body it was given for, not to any
				}
				out = append(out, genBody{object(with(base, n, v)), kind})
			}
		}
		for _, v := range invalidJSON(doc, s, n) {
			out = append(out, genBody{object(with(baseOf(n), n, v)), genSchema})
		}
	}
	// Every body refuses unknown members: generated whatever the schema
	// says, so that a schema that stops saying so fails the test.
	out = append(out, genBody{object(with(base, "fromBlock", "1")), genSchema})
	// The branches are exclusive forms, and a null member counts as absent
	// (the service reads it so): a branch's body breaks the document when
	// one of its members is left out or null, or a member of another
	// branch joins it, and not when that member is null.
	nullable := func(n string) bool {
		_, ok := schemaType(schemaOf(doc, props[n]))
		return ok
	}
	var all, allNull []member
	for i, b := range branches {
		for _, n := range b {
			out = append(out, genBody{object(without(branchBody(b), n)), genSchema})
			if nullable(n) {
				out = append(out, genBody{object(with(branchBody(b), n, "null")), genSchema})
				allNull = append(allNull, member{n, "null"})
			}
		}
		othersNull := branchBody(b)
		for j, other := range branches {
			for _, n := range other {
				if j == i || slices.Contains(b, n) {
					continue
				}
				out = append(out, genBody{object(with(branchBody(b), n, first(n))), genSchema})
				if nullable(n) {
					out = append(out, genBody{object(with(branchBody(b), n, "null")), genServed})
					othersNull = with(othersNull, n, "null")
				}
			}
		}
		out = append(out, genBody{object(othersNull), genServed})
		// Every integer member of the branch at a bound of its schema: the
		// same value at both ends of a range meets the rules in words.
		for _, kw := range []string{"minimum", "maximum"} {
			ms := branchBody(b)
			for _, n := range b {
				ps := schemaOf(doc, props[n])
				if typ, _ := schemaType(ps); typ == "integer" {
					if v, ok := bound(ps, kw); ok {
						ms = with(ms, n, v.String())
					}
				}
			}
			out = append(out, genBody{object(ms), genServed})
		}
		all = append(all, branchBody(b)...)
	}
	if len(branches) > 1 {
		out = append(out, genBody{object(all), genSchema})
	}
	if len(allNull) > 0 {
		out = append(out, genBody{object(allNull), genSchema})
	}
	for _, b := range bodiesBreakingSchema {
		out = append(out, genBody{b, genSchema})
	}
	for _, b := range []string{`{}`, `[]`, `null`, `"x"`, `5`, ``, object(base)[:len(object(base))-1], object(base) + `{}`} {
		out = append(out, genBody{b, genSchema})
	}
	_, export := props["cursor"] // an export reads a range of any length
	for i, b := range bodiesBreakingRules {
		kind := genRule
		if export && i == rangeOver100 {
			kind = genServed
		}
		out = append(out, genBody{b, kind})
	}
	if export {
		out = append(out, genBody{`{"from_block": 0, "to_block": ` + maxBlock + `}`, genServed})
	}
	// Bodies generated twice (a bound that is also the fixture's value...)
	// go once; the first kind given wins.
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(b genBody) bool {
		dup := seen[b.text]
		seen[b.text] = true
		return dup
	})
}

// validJSON returns valid JSON values of a property: the fixture's, then
// values of each alternative of a oneOf, and arrays of the fewest and most
// items allowed.
func validJSON(doc, schema map[string]any, name string) []string {
	out := slices.Clone(fixtureBody[name])
	add := func(v string) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, alt := range asList(schema["oneOf"]) {
		for _, v := range validJSON(doc, schemaOf(doc, alt), name) {
			add(v)
		}
	}
	typ, nullable := schemaType(schema)
	if nullable {
		add("null")
	}
	switch typ {
	case "array":
		item := "null"
		if len(out) > 0 {
			item = out[0]
		}
		for _, b := range []string{"minItems", "maxItems"} {
			if n, ok := bound(schema, b); ok {
				add(jsonArray(item, int(n.Int64())))
			}
		}
	case "integer":
		for _, b := range []string{"minimum", "maximum"} {
			if n, ok := bound(schema, b); ok {
				add(n.String())
			}
		}
	}
	return out
}

// invalidJSON returns JSON values that a property's schema rejects: wrong
// types, values past its bounds, strings breaking its pattern, and arrays
// with too few, too many or wrong items.
func invalidJSON(doc, schema map[string]any, name string) []string {
	var out []string
	add := func(v string) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if alts := asList(schema["oneOf"]); len(alts) > 0 {
		cands := []string{"null", "{}"}
		for _, alt := range alts {
			cands = append(cands, invalidJSON(doc, schemaOf(doc, alt), name)...)
		}
		for _, v := range cands {
			if !jsonFitsAny(v, alts, doc) {
				add(v)
			}
		}
		return out
	}
	typ, nullable := schemaType(schema)
	if !nullable {
		add("null")
	}
	switch typ {
	case "integer":
		add(`"1"`)
		add("1.5")
		if n, ok := bound(schema, "minimum"); ok {
			add(new(big.Int).Sub(n, big.NewInt(1)).String())
		}
		if n, ok := bound(schema, "maximum"); ok {
			past := new(big.Int).Add(n, big.NewInt(1))
			add(past.String())
			add(new(big.Int).Lsh(past, 1).String()) // 2^64 past 2^63-1: beyond uint64 too
		}
	case "string":
		add("5")
		add("true")
		var valid string // a valid string to mutate
		for _, v := range fixtureBody[name] {
			if u, err := strconv.Unquote(v); err == nil && stringValid(schema, u) {
				valid = u
			}
		}
		for _, v := range invalidStrings("", schema, valid) {
			add(strconv.Quote(v))
		}
		if schema["format"] == "date-time" {
			// Shapes that are no date-time, then date-times of the right
			// shape that no calendar has. The service refuses all of them,
			// so they are generated whatever the schema says: a document
			// whose pattern stops stating the calendar fails the test.
			for _, v := range []string{"2025-03-01T00:00:00", "2025-03-01", "2025-03-01 00:00:00Z", "yesterday",
				"0000-00-00T00:00:00Z", "2025-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2025-04-31T00:00:00Z", "2025-13-01T00:00:00Z",
				"2025-03-01T24:00:00Z", "2025-03-01T00:60:00Z", "2025-03-01T00:00:60Z", "2025-03-01T00:00:00+24:00", "2025-03-01T00:00:00-23:60"} {
				add(strconv.Quote(v))
			}
		}
	case "array":
		item := schemaOf(doc, schema["items"])
		good := "null"
		if v := validJSON(doc, item, name); len(v) > 0 {
			good = v[0]
		}
		if n, ok := bound(schema, "minItems"); ok && n.Int64() > 0 {
			add(jsonArray(good, int(n.Int64())-1))
		}
		if n, ok := bound(schema, "maxItems"); ok {
			add(jsonArray(good, int(n.Int64())+1))
		}
		for _, v := range invalidJSON(doc, item, name) {
			add("[" + v + "]")
		}
	}
	return out
}

// jsonFitsAny reports, roughly, whether a generated JSON value could be
// valid for one of the alternatives: a string for a string schema, an array
// for an array schema. Values of a type no alternative has never fit; the
// document's validator decides the rest (TestOpenAPI_GeneratedRequests
// checks that it rejects every value generated as invalid).
func jsonFitsAny(v string, alts []any, doc map[string]any) bool {
	kind := "number"
	switch {
	case strings.HasPrefix(v, `"`):
		kind = "string"
	case strings.HasPrefix(v, "["):
		kind = "array"
	case v == "null":
		kind = "null"
	case v == "true" || v == "false":
		kind = "boolean"
	case strings.HasPrefix(v, "{"):
		kind = "object"
	}
	for _, a := range alts {
		s := schemaOf(doc, a)
		typ, nullable := schemaType(s)
		switch {
		case kind == "null" && nullable:
			return true
		case typ != kind:
		case kind == "string":
			if str, err := strconv.Unquote(v); err == nil && stringValid(s, str) {
				return true
			}
		case kind == "array":
			// Generated invalid for the one array alternative.
		default:
			return true
		}
	}
	return false
}

// jsonArray returns a JSON array of n copies of item.
func jsonArray(item string, n int) string {
	return "[" + strings.Join(slices.Repeat([]string{item}, n), ", ") + "]"
}
