package http

import "github.com/chainquery/chainquery"

// ErrorStatus exposes the one mapping of error codes to status codes to the
// tests of package http_test.
var ErrorStatus = errorStatus

// RouteTable returns the method and pattern of every route the server
// registers, in registration order, so that the tests can hold the OpenAPI
// document against it.
func RouteTable() [][2]string {
	var out [][2]string
	for _, rt := range NewServer(Config{}).routes {
		out = append(out, [2]string{rt.method, rt.pattern})
	}
	return out
}

// AppendBlockJSON, AppendTraceListJSON, AppendLogListJSON,
// AppendReceiptListJSON and AppendJSONString expose the hand encoders to the
// tests that hold them to encoding/json.
func AppendBlockJSON(dst []byte, b *chainquery.Block, full bool) []byte {
	return (&blockAnswer{b: b, full: full}).appendJSON(dst)
}

func AppendTraceListJSON(dst []byte, offset, limit, count int, traces []*chainquery.Trace) []byte {
	return (&traceList{offset: offset, limit: limit, count: count, traces: traces}).appendJSON(dst)
}

func AppendLogListJSON(dst []byte, hash chainquery.Hash, offset, limit, count int, logs []*chainquery.Log) []byte {
	return (&logList{hash: hash, offset: offset, limit: limit, count: count, logs: logs}).appendJSON(dst)
}

func AppendReceiptListJSON(dst []byte, number uint64, offset, limit, count int, receipts []*chainquery.Receipt) []byte {
	return (&receiptList{number: number, offset: offset, limit: limit, count: count, receipts: receipts}).appendJSON(dst)
}

func AppendJSONString(dst []byte, s string) []byte { return appendString(dst, s) }

// TokenBalanceJSON is the Token Balance by Account answer, for the test
// that holds its encoder to encoding/json.
type TokenBalanceJSON = tokenBalanceJSON

func AppendTokenBalanceJSON(dst []byte, b *TokenBalanceJSON) []byte { return b.appendJSON(dst) }

// SOLBalanceJSON is the SOL Balance by Account answer, for the same test.
type SOLBalanceJSON = solBalanceJSON

func AppendSOLBalanceJSON(dst []byte, b *SOLBalanceJSON) []byte { return b.appendJSON(dst) }

// DocsPage returns the /docs page with spec as its OpenAPI document.
func DocsPage(spec []byte) []byte { return docsPageFor(loadDocs(), spec) }

// NarrowHint is what a 503 past the deadline says to narrow a request of e.
var NarrowHint = narrowHint

// ActiveWindow is how recently a key must have been admitted to count as
// using the store.
const ActiveWindow = activeWindow

// SetExportLimits makes the server's exports read chunks of chunkRows and
// end a response after responseRows (0: the defaults), and run afterFirst,
// when not nil, once the first chunk of a response is sent. Call it before
// the server serves.
func (s *Server) SetExportLimits(chunkRows, responseRows int, afterFirst func()) {
	s.export = exportLimits{chunkRows: chunkRows, responseRows: responseRows, afterFirstRow: afterFirst}
}
