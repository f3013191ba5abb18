package http

import (
	"net/http"

	"github.com/chainquery/chainquery"
)

// transactionAnswer is the Get Transaction response: the transaction
// object of Get Block's full_transactions.
type transactionAnswer struct{ t *chainquery.Transaction }

func (a transactionAnswer) appendJSON(dst []byte) []byte { return appendTransaction(dst, a.t) }

// receiptAnswer is the Get Transaction Receipt response: a receipt of Get
// Block Receipts.
type receiptAnswer struct{ r *chainquery.Receipt }

func (a receiptAnswer) appendJSON(dst []byte) []byte { return appendReceipt(dst, a.r) }

// txTraceList is the Get Transaction Traces response: the transaction's
// hash, offset, limit, the page of traces (never null) and count.
type txTraceList struct {
	hash                 chainquery.Hash
	offset, limit, count int
	traces               []*chainquery.Trace
}

func (l *txTraceList) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"transaction_hash":`...)
	dst = appendQuotedHex(dst, l.hash[:])
	return appendPage(append(dst, ','), l.offset, l.limit, l.count, l.traces, appendTrace)
}

// transactionRef reads what names a transaction in a request: the chain
// (as endpoint serves it) and the transaction_hash of the path, and the
// optional block_number query parameter. The endpoints of one transaction by
// its hash read it: those of this file (Get Transaction, Get Transaction
// Receipt, Get Transaction Traces), which follow Get Block in its
// conventions, and Get Transaction Logs (log.go).
func transactionRef(r *http.Request, endpoint chainquery.Endpoint) (chainquery.TransactionFilter, error) {
	var f chainquery.TransactionFilter
	var err error
	if f.Chain, err = chainquery.ParseChain(endpoint, r.PathValue("chain")); err != nil {
		return f, err
	}
	if f.TransactionHash, err = chainquery.ParseHash("transaction_hash", r.PathValue("transaction_hash")); err != nil {
		return f, err
	}
	if q := r.URL.Query(); q.Has("block_number") {
		n, err := chainquery.ParseBlockNumber("block_number", q.Get("block_number"))
		if err != nil {
			return f, err
		}
		f.BlockNumber = &n
	}
	return f, nil
}

// handleTransaction serves GET /api/v1/customer/{chain}/transactions/{transaction_hash}.
func (s *Server) handleTransaction(w http.ResponseWriter, r *http.Request) error {
	return s.serveTransaction(w, r, chainquery.EndpointGetTransaction, func(t *chainquery.Transaction) jsonAppender {
		return transactionAnswer{t}
	})
}

// handleTransactionReceipt serves GET
// /api/v1/customer/{chain}/transactions/{transaction_hash}/receipt.
func (s *Server) handleTransactionReceipt(w http.ResponseWriter, r *http.Request) error {
	return s.serveTransaction(w, r, chainquery.EndpointGetTransactionReceipt, func(t *chainquery.Transaction) jsonAppender {
		return receiptAnswer{t.Receipt()}
	})
}

// serveTransaction finds the request's transaction and writes what
// render makes of it, kept as deep as its block is.
func (s *Server) serveTransaction(w http.ResponseWriter, r *http.Request, endpoint chainquery.Endpoint, render func(*chainquery.Transaction) jsonAppender) error {
	f, err := transactionRef(r, endpoint)
	if err != nil {
		return err
	}
	bound := s.deepBound(r.Context(), f.Chain)
	t, err := s.store.FindTransaction(r.Context(), f)
	if err != nil {
		return err
	}
	s.writeAnswer(w, r, render(t), bound.answer(t.BlockNumber))
	return nil
}

// handleTransactionTraces serves GET
// /api/v1/customer/{chain}/transactions/{transaction_hash}/traces.
func (s *Server) handleTransactionTraces(w http.ResponseWriter, r *http.Request) error {
	f, err := transactionRef(r, chainquery.EndpointGetTransactionTraces)
	if err != nil {
		return err
	}
	if f.Page, err = parsePage(r.URL.Query()); err != nil {
		return err
	}
	f.MinTime = s.historyStart[f.Chain]
	bound := s.deepBound(r.Context(), f.Chain)
	traces, count, err := s.store.FindTransactionTraces(r.Context(), f)
	if err != nil {
		return err
	}
	// The traces' block is known only from a trace: an empty page is not
	// cached.
	var deep deepAnswer
	if len(traces) > 0 {
		deep = bound.answer(traces[0].BlockNumber)
	}
	s.writeAnswer(w, r, &txTraceList{hash: f.TransactionHash, offset: f.Offset, limit: f.Limit, count: count, traces: traces}, deep)
	return nil
}
