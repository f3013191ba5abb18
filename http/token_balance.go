package http

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/chainquery/chainquery"
)

// tokenBalanceJSON is a token balance as the interface shows it, fields in
// its order. balance is the exact decimal text written as a JSON number
// (json.RawMessage), because a float64 would turn 12.956933 into
// 12.956932999999999 and lose every digit past 2^53; balance_source is a
// uint64, which encoding/json writes exactly.
type tokenBalanceJSON struct {
	AsOfDatetime         string          `json:"as_of_datetime"`
	AccountOwner         *string         `json:"account_owner"`
	TokenAddress         string          `json:"token_address"`
	TokenAccount         string          `json:"token_account"`
	TokenName            *string         `json:"token_name"`
	TokenSymbol          *string         `json:"token_symbol"`
	Balance              json.RawMessage `json:"balance"`
	BalanceSource        uint64          `json:"balance_source"`
	DatetimeLastUpdated  string          `json:"datetime_last_updated"`
	BlockSlotLastUpdated uint64          `json:"block_slot_last_updated"`
}

// appendJSON writes b as json.Marshal would (TestAppendersMatchMarshal),
// without its reflection: Token Balance by Account answers quickly enough
// that encoding/json showed in its profile under load (docs/benchmarks.md,
// "What changed, each from a profile": Solana keys in base58).
func (b *tokenBalanceJSON) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"as_of_datetime":`...)
	dst = appendString(dst, b.AsOfDatetime)
	dst = append(dst, `,"account_owner":`...)
	dst = appendStringOrNull(dst, b.AccountOwner)
	dst = append(dst, `,"token_address":`...)
	dst = appendString(dst, b.TokenAddress)
	dst = append(dst, `,"token_account":`...)
	dst = appendString(dst, b.TokenAccount)
	dst = append(dst, `,"token_name":`...)
	dst = appendStringOrNull(dst, b.TokenName)
	dst = append(dst, `,"token_symbol":`...)
	dst = appendStringOrNull(dst, b.TokenSymbol)
	return appendBalanceEnd(dst, b.Balance, b.BalanceSource, b.DatetimeLastUpdated, b.BlockSlotLastUpdated)
}

// appendBalanceEnd writes the fields both balance answers end with, and
// closes the object.
func appendBalanceEnd(dst []byte, balance json.RawMessage, source uint64, updated string, slot uint64) []byte {
	dst = append(dst, `,"balance":`...)
	if balance == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, balance...) // decimal text (TokenBalance.Balance): valid JSON as it is
	}
	dst = append(dst, `,"balance_source":`...)
	dst = strconv.AppendUint(dst, source, 10)
	dst = append(dst, `,"datetime_last_updated":`...)
	dst = appendString(dst, updated)
	dst = append(dst, `,"block_slot_last_updated":`...)
	dst = strconv.AppendUint(dst, slot, 10)
	return append(dst, '}')
}

// tokenBalanceOf returns b as the interface shows it, at the snapshot at:
// with its token's name and symbol only when meta asked for them (a store
// that fills them regardless must not leak them).
func tokenBalanceOf(b *chainquery.TokenBalance, at time.Time, meta bool) *tokenBalanceJSON {
	out := &tokenBalanceJSON{
		AsOfDatetime:         chainquery.FormatBalanceDatetime(at),
		TokenAddress:         b.Mint.String(),
		TokenAccount:         b.Account.String(),
		Balance:              json.RawMessage(b.Balance()),
		BalanceSource:        b.Amount,
		DatetimeLastUpdated:  chainquery.FormatBalanceDatetime(b.LastUpdated),
		BlockSlotLastUpdated: b.Slot,
	}
	if b.Owner != nil {
		owner := b.Owner.String()
		out.AccountOwner = &owner
	}
	if meta {
		out.TokenName, out.TokenSymbol = b.TokenName, b.TokenSymbol
	}
	return out
}

// snapshotParams reads datetime_filter and include_metadata, the
// parameters of both token balance endpoints.
func (s *Server) snapshotParams(q url.Values) (at time.Time, meta bool, err error) {
	if at, err = chainquery.ParseSnapshotTime(q.Get("datetime_filter"), s.now()); err != nil {
		return at, false, err
	}
	if q.Has("include_metadata") {
		meta, err = chainquery.ParseBool("include_metadata", q.Get("include_metadata"))
	}
	return at, meta, err
}

// ownerBalanceList is the Token Balances by Owner response: the owner,
// offset, limit, the page of balances (never null) and count.
type ownerBalanceList struct {
	owner                string
	offset, limit, count int
	balances             []*tokenBalanceJSON
}

func (l *ownerBalanceList) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"owner":`...)
	dst = appendString(dst, l.owner)
	return appendPage(append(dst, ','), l.offset, l.limit, l.count, l.balances, func(dst []byte, b *tokenBalanceJSON) []byte {
		return b.appendJSON(dst)
	})
}

