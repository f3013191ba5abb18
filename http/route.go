package http

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/chainquery/chainquery"
)

// route is one operation of the API. The route table is the single source of
// the mux and of the OpenAPI document, so the two cannot drift apart.
type route struct {
	method   string
	pattern  string              // a net/http ServeMux pattern without a method
	endpoint chainquery.Endpoint // "" for routes that need no API key
	handle   func(w http.ResponseWriter, r *http.Request) error
	doc      operation // what the OpenAPI document says about the route
	deep     bool      // its answers may be deep, and so kept in the answer cache
}

// Paths of the API, as docs/api.md spells them.
const (
	pathFilterTraces    = "/api/v1/customer/{chain}/traces/filter"
	pathTransactionLogs = "/api/v1/customer/{chain}/transactions/{transaction_hash}/logs"
	pathBlockReceipts   = "/api/v1/customer/{chain}/blocks/receipts"
	pathBlock           = "/api/v1/customer/{chain}/block"
	pathLatestBlock     = "/api/v1/customer/{chain}/blocks/latest"
	pathTokenBalance    = "/api/v1/customer/solana/token-balances/token-account/{token_account}"

	pathTransaction        = "/api/v1/customer/{chain}/transactions/{transaction_hash}"
	pathTransactionReceipt = "/api/v1/customer/{chain}/transactions/{transaction_hash}/receipt"
	pathTransactionTraces  = "/api/v1/customer/{chain}/transactions/{transaction_hash}/traces"
	pathBlockLogs          = "/api/v1/customer/{chain}/blocks/logs"
	pathOwnerBalances      = "/api/v1/customer/solana/token-balances/owner/{owner}"
	pathFilterLogs         = "/api/v1/customer/{chain}/logs/filter"

	pathOpenAPI = "/openapi.json"
	pathHealth  = "/healthz"
	pathReady   = "/readyz"
)

// routeTable returns every route the server answers.
func (s *Server) routeTable() []route {
	return []route{
		{http.MethodPost, pathFilterTraces, chainquery.EndpointFilterTraces, s.handleFilterTraces, filterTracesDoc, true},
		{http.MethodGet, pathTransactionLogs, chainquery.EndpointGetTransactionLogs, s.handleTransactionLogs, transactionLogsDoc, true},
		{http.MethodGet, pathBlockReceipts, chainquery.EndpointGetBlockReceipts, s.handleBlockReceipts, blockReceiptsDoc, true},
		{http.MethodGet, pathBlock, chainquery.EndpointGetBlock, s.handleBlock, blockDoc, true},
		{http.MethodGet, pathLatestBlock, chainquery.EndpointGetLatestBlock, s.handleLatestBlock, latestBlockDoc, false},
		{http.MethodGet, pathTokenBalance, chainquery.EndpointTokenBalanceByAccount, s.handleTokenBalance, tokenBalanceDoc, false},
		{http.MethodPost, pathFilterLogs, chainquery.EndpointFilterLogs, s.handleFilterLogs, filterLogsDoc, true},
		{http.MethodPost, pathExportTraces, chainquery.EndpointExportTraces, s.handleExportTraces, exportTracesDoc, false},
		{http.MethodPost, pathExportLogs, chainquery.EndpointExportLogs, s.handleExportLogs, exportLogsDoc, false},
		{http.MethodGet, pathTransaction, chainquery.EndpointGetTransaction, s.handleTransaction, transactionDoc, true},
		{http.MethodGet, pathTransactionReceipt, chainquery.EndpointGetTransactionReceipt, s.handleTransactionReceipt, transactionReceiptDoc, true},
		{http.MethodGet, pathTransactionTraces, chainquery.EndpointGetTransactionTraces, s.handleTransactionTraces, transactionTracesDoc, true},
		{http.MethodGet, pathBlockLogs, chainquery.EndpointGetBlockLogs, s.handleBlockLogs, blockLogsDoc, true},
		{http.MethodGet, pathOwnerBalances, chainquery.EndpointTokenBalancesByOwner, s.handleOwnerBalances, ownerBalancesDoc, false},
		{http.MethodGet, pathSOLBalance, chainquery.EndpointSOLBalanceByAccount, s.handleSOLBalance, solBalanceDoc, false},
		{http.MethodGet, pathStatus, chainquery.EndpointAny, s.handleStatus, statusDoc, false},
		{http.MethodGet, pathOpenAPI, "", s.handleOpenAPI, openAPIDoc, false},
		{http.MethodGet, pathHealth, "", s.handleHealth, healthDoc, false},
		{http.MethodGet, pathReady, "", s.handleReady, readyDoc, false},
	}
}

