package http

import (
	"fmt"
	"net/http"

	"github.com/chainquery/chainquery"
)

// Detail texts of authentication failures (docs/api.md, "Authentication").
const (
	detailUnauthorized = "Invalid or missing API key"
	detailForbidden    = "API key is not enabled for this endpoint"
)

// authenticate returns the key in the apikey header if it is known and
// enabled for endpoint. It returns EUNAUTHORIZED for a missing, empty or
// unknown key, EFORBIDDEN for a key not enabled for endpoint, and the
// store's error when the store fails. The key itself never reaches a log or
// an error text: only its hash leaves this function.
func (s *Server) authenticate(r *http.Request, endpoint chainquery.Endpoint) (*chainquery.APIKey, error) {
	presented := r.Header.Get("apikey")
	if presented == "" {
		return nil, chainquery.Errorf(chainquery.EUNAUTHORIZED, detailUnauthorized)
	}
	hash := chainquery.HashAPIKey(presented)
	key, ok := s.keys.get(hash)
	if !ok {
		var err error
		key, err = s.store.FindAPIKeyByHash(r.Context(), hash)
		if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
			return nil, chainquery.Errorf(chainquery.EUNAUTHORIZED, detailUnauthorized)
		} else if err != nil {
			return nil, fmt.Errorf("find api key: %w", err)
		}
		s.keys.put(hash, key)
	}
	// The store looked the key up by its hash; comparing again in constant
	// time guards against a store whose lookup is not exact.
	if key == nil || !key.Matches(hash) {
		return nil, chainquery.Errorf(chainquery.EUNAUTHORIZED, detailUnauthorized)
	}
	if !key.Allows(endpoint) {
		return nil, chainquery.Errorf(chainquery.EFORBIDDEN, detailForbidden)
	}
	return key, nil
}