// handleOwnerBalances serves GET
// /api/v1/customer/solana/token-balances/owner/{owner}.
func (s *Server) handleOwnerBalances(w http.ResponseWriter, r *http.Request) error {
	owner, err := chainquery.ParsePublicKey("owner", r.PathValue("owner"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := chainquery.OwnerBalancesFilter{Owner: owner}
	if f.At, f.IncludeMetadata, err = s.snapshotParams(q); err != nil {
		return err
	}
	if f.Page, err = parsePage(q); err != nil {
		return err
	}
	bs, count, err := s.store.FindOwnerBalances(r.Context(), f)
	if err != nil {
		return err
	}
	out := &ownerBalanceList{owner: owner.String(), offset: f.Offset, limit: f.Limit, count: count, balances: make([]*tokenBalanceJSON, len(bs))}
	for i, b := range bs {
		out.balances[i] = tokenBalanceOf(b, f.At, f.IncludeMetadata)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleTokenBalance serves GET
// /api/v1/customer/solana/token-balances/token-account/{token_account}.
func (s *Server) handleTokenBalance(w http.ResponseWriter, r *http.Request) error {
	account, err := chainquery.ParsePublicKey("token_account", r.PathValue("token_account"))
	if err != nil {
		return err
	}
	f := chainquery.TokenBalanceFilter{Account: account}
	if f.At, f.IncludeMetadata, err = s.snapshotParams(r.URL.Query()); err != nil {
		return err
	}
	b, err := s.store.FindTokenBalance(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tokenBalanceOf(b, f.At, f.IncludeMetadata))
	return nil
}

// tokenBalanceSchema is the schema of a token balance, field for field as
// tokenBalanceJSON writes it.
func tokenBalanceSchema() kv {
	return kv{"TokenBalance", object("Balance of a Solana token account at a snapshot time.", obj{
		{"as_of_datetime", balanceDatetime},
		{"account_owner", nullable("string", "Wallet owner; null when never reported.")},
		{"token_address", obj{{"type", "string"}, {"description", "Token mint address (base58)."}}},
		{"token_account", obj{{"type", "string"}, {"description", "Token account address (base58)."}}},
		{"token_name", nullable("string", "Filled only when include_metadata is true and the registry knows the mint.")},
		{"token_symbol", nullable("string", "Filled only when include_metadata is true and the registry knows the mint.")},
		{"balance", obj{{"type", "number"}, {"description", "balance_source / 10^decimals, written exactly."}}},
		// No "maximum": validators that read JSON numbers as float64
		// (most, libopenapi-validator among them) round 2^64-1 up to
		// 2^64 and would refuse the largest amount; words say it instead.
		{"balance_source", obj{{"type", "integer"}, {"minimum", 0},
			{"description", "Raw amount in the token's smallest unit: an unsigned 64-bit integer, up to 18446744073709551615, so read it into a 64-bit unsigned or big integer, not a float."}}},
		{"datetime_last_updated", balanceDatetime},
		{"block_slot_last_updated", nonNegInt},
	})}
}
