package http_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// endpointRequest is a valid request to one endpoint, and a request to it
// that is wrong in every way validation could notice.
type endpointRequest struct {
	endpoint chainquery.Endpoint
	method   string
	path     string
	body     string
	badPath  string
	badBody  string
}

func endpointRequests() []endpointRequest {
	nested := storetest.TxNested.Hex()
	return []endpointRequest{
		{chainquery.EndpointFilterTraces, http.MethodPost, tracesPath, fixtureRange,
			"/api/v1/customer/ethereum/traces/filter?limit=0", `{"fromBlock": `},
		{chainquery.EndpointGetTransactionLogs, http.MethodGet, logsPath("polygon", nested), "",
			logsPath("solana", "0x12") + "?limit=-1", ""},
		{chainquery.EndpointGetBlockReceipts, http.MethodGet, receiptsPath("polygon", "?block_number=68000000"), "",
			receiptsPath("solana", "?limit=99"), ""},
		{chainquery.EndpointGetBlock, http.MethodGet, blockPath("polygon", "?block_number=68000000"), "",
			blockPath("ethereum", "?full_transactions=maybe"), ""},
		{chainquery.EndpointGetLatestBlock, http.MethodGet, latestPath("polygon"), "",
			latestPath("solana"), ""},
		{chainquery.EndpointTokenBalanceByAccount, http.MethodGet, balancePath(storetest.WalletAcct.String(), "?datetime_filter=2025-06-01T12:10:00Z"), "",
			balancePath("0OIl", "?datetime_filter=2099-01-01T00:00:05"), ""},
	}
}

func body(s string) io.Reader {
	if s == "" {
		return nil
	}
	return strings.NewReader(s)
}

func TestAuth(t *testing.T) {
	s := MustOpenServer(t)
	unknown, _ := chainquery.NewAPIKey()
	for _, er := range endpointRequests() {
		t.Run(string(er.endpoint), func(t *testing.T) {
			t.Run("OK", func(t *testing.T) {
				MustOK(t, s.Do(t, er.method, er.path, s.Key, body(er.body)))
			})
			for _, k := range []struct{ name, key string }{
				{"Missing", NoKey},
				{"Empty", ""},
				{"Unknown", unknown},
				{"Revoked", s.RevokedKey},
				{"Truncated", s.Key[:len(s.Key)-1]},
				{"Hash", fmt.Sprintf("%x", chainquery.HashAPIKey(s.Key))},
			} {
				t.Run("ErrUnauthorized/"+k.name, func(t *testing.T) {
					detail := MustErrorDetail(t, s.Do(t, er.method, er.path, k.key, body(er.body)), http.StatusUnauthorized)
					if detail != "Invalid or missing API key" {
						t.Errorf("detail %q", detail)
					}
				})
				// Authentication comes before validation: a bad key on a bad
				// request is still a 401.
				t.Run("ErrUnauthorized/"+k.name+"BeforeValidation", func(t *testing.T) {
					MustErrorDetail(t, s.Do(t, er.method, er.badPath, k.key, body(er.badBody)), http.StatusUnauthorized)
				})
			}
			t.Run("ErrUnauthorized/KeyInQuery", func(t *testing.T) {
				sep := "?"
				if strings.Contains(er.path, "?") {
					sep = "&"
				}
				MustErrorDetail(t, s.Do(t, er.method, er.path+sep+"apikey="+s.Key, NoKey, body(er.body)), http.StatusUnauthorized)
			})
			if er.endpoint == chainquery.EndpointGetTransactionLogs {
				t.Run("OKWithEndpointKey", func(t *testing.T) {
					MustOK(t, s.Do(t, er.method, er.path, s.LogsKey, body(er.body)))
				})
				return
			}
			t.Run("ErrForbidden", func(t *testing.T) {
				detail := MustErrorDetail(t, s.Do(t, er.method, er.path, s.LogsKey, body(er.body)), http.StatusForbidden)
				if detail != "API key is not enabled for this endpoint" {
					t.Errorf("detail %q", detail)
				}
			})
			t.Run("ErrForbiddenBeforeValidation", func(t *testing.T) {
				MustErrorDetail(t, s.Do(t, er.method, er.badPath, s.LogsKey, body(er.badBody)), http.StatusForbidden)
			})
		})
	}

	t.Run("KeyNeverLogged", func(t *testing.T) {
		logs := s.Logs.String()
		for _, k := range []string{s.Key, s.LogsKey, s.RevokedKey, unknown} {
			if strings.Contains(logs, k) {
				t.Fatalf("the log holds an API key")
			}
		}
		if !strings.Contains(logs, "key=all") || !strings.Contains(logs, "key=logs-only") {
			t.Errorf("the log must name the key used:\n%s", logs)
		}
	})
}

