package http

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/chainquery/chainquery"
)

// logList is the Get Transaction Logs response: the transaction's hash,
// offset, limit, the page (never null) and count.
type logList struct {
	hash                 chainquery.Hash
	offset, limit, count int
	logs                 []*chainquery.Log
}

func (l *logList) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"transaction_hash":`...)
	dst = appendQuotedHex(dst, l.hash[:])
	return appendPage(append(dst, ','), l.offset, l.limit, l.count, l.logs, appendLog)
}

// logTopicFields are the names of topic1..topic4 with their separators.
var logTopicFields = [4]string{`,"topic1":`, `,"topic2":`, `,"topic3":`, `,"topic4":`}

// appendLog appends a Log as the interface shows it, fields in its order.
// Topics is never null, and topic1..topic4 are null past the last topic.
func appendLog(dst []byte, l *chainquery.Log) []byte {
	dst = appendTxHead(dst, l.BlockNumber, l.Timestamp, &l.TransactionHash, l.TransactionIndex)
	dst = append(dst, `,"transaction_from":`...)
	dst = appendQuotedHex(dst, l.TransactionFrom[:])
	dst = append(dst, `,"transaction_to":`...)
	dst = appendAddressOrNull(dst, l.TransactionTo)
	dst = append(dst, `,"log_index":`...)
	dst = appendInt(dst, l.LogIndex)
	dst = append(dst, `,"address":`...)
	dst = appendQuotedHex(dst, l.Address[:])
	dst = append(dst, `,"data":`...)
	dst = appendQuotedHex(dst, l.Data)
	dst = append(dst, `,"topics":[`...)
	for i := range l.Topics {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendQuotedHex(dst, l.Topics[i][:])
	}
	dst = append(dst, ']')
	for i, name := range logTopicFields {
		dst = append(dst, name...)
		if i < len(l.Topics) {
			dst = appendQuotedHex(dst, l.Topics[i][:])
		} else {
			dst = append(dst, "null"...)
		}
	}
	return append(dst, '}')
}

// handleTransactionLogs serves GET
// /api/v1/customer/{chain}/transactions/{transaction_hash}/logs.
func (s *Server) handleTransactionLogs(w http.ResponseWriter, r *http.Request) error {
	ref, err := transactionRef(r, chainquery.EndpointGetTransactionLogs)
	if err != nil {
		return err
	}
	f := chainquery.LogFilter{Chain: ref.Chain, TransactionHash: ref.TransactionHash, BlockNumber: ref.BlockNumber}
	q := r.URL.Query()
	if f.Page, err = parsePage(q); err != nil {
		return err
	}
	bound := s.deepBound(r.Context(), f.Chain)
	logs, count, err := s.store.FindTransactionLogs(r.Context(), f)
	if err != nil {
		return err
	}
	// The logs' block is known only from a log: an empty page is not cached.
	var deep deepAnswer
	if len(logs) > 0 {
		deep = bound.answer(logs[0].BlockNumber)
	}
	s.writeAnswer(w, r, &logList{hash: f.TransactionHash, offset: f.Offset, limit: f.Limit, count: count, logs: logs}, deep)
	return nil
}

// blockLogList is the Get Block Logs response: the block's number, offset,
// limit, the page (never null) and count.
type blockLogList struct {
	number               uint64
	offset, limit, count int
	logs                 []*chainquery.Log
}

func (l *blockLogList) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"block_number":`...)
	dst = strconv.AppendUint(dst, l.number, 10)
	return appendPage(append(dst, ','), l.offset, l.limit, l.count, l.logs, appendLog)
}

// handleBlockLogs serves GET /api/v1/customer/{chain}/blocks/logs.
func (s *Server) handleBlockLogs(w http.ResponseWriter, r *http.Request) error {
	chain, number, page, err := blockPage(r, chainquery.EndpointGetBlockLogs)
	if err != nil {
		return err
	}
	f := chainquery.BlockLogFilter{Chain: chain, BlockNumber: number, Page: page}
	bound := s.deepBound(r.Context(), chain)
	logs, count, err := s.store.FindBlockLogs(r.Context(), f)
	if err != nil {
		return err
	}
	s.writeAnswer(w, r, &blockLogList{number: number, offset: f.Offset, limit: f.Limit, count: count, logs: logs}, bound.answer(number))
	return nil
}

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

// handleFilterLogs serves POST /api/v1/customer/{chain}/logs/filter: the
// logs of a block range or a datetime range by emitting address and topics,
// in eth_getLogs' terms and Filter Traces' envelope.
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

// logSchema is the schema of a log, field for field as
// appendLog writes it.
func logSchema() kv {
	return kv{"Log", object("One event log.", obj{
		{"block_number", nonNegInt},
		{"timestamp", integer},
		{"datetime", datetimeShape},
		{"transaction_hash", hashSchema},
		{"transaction_index", nonNegInt},
		{"transaction_from", addressSchema},
		{"transaction_to", nullable("string", "null when the transaction created a contract.")},
		{"log_index", nonNegInt},
		{"address", addressSchema},
		{"data", hexSchema},
		{"topics", obj{{"type", "array"}, {"items", hashSchema}, {"maxItems", 4}}},
		{"topic1", nullable("string", "topics[0]; null when absent.")},
		{"topic2", nullable("string", "topics[1]; null when absent.")},
		{"topic3", nullable("string", "topics[2]; null when absent.")},
		{"topic4", nullable("string", "topics[3]; null when absent.")},
	})}
}