// newMux registers one handler per path, without a method in the pattern:
// the handler itself answers a wrong method with a JSON 405 and an Allow
// header, where ServeMux would answer in plain text. Everything else falls
// through to "/", a JSON 404.
//
// A path that is not in canonical form (with "//", "." or ".." segments) is
// a 404 too: ServeMux would redirect it to the cleaned path with a text
// body, and an API client is better told plainly that the path is wrong.
func (s *Server) newMux() http.Handler {
	mux := http.NewServeMux()
	routes := s.routes[:len(s.routes):len(s.routes)] // appending must not touch s.routes
	if s.serveMetrics {
		routes = append(routes, s.metricsRoute())
	}
	routes = append(routes, s.docsRoutes()...)
	var paths []string
	byPath := map[string][]route{}
	for _, rt := range routes {
		if _, ok := byPath[rt.pattern]; !ok {
			paths = append(paths, rt.pattern)
		}
		byPath[rt.pattern] = append(byPath[rt.pattern], rt)
	}
	for _, p := range paths {
		mux.Handle(p, s.dispatch(byPath[p]))
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, chainquery.Errorf(chainquery.ENOTFOUND, "no such path: see /openapi.json for the paths this API serves"))
	}
	mux.HandleFunc("/", notFound)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p != "/" && path.Clean(p) != p {
			notFound(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// dispatch returns the handler of one path: it picks the route of the
// request's method, authenticates when the route needs a key (and then
// applies the key's rate limit, the answer cache, and the key's share of
// the store: serveKeyed), and writes the error the route's handler returns.
func (s *Server) dispatch(routes []route) http.Handler {
	methods := make([]string, len(routes))
	for i, rt := range routes {
		methods[i] = rt.method
	}
	allow := strings.Join(methods, ", ")
	pattern := routes[0].pattern
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.route = pattern // a 405 is logged under the path it hit
		info.pattern = pattern
		for _, rt := range routes {
			if r.Method != rt.method {
				continue
			}
			info.route = rt.method + " " + rt.pattern
			if rt.endpoint == "" {
				if err := rt.handle(w, r); err != nil {
					s.writeError(w, r, err)
				}
				return
			}
			key, err := s.authenticate(r, rt.endpoint)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			info.keyName = key.Name
			if err := s.limiter.allow(w, key); err != nil {
				s.writeError(w, r, err)
				return
			}
			if s.admission != nil {
				w.Header().Set(headerCost, "0") // a cached answer costs nothing; serveKeyed sets the real cost
			}
			if rt.deep && s.answers != nil && s.serveCached(w, r) {
				return
			}
			s.serveKeyed(w, r, rt, key)
			return
		}
		w.Header().Set("Allow", allow)
		s.writeError(w, r, chainquery.Errorf(chainquery.ENOTALLOWED, "method not allowed on this path: use %s", allow))
	})
}

// parsePage reads the limit and offset query parameters. A parameter given
// with an empty value (limit=) is no integer and so EINVALID, as an empty
// block_number or boolean is; chainquery.ParsePage alone would take it for
// an absent one and apply the default.
func parsePage(q url.Values) (chainquery.Page, error) {
	if q.Has("limit") && q.Get("limit") == "" {
		return chainquery.Page{}, chainquery.Errorf(chainquery.EINVALID, "limit must be an integer between 1 and %d", chainquery.MaxLimit)
	}
	if q.Has("offset") && q.Get("offset") == "" {
		return chainquery.Page{}, chainquery.Errorf(chainquery.EINVALID, "offset must be an integer between 0 and %d", chainquery.MaxOffset)
	}
	return chainquery.ParsePage(q.Get("limit"), q.Get("offset"))
}
