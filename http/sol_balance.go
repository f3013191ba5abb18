package http

import (
	"encoding/json"
	"net/http"

	"github.com/chainquery/chainquery"
)

const pathSOLBalance = "/api/v1/customer/solana/sol-balances/account/{account}"

// solBalanceJSON is a SOL balance as the API shows it: Token Balance by
// Account's fields that a SOL balance has, in the same order and with the
// same encodings (balance exact, balance_source in lamports).
type solBalanceJSON struct {
	AsOfDatetime         string          `json:"as_of_datetime"`
	Account              string          `json:"account"`
	Balance              json.RawMessage `json:"balance"`
	BalanceSource        uint64          `json:"balance_source"`
	DatetimeLastUpdated  string          `json:"datetime_last_updated"`
	BlockSlotLastUpdated uint64          `json:"block_slot_last_updated"`
}

// appendJSON writes b as json.Marshal would (TestAppendersMatchMarshal).
func (b *solBalanceJSON) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"as_of_datetime":`...)
	dst = appendString(dst, b.AsOfDatetime)
	dst = append(dst, `,"account":`...)
	dst = appendString(dst, b.Account)
	return appendBalanceEnd(dst, b.Balance, b.BalanceSource, b.DatetimeLastUpdated, b.BlockSlotLastUpdated)
}

// handleSOLBalance serves GET
// /api/v1/customer/solana/sol-balances/account/{account}.
func (s *Server) handleSOLBalance(w http.ResponseWriter, r *http.Request) error {
	account, err := chainquery.ParsePublicKey("account", r.PathValue("account"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := chainquery.SOLBalanceFilter{Account: account}
	if f.At, err = chainquery.ParseSnapshotTime(q.Get("datetime_filter"), s.now()); err != nil {
		return err
	}
	b, err := s.store.FindSOLBalance(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, &solBalanceJSON{
		AsOfDatetime:         chainquery.FormatBalanceDatetime(f.At),
		Account:              b.Account.String(),
		Balance:              json.RawMessage(b.Balance()),
		BalanceSource:        b.Lamports,
		DatetimeLastUpdated:  chainquery.FormatBalanceDatetime(b.LastUpdated),
		BlockSlotLastUpdated: b.Slot,
	})
	return nil
}

// The OpenAPI document of SOL Balance by Account.
var solBalanceDoc = operation{
	id:      "getSOLBalanceByAccount",
	summary: "SOL Balance by Account",
	description: "SOL balance of one Solana account (a wallet, or any account) at a snapshot time: its balance at the end " +
		"of its latest block at or before datetime_filter that changed it, within the blocks whose SOL balance changes " +
		"are indexed without a gap (the ingester's --sol-balances). A balance the account had before that range is not known: " +
		"an account that did not change within it up to datetime_filter answers 404, saying from when SOL balances are indexed.",
	params:   []obj{datetimeFilterParam},
	response: "SOLBalance",
	notFound: "The account did not change between the start of the indexed SOL history and datetime_filter, datetime_filter is outside that history, or no SOL balances are indexed yet.",
}

// solBalanceSchema is the OpenAPI schema of the answer.
func solBalanceSchema() kv {
	return kv{"SOLBalance", object("SOL balance of a Solana account at a snapshot time.", obj{
		{"as_of_datetime", balanceDatetime},
		{"account", obj{{"type", "string"}, {"description", "The account asked for (base58)."}}},
		{"balance", obj{{"type", "number"}, {"description", "balance_source / 10^9, in SOL, written exactly."}}},
		{"balance_source", obj{{"type", "integer"}, {"minimum", 0}, {"description", "Balance in lamports."}}},
		{"datetime_last_updated", balanceDatetime},
		{"block_slot_last_updated", nonNegInt},
	})}
}