func TestMethodNotAllowed(t *testing.T) {
	s := MustOpenServer(t)
	for _, tc := range []struct {
		path    string
		allow   string
		methods []string
	}{
		{tracesPath, "POST", []string{"GET", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}},
		{logsPath("polygon", storetest.TxNested.Hex()), "GET", []string{"POST", "PUT", "DELETE", "HEAD"}},
		{receiptsPath("polygon", "?block_number=1"), "GET", []string{"POST", "DELETE"}},
		{blockPath("polygon", "?block_number=1"), "GET", []string{"POST", "PATCH"}},
		{latestPath("polygon"), "GET", []string{"POST"}},
		{balancePath(storetest.WalletAcct.String(), ""), "GET", []string{"PUT"}},
		{"/openapi.json", "GET", []string{"POST"}},
		{"/healthz", "GET", []string{"DELETE"}},
		// Wrong chain and wrong method: the method is checked first.
		{"/api/v1/customer/solana/traces/filter", "POST", []string{"GET"}},
	} {
		for _, m := range tc.methods {
			t.Run(m+" "+tc.path, func(t *testing.T) {
				// No key: a 405 needs none, and a bad key does not turn it into a 401.
				resp := s.Do(t, m, tc.path, NoKey, nil)
				if m == http.MethodHead {
					if resp.Status != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tc.allow {
						t.Errorf("status %d Allow %q", resp.Status, resp.Header.Get("Allow"))
					}
					return
				}
				detail := MustErrorDetail(t, resp, http.StatusMethodNotAllowed)
				if got := resp.Header.Get("Allow"); got != tc.allow {
					t.Errorf("Allow = %q, want %q", got, tc.allow)
				}
				if !strings.Contains(detail, "method not allowed") || !strings.Contains(detail, tc.allow) {
					t.Errorf("detail %q", detail)
				}
			})
		}
	}
}

func TestNotFoundPath(t *testing.T) {
	s := MustOpenServer(t)
	for _, p := range []string{
		"/",
		"/api",
		"/api/v1/customer/polygon",
		"/api/v1/customer/polygon/traces",
		"/api/v1/customer/polygon/traces/filter/",
		"/api/v1/customer/polygon/block/",
		"/api/v1/customer/polygon/blocks",
		"/api/v1/customer/polygon/blocks/latest/extra",
		"/api/v2/customer/polygon/blocks/latest",
		"/API/V1/customer/polygon/blocks/latest",
		"/api/v1/customer/polygon//blocks/latest",
		"/api/v1/customer/polygon/../polygon/blocks/latest",
		"/api/v1/customer/polygon/./blocks/latest",
		"/api/v1/customer/polygon/transactions//logs",
		"/api/v1/customer/solana/token-balances/token-account/",
		"/api/v1/customer/solana/token-balances/" + storetest.WalletAcct.String(),
		"/healthz/",
		"/openapi.yaml",
	} {
		for _, key := range []string{NoKey, s.Key} {
			t.Run(p, func(t *testing.T) {
				resp := s.Do(t, http.MethodGet, p, key, nil)
				if detail := MustErrorDetail(t, resp, http.StatusNotFound); !strings.Contains(detail, "no such path") {
					t.Errorf("detail %q", detail)
				}
			})
		}
	}
}

func TestHealth(t *testing.T) {
	s := MustOpenServer(t)
	for _, key := range []string{NoKey, "", "wrong"} {
		AssertJSON(t, MustOK(t, s.Do(t, http.MethodGet, "/healthz", key, nil)), `{"status":"ok"}`)
	}
}

// TestReady: /readyz needs no key and answers 200 while the store answers
// with its schema current and Config.Ready passes; 503 with a detail naming
// what is not ready otherwise.
func TestReady(t *testing.T) {
	lagging := errors.New("polygon is 130 s behind its node (--ready-max-lag 60)")
	var readyErr error
	s := MustOpenServer(t, func(c *cqhttp.Config) { c.Ready = func(context.Context) error { return readyErr } })
	for _, key := range []string{NoKey, "wrong"} {
		AssertJSON(t, MustOK(t, s.Do(t, http.MethodGet, "/readyz", key, nil)), `{"status":"ready"}`)
	}
	readyErr = lagging
	if detail := MustErrorDetail(t, s.Do(t, http.MethodGet, "/readyz", NoKey, nil), http.StatusServiceUnavailable); detail != lagging.Error() {
		t.Errorf("detail %q", detail)
	}
	readyErr = nil
	ctx := context.Background()
	if _, err := s.DB.Write.Exec(ctx, `DELETE FROM schema_migrations WHERE name = 'migration/0004_traces_to_from_addr.sql'`); err != nil {
		t.Fatal(err)
	}
	detail := MustErrorDetail(t, s.Do(t, http.MethodGet, "/readyz", NoKey, nil), http.StatusServiceUnavailable)
	if !strings.Contains(detail, "migrations 0004_traces_to_from_addr.sql are not applied") {
		t.Errorf("detail %q", detail)
	}
	s.DB.Close()
	detail = MustErrorDetail(t, s.Do(t, http.MethodGet, "/readyz", NoKey, nil), http.StatusServiceUnavailable)
	if detail != "the database is unavailable" {
		t.Errorf("detail %q", detail)
	}
}
