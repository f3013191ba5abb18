package http

import (
	"net/http"

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
