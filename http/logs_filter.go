package http

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/chainquery/chainquery"
)

// Filter Logs: the logs of a block range or a datetime range by emitting
// address and topics, in eth_getLogs' terms and Filter Traces' envelope.

// logFilterFields are the fields of the Filter Logs body; error texts list
// them for a misspelled field.
var logFilterFields = []string{"from_block", "to_block", "from_datetime", "to_datetime", "address", "topic0", "topic1", "topic2", "topic3"}

// rangeLogList is the Filter Logs response: offset, limit, the page (never
// null) and count.
type rangeLogList struct {
	offset, limit, count int
	logs                 []*chainquery.Log
}

func (l *rangeLogList) appendJSON(dst []byte) []byte {
	return appendPage(append(dst, '{'), l.offset, l.limit, l.count, l.logs, appendLog)
}

// handleFilterLogs serves POST /api/v1/customer/{chain}/logs/filter.
func (s *Server) handleFilterLogs(w http.ResponseWriter, r *http.Request) error {
	chain, err := chainquery.ParseChain(chainquery.EndpointFilterLogs, r.PathValue("chain"))
	if err != nil {
		return err
	}
	page, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	f, err := parseLogFilterBody(w, r)
	if err != nil {
		return err
	}
	f.Chain, f.Page = chain, page
	if err := f.Validate(); err != nil {
		return err
	}
	bound := s.deepBound(r.Context(), chain)
	logs, count, err := s.store.FindLogs(r.Context(), f)
	if err != nil {
		return err
	}
	s.writeAnswer(w, r, &rangeLogList{offset: page.Offset, limit: page.Limit, count: count, logs: logs},
		s.rangeDeepness(r.Context(), chain, bound, f.ToBlock, f.ToTime))
	return nil
}

// rangeDeepness says whether the answer about a block range ending at
// toBlock, or a datetime range ending at toTime, is deep: every block of
// the range is at or below the deep bound.
func (s *Server) rangeDeepness(ctx context.Context, chain chainquery.Chain, bound deepBound, toBlock *uint64, toTime *time.Time) deepAnswer {
	if toBlock != nil {
		return bound.answer(*toBlock)
	} else if toTime != nil && s.coversTime(ctx, chain, bound, *toTime) {
		return bound.answer(bound.block) // every block of the range is at or below it
	}
	return deepAnswer{}
}

// parseLogFilterBody reads the Filter Logs body, each field on its own from
// its exact name, as parseTraceFilterBody does.
func parseLogFilterBody(w http.ResponseWriter, r *http.Request) (chainquery.LogRangeFilter, error) {
	get, err := readBodyFields(w, r, logFilterFields)
	if err != nil {
		return chainquery.LogRangeFilter{}, err
	}
	return logFilterOf(get)
}

// logFilterOf reads the Filter Logs fields of a body (readBodyFields).
func logFilterOf(get func(string) (json.RawMessage, bool)) (f chainquery.LogRangeFilter, err error) {
	if f.FromBlock, f.ToBlock, f.FromTime, f.ToTime, err = bodyRange(get); err != nil {
		return f, err
	}
	if v, ok := get("address"); ok {
		if f.Addresses, err = parseBodyAddresses("address", v); err != nil {
			return f, err
		}
	}
	for i := range f.Topics {
		name := fmt.Sprintf("topic%d", i)
		if v, ok := get(name); ok {
			if f.Topics[i], err = parseBodyTopics(name, v); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// parseBodyTopics decodes a topic field: one 32-byte hex word, or an array
// of 1 to MaxFilterAddresses of them, any of which matches. Case is
// ignored and duplicates are dropped.
func parseBodyTopics(name string, v json.RawMessage) ([]chainquery.Hash, error) {
	var list []string
	if err := json.Unmarshal(v, &list); err != nil {
		var one string
		if err := json.Unmarshal(v, &one); err != nil {
			return nil, chainquery.Errorf(chainquery.EINVALID, "%s must be a 32-byte hex string or an array of at most %d of them", name, chainquery.MaxFilterAddresses)
		}
		list = []string{one}
	} else if len(list) == 0 {
		return nil, chainquery.Errorf(chainquery.EINVALID, "%s must not be an empty array: give at least one value or leave the field out", name)
	} else if len(list) > chainquery.MaxFilterAddresses {
		return nil, chainquery.Errorf(chainquery.EINVALID, "%s must have at most %d values", name, chainquery.MaxFilterAddresses)
	}
	var out []chainquery.Hash
	for i, s := range list {
		param := name
		if len(list) > 1 || v[0] == '[' {
			param = fmt.Sprintf("%s[%d]", name, i)
		}
		h, err := chainquery.ParseHash(param, s)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out, nil
}
