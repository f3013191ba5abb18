package http

import (
	"net/http"

	"github.com/chainquery/chainquery"
)

// logList is the Get Transaction Logs response.
type logList struct {
	TransactionHash string    `json:"transaction_hash"`
	Offset          int       `json:"offset"`
	Limit           int       `json:"limit"`
	Result          []logJSON `json:"result"`
	Count           int       `json:"count"`
}

// logJSON is a Log as the interface shows it, fields in its order. Topics
// is never null, and topic1..topic4 are null past the last topic.
type logJSON struct {
	BlockNumber      uint64   `json:"block_number"`
	Timestamp        int64    `json:"timestamp"`
	Datetime         string   `json:"datetime"`
	TransactionHash  string   `json:"transaction_hash"`
	TransactionIndex int      `json:"transaction_index"`
	TransactionFrom  string   `json:"transaction_from"`
	TransactionTo    *string  `json:"transaction_to"`
	LogIndex         int      `json:"log_index"`
	Address          string   `json:"address"`
	Data             string   `json:"data"`
	Topics           []string `json:"topics"`
	Topic1           *string  `json:"topic1"`
	Topic2           *string  `json:"topic2"`
	Topic3           *string  `json:"topic3"`
	Topic4           *string  `json:"topic4"`
}

func newLogJSON(l *chainquery.Log) logJSON {
	out := logJSON{
		BlockNumber:      l.BlockNumber,
		Timestamp:        l.Timestamp,
		Datetime:         chainquery.FormatDatetime(l.Timestamp),
		TransactionHash:  l.TransactionHash.Hex(),
		TransactionIndex: l.TransactionIndex,
		TransactionFrom:  l.TransactionFrom.Hex(),
		TransactionTo:    addressPtr(l.TransactionTo),
		LogIndex:         l.LogIndex,
		Address:          l.Address.Hex(),
		Data:             chainquery.Hex(l.Data),
		Topics:           make([]string, len(l.Topics)),
	}
	for i, t := range l.Topics {
		out.Topics[i] = t.Hex()
	}
	for i, dst := range []**string{&out.Topic1, &out.Topic2, &out.Topic3, &out.Topic4} {
		if i < len(out.Topics) {
			*dst = &out.Topics[i]
		}
	}
	return out
}

// handleTransactionLogs serves GET
// /api/v1/customer/{chain}/transactions/{transaction_hash}/logs.
func (s *Server) handleTransactionLogs(w http.ResponseWriter, r *http.Request) error {
	chain, err := chainquery.ParseChain(chainquery.EndpointGetTransactionLogs, r.PathValue("chain"))
	if err != nil {
		return err
	}
	hash, err := chainquery.ParseHash("transaction_hash", r.PathValue("transaction_hash"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := chainquery.LogFilter{Chain: chain, TransactionHash: hash}
	if q.Has("block_number") {
		n, err := chainquery.ParseBlockNumber("block_number", q.Get("block_number"))
		if err != nil {
			return err
		}
		f.BlockNumber = &n
	}
	if f.Page, err = parsePage(q); err != nil {
		return err
	}
	logs, count, err := s.store.FindTransactionLogs(r.Context(), f)
	if err != nil {
		return err
	}
	out := logList{
		TransactionHash: hash.Hex(),
		Offset:          f.Offset,
		Limit:           f.Limit,
		Result:          make([]logJSON, len(logs)),
		Count:           count,
	}
	for i, l := range logs {
		out.Result[i] = newLogJSON(l)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
