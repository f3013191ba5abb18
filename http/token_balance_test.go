package http_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/storetest"
)

func balancePath(account string, query string) string {
	return "/api/v1/customer/solana/token-balances/token-account/" + account + query
}

func TestTokenBalance_OK(t *testing.T) {
	s := MustOpenServer(t)
	wallet, usdc := storetest.Wallet.String(), storetest.USDCMint.String()
	acct := storetest.WalletAcct.String()

	for _, tc := range []struct {
		name    string
		account chainquery.PublicKey
		query   string
		want    string
	}{
		{"FirstChange", storetest.WalletAcct, "?datetime_filter=2025-06-01T12:00:00Z", `{
			"as_of_datetime":"2025-06-01 12:00:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + acct + `",
			"token_name":null,"token_symbol":null,"balance":1,"balance_source":1000000,
			"datetime_last_updated":"2025-06-01 11:55:00.000","block_slot_last_updated":250000000}`},
		// Two changes in one slot: the later transaction's balance, exactly.
		{"LaterTxInSlot", storetest.WalletAcct, "?datetime_filter=2025-06-01T12:10:00Z", `{
			"as_of_datetime":"2025-06-01 12:10:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + acct + `",
			"token_name":null,"token_symbol":null,"balance":12.956933,"balance_source":12956933,
			"datetime_last_updated":"2025-06-01 12:05:30.000","block_slot_last_updated":250000100}`},
		{"ZoneOffset", storetest.WalletAcct, "?datetime_filter=" + url.QueryEscape("2025-06-01T14:10:00+02:00"), `{
			"as_of_datetime":"2025-06-01 12:10:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + acct + `",
			"token_name":null,"token_symbol":null,"balance":12.956933,"balance_source":12956933,
			"datetime_last_updated":"2025-06-01 12:05:30.000","block_slot_last_updated":250000100}`},
		{"Metadata", storetest.WalletAcct, "?datetime_filter=2025-06-01T12:10:00Z&include_metadata=true", `{
			"as_of_datetime":"2025-06-01 12:10:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + acct + `",
			"token_name":"USD Coin","token_symbol":"USDC","balance":12.956933,"balance_source":12956933,
			"datetime_last_updated":"2025-06-01 12:05:30.000","block_slot_last_updated":250000100}`},
		{"MetadataFalse", storetest.WalletAcct, "?datetime_filter=2025-06-01T12:10:00Z&include_metadata=FALSE", `{
			"as_of_datetime":"2025-06-01 12:10:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + acct + `",
			"token_name":null,"token_symbol":null,"balance":12.956933,"balance_source":12956933,
			"datetime_last_updated":"2025-06-01 12:05:30.000","block_slot_last_updated":250000100}`},
		// The largest u64 amount stays exact in both fields.
		{"MaxUint64", storetest.WalletAcct, "?datetime_filter=2025-06-01T12:30:00Z&include_metadata=1", `{
			"as_of_datetime":"2025-06-01 12:30:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + acct + `",
			"token_name":"USD Coin","token_symbol":"USDC","balance":18446744073709.551615,"balance_source":18446744073709551615,
			"datetime_last_updated":"2025-06-01 12:25:00.000","block_slot_last_updated":250000300}`},
		// Up to the cursor, inclusive, and up to now - 1h.
		{"AtCursor", storetest.WalletAcct, "?datetime_filter=2025-06-01T13:00:00Z", `{
			"as_of_datetime":"2025-06-01 13:00:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + acct + `",
			"token_name":null,"token_symbol":null,"balance":18446744073709.551615,"balance_source":18446744073709551615,
			"datetime_last_updated":"2025-06-01 12:25:00.000","block_slot_last_updated":250000300}`},
		{"NullOwnerUnknownMint", storetest.OrphanAcct, "?datetime_filter=2025-06-01T12:00:00Z&include_metadata=true", `{
			"as_of_datetime":"2025-06-01 12:00:00.000","account_owner":null,
			"token_address":"` + storetest.UnknownMint.String() + `","token_account":"` + storetest.OrphanAcct.String() + `",
			"token_name":null,"token_symbol":null,"balance":5,"balance_source":5,
			"datetime_last_updated":"2025-06-01 11:55:00.000","block_slot_last_updated":250000000}`},
		{"ClosedAccount", storetest.ClosedAcct, "?datetime_filter=2025-06-01T12:10:00Z", `{
			"as_of_datetime":"2025-06-01 12:10:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + storetest.ClosedAcct.String() + `",
			"token_name":null,"token_symbol":null,"balance":0,"balance_source":0,
			"datetime_last_updated":"2025-06-01 12:05:30.000","block_slot_last_updated":250000100}`},
		{"ClosedAccountBefore", storetest.ClosedAcct, "?datetime_filter=2025-06-01T12:00:00Z", `{
			"as_of_datetime":"2025-06-01 12:00:00.000","account_owner":"` + wallet + `",
			"token_address":"` + usdc + `","token_account":"` + storetest.ClosedAcct.String() + `",
			"token_name":null,"token_symbol":null,"balance":0.000007,"balance_source":7,
			"datetime_last_updated":"2025-06-01 11:55:00.000","block_slot_last_updated":250000000}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			AssertJSON(t, MustOK(t, s.Get(t, balancePath(tc.account.String(), tc.query))), tc.want)
		})
	}
}

