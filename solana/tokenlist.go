package solana

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/chainquery/chainquery"
)

// MainnetChainID is the chainId of mainnet-beta entries in a token list.
const MainnetChainID = 101

// ReadTokenList reads a token list in the Solana token-list JSON format
// ({"tokens": [{"chainId", "address", "name", "symbol", "decimals"}, ...]})
// and returns its mainnet entries, one per mint (the first listed wins, as
// the list's own tooling does). Entries of other clusters are dropped: a
// devnet mint's name must not label a mainnet account. An entry without a
// chainId is kept, since lists derived from the official one often omit it.
func ReadTokenList(r io.Reader) ([]*chainquery.Token, error) {
	var list struct {
		Tokens []struct {
			ChainID  *int   `json:"chainId"`
			Address  string `json:"address"`
			Name     string `json:"name"`
			Symbol   string `json:"symbol"`
			Decimals int    `json:"decimals"`
		} `json:"tokens"`
	}
	if err := json.NewDecoder(r).Decode(&list); err != nil {
		return nil, fmt.Errorf("read token list: %w", err)
	}
	seen := make(map[chainquery.PublicKey]bool, len(list.Tokens))
	var out []*chainquery.Token
	for i, t := range list.Tokens {
		if t.ChainID != nil && *t.ChainID != MainnetChainID {
			continue
		}
		mint, err := parseKey(t.Address)
		if err != nil {
			return nil, fmt.Errorf("token list entry %d: address %q: %w", i, t.Address, err)
		}
		if t.Decimals < 0 || t.Decimals > 255 {
			return nil, fmt.Errorf("token list entry %d (%s): decimals %d is out of range", i, t.Address, t.Decimals)
		}
		if seen[mint] {
			continue
		}
		seen[mint] = true
		out = append(out, &chainquery.Token{Mint: mint, Name: t.Name, Symbol: t.Symbol, Decimals: t.Decimals})
	}
	return out, nil
}
