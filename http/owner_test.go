package http_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chainquery/chainquery/internal/storetest"
)

func ownerPath(owner string, query string) string {
	return "/api/v1/customer/solana/token-balances/owner/" + owner + query
}

// TestOwnerBalances checks Token Balances by Owner against Token Balance by
// Account, item by item: the same object for each of the owner's accounts.
func TestOwnerBalances(t *testing.T) {
	s := MustOpenServer(t)
	wallet := storetest.Wallet.String()
	const at = "?datetime_filter=2025-06-01T12:00:00Z&include_metadata=true"
	body := MustOK(t, s.Get(t, ownerPath(wallet, at)))
	var l struct {
		Owner  string            `json:"owner"`
		Result []json.RawMessage `json:"result"`
		Count  int               `json:"count"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatal(err)
	}
	if l.Owner != wallet || l.Count != 3 || len(l.Result) != 3 {
		t.Fatalf("owner %s, count %d, %d items: %s", l.Owner, l.Count, len(l.Result), body)
	}
	for i, acct := range []string{storetest.WalletAcct.String(), storetest.ClosedAcct.String(), storetest.MovedAcct.String()} {
		AssertJSON(t, l.Result[i], string(MustOK(t, s.Get(t, balancePath(acct, at)))))
	}
	AssertGolden(t, "owner_balances_wallet", body)

	// The account moved to NewOwner at 12:05:30: a page of one after it.
	body = MustOK(t, s.Get(t, ownerPath(storetest.NewOwner.String(), "?datetime_filter=2025-06-01T12:10:00Z&limit=1")))
	if err := json.Unmarshal(body, &l); err != nil || l.Count != 1 || len(l.Result) != 1 {
		t.Fatalf("new owner: %s", body)
	}
	AssertJSON(t, MustOK(t, s.Get(t, ownerPath(wallet, "?datetime_filter=2025-06-01T12:10:00Z&offset=2"))),
		`{"owner":"`+wallet+`","offset":2,"limit":10,"result":[],"count":2}`)

	RunErrorCases(t, s, []ErrorCase{
		{Name: "later than indexed", Path: ownerPath(wallet, "?datetime_filter=2025-06-01T13:10:00Z"), Status: http.StatusNotFound, Detail: "indexed up to 2025-06-01 13:00:00.000"},
		{Name: "no datetime", Path: ownerPath(wallet, ""), Status: http.StatusBadRequest, Detail: "datetime_filter is required"},
		{Name: "bad owner", Path: ownerPath("0OIl", "?datetime_filter=2025-06-01T12:00:00Z"), Status: http.StatusBadRequest, Detail: "owner"},
		{Name: "limit", Path: ownerPath(wallet, "?datetime_filter=2025-06-01T12:00:00Z&limit=0"), Status: http.StatusBadRequest, Detail: "limit"},
	})
}