func TestTokenBalance_Errors(t *testing.T) {
	s := MustOpenServer(t)
	acct := storetest.WalletAcct.String()
	ok := "?datetime_filter=2025-06-01T12:10:00Z"
	grid := "datetime_filter must be on the 10-minute grid with a timezone"
	badKey := "token_account must be a base58-encoded address of 32 to 44 characters"
	RunErrorCases(t, s, []ErrorCase{
		{Name: "DatetimeFilter/missing", Path: balancePath(acct, ""), Status: 400, Detail: "datetime_filter is required"},
		{Name: "DatetimeFilter/empty", Path: balancePath(acct, "?datetime_filter="), Status: 400, Detail: "datetime_filter is required"},
		{Name: "DatetimeFilter/offGrid", Path: balancePath(acct, "?datetime_filter=2025-06-01T12:05:00Z"), Status: 400, Detail: grid},
		{Name: "DatetimeFilter/seconds", Path: balancePath(acct, "?datetime_filter=2025-06-01T12:00:30Z"), Status: 400, Detail: grid},
		{Name: "DatetimeFilter/fraction", Path: balancePath(acct, "?datetime_filter=2025-06-01T12:00:00.000Z"), Status: 400, Detail: grid},
		{Name: "DatetimeFilter/noZone", Path: balancePath(acct, "?datetime_filter=2025-06-01T12:00:00"), Status: 400, Detail: grid},
		{Name: "DatetimeFilter/space", Path: balancePath(acct, "?datetime_filter=2025-06-01+12:00:00Z"), Status: 400, Detail: grid},
		{Name: "DatetimeFilter/dateOnly", Path: balancePath(acct, "?datetime_filter=2025-06-01"), Status: 400, Detail: grid},
		{Name: "DatetimeFilter/badDay", Path: balancePath(acct, "?datetime_filter=2025-02-30T12:00:00Z"), Status: 400, Detail: "datetime_filter is not a valid date-time"},
		{Name: "DatetimeFilter/withinLastHour", Path: balancePath(acct, "?datetime_filter=2025-06-01T14:10:00Z"), Status: 400, Detail: "datetime_filter must not fall within the last hour"},
		{Name: "DatetimeFilter/now", Path: balancePath(acct, "?datetime_filter=2025-06-01T15:00:00Z"), Status: 400, Detail: "datetime_filter must not fall within the last hour"},
		{Name: "DatetimeFilter/withinLastHourByZone", Path: balancePath(acct, "?datetime_filter="+url.QueryEscape("2025-06-01T16:30:00+02:00")), Status: 400, Detail: "datetime_filter must not fall within the last hour"},
		{Name: "DatetimeFilter/future", Path: balancePath(acct, "?datetime_filter=2025-06-01T16:00:00Z"), Status: 400, Detail: "datetime_filter must not be in the future"},
		{Name: "DatetimeFilter/farFuture", Path: balancePath(acct, "?datetime_filter=2099-01-01T00:00:00Z"), Status: 400, Detail: "datetime_filter must not be in the future"},
		{Name: "IncludeMetadata/yes", Path: balancePath(acct, ok+"&include_metadata=yes"), Status: 400, Detail: "include_metadata must be a boolean: true, false, 1 or 0"},
		{Name: "IncludeMetadata/empty", Path: balancePath(acct, ok+"&include_metadata="), Status: 400, Detail: "include_metadata must be a boolean"},
		{Name: "TokenAccount/short", Path: balancePath("abc", ok), Status: 400, Detail: badKey},
		{Name: "TokenAccount/long", Path: balancePath(strings.Repeat("2", 45), ok), Status: 400, Detail: badKey},
		{Name: "TokenAccount/zero", Path: balancePath("0"+acct[1:], ok), Status: 400, Detail: "token_account must be base58-encoded"},
		{Name: "TokenAccount/letterO", Path: balancePath("O"+acct[1:], ok), Status: 400, Detail: "token_account must be base58-encoded"},
		{Name: "TokenAccount/letterl", Path: balancePath("l"+acct[1:], ok), Status: 400, Detail: "token_account must be base58-encoded"},
		{Name: "TokenAccount/hex", Path: balancePath(storetest.EOA1.Hex(), ok), Status: 400, Detail: "token_account must be base58-encoded"},
		{Name: "TokenAccount/tooManyBytes", Path: balancePath(strings.Repeat("z", 44), ok), Status: 400, Detail: "token_account must decode to a 32-byte address"},
		{Name: "NotFound/unknownAccount", Path: balancePath(storetest.UnknownAcct.String(), ok), Status: 404, Detail: storetest.UnknownAcct.String()},
		{Name: "NotFound/beforeFirstChange", Path: balancePath(acct, "?datetime_filter=2025-06-01T11:50:00Z"), Status: 404, Detail: "no balance is indexed for token account"},
		{Name: "NotFound/laterThanIndexed", Path: balancePath(acct, "?datetime_filter=2025-06-01T13:10:00Z"), Status: 404, Detail: "token balances are indexed up to 2025-06-01 13:00:00.000"},
		{Name: "NotFound/laterThanIndexedUnknownAccount", Path: balancePath(storetest.UnknownAcct.String(), "?datetime_filter=2025-06-01T14:00:00Z"), Status: 404, Detail: "indexed up to"},
		{Name: "Path/otherChain", Path: "/api/v1/customer/ethereum/token-balances/token-account/" + acct + ok, Status: 404, Detail: "no such path"},
		{Name: "Method/POST", Method: http.MethodPost, Path: balancePath(acct, ok), Body: "{}", Status: 405, Detail: "method not allowed"},
	})
}
