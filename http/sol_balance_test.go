package http_test

import (
	"net/http"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

func solPath(account string, query string) string {
	return "/api/v1/customer/solana/sol-balances/account/" + account + query
}

// TestSOLBalance reads the fixture's SOL balances: the wallet's two
// changes (11:55 and 12:05:30), the range's edges (11:55 to 13:00), and an
// account that never changed.
func TestSOLBalance(t *testing.T) {
	s := MustOpenServer(t)
	wallet := storetest.Wallet.String()
	AssertJSON(t, MustOK(t, s.Get(t, solPath(wallet, "?datetime_filter=2025-06-01T12:00:00Z"))),
		`{"as_of_datetime":"2025-06-01 12:00:00.000","account":"`+wallet+`","balance":2.5,"balance_source":2500000000,`+
			`"datetime_last_updated":"2025-06-01 11:55:00.000","block_slot_last_updated":250000000}`)
	AssertJSON(t, MustOK(t, s.Get(t, solPath(wallet, "?datetime_filter=2025-06-01T14:00:00%2B01:00"))),
		`{"as_of_datetime":"2025-06-01 13:00:00.000","account":"`+wallet+`","balance":1.23456789,"balance_source":1234567890,`+
			`"datetime_last_updated":"2025-06-01 12:05:30.000","block_slot_last_updated":250000100}`)
	RunErrorCases(t, s, []ErrorCase{
		{Name: "later than indexed", Path: solPath(wallet, "?datetime_filter=2025-06-01T13:10:00Z"), Status: http.StatusNotFound,
			Detail: "SOL balances are indexed up to 2025-06-01 13:00:00.000 UTC"},
		{Name: "earlier than indexed", Path: solPath(wallet, "?datetime_filter=2025-06-01T11:50:00Z"), Status: http.StatusNotFound,
			Detail: "SOL balances are indexed from 2025-06-01 11:55:00.000 UTC"},
		{Name: "never changed", Path: solPath(storetest.UnknownAcct.String(), "?datetime_filter=2025-06-01T12:00:00Z"), Status: http.StatusNotFound,
			Detail: "did not change between 2025-06-01 11:55:00.000 UTC"},
		{Name: "no datetime", Path: solPath(wallet, ""), Status: http.StatusBadRequest, Detail: "datetime_filter is required"},
		{Name: "off the grid", Path: solPath(wallet, "?datetime_filter=2025-06-01T12:05:00Z"), Status: http.StatusBadRequest, Detail: "datetime_filter"},
		{Name: "bad account", Path: solPath("0OIl", "?datetime_filter=2025-06-01T12:00:00Z"), Status: http.StatusBadRequest, Detail: "account"},
	})
}
