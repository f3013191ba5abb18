// Package chainquery holds the domain of the chainquery service: the records it
// serves (blocks, transactions, receipts, logs, traces, Solana token balances),
// the filters that select them, the validation rules of the public interface,
// and the small interfaces that stores implement for the API (read side) and
// for the ingesters (write side).
//
// This package imports only the standard library. Each dependency lives in its
// own package (sqlite, http, ...), and only cmd/chainquery wires them together.
package chainquery

import (
	"sort"
	"strings"
)

// Chain names a blockchain as it appears in API paths.
type Chain string

// The chains the service knows.
const (
	Ethereum  Chain = "ethereum"
	Polygon   Chain = "polygon"
	Base      Chain = "base"
	Arbitrum  Chain = "arbitrum"
	Optimism  Chain = "optimism"
	Binance   Chain = "binance"
	Avalanche Chain = "avalanche"
	Gnosis    Chain = "gnosis"
	Solana    Chain = "solana"
)

// EVMChains lists the EVM chains in the order the interface lists them.
var EVMChains = []Chain{Ethereum, Polygon, Base, Arbitrum, Optimism, Binance, Avalanche, Gnosis}

// evmChainIDs are the EIP-155 chain ids; stores key rows by them because a
// small integer is more compact than a name and means the same everywhere.
var evmChainIDs = map[Chain]int64{
	Ethereum:  1,
	Polygon:   137,
	Base:      8453,
	Arbitrum:  42161,
	Optimism:  10,
	Binance:   56,
	Avalanche: 43114,
	Gnosis:    100,
}

// ID returns the EIP-155 chain id of an EVM chain, or 0 for any other chain.
func (c Chain) ID() int64 { return evmChainIDs[c] }

// ChainByID returns the EVM chain with the given EIP-155 id.
func ChainByID(id int64) (Chain, bool) {
	for c, v := range evmChainIDs {
		if v == id {
			return c, true
		}
	}
	return "", false
}

// IsEVM reports whether c is one of the eight EVM chains.
func (c Chain) IsEVM() bool { _, ok := evmChainIDs[c]; return ok }

// Endpoint names an API operation. API keys are enabled per endpoint.
type Endpoint string

// The operations of the API: the six of the hosted interface, then those
// this project adds (docs/api.md).
const (
	EndpointFilterTraces          Endpoint = "filter_traces"
	EndpointGetTransactionLogs    Endpoint = "get_transaction_logs"
	EndpointGetBlockReceipts      Endpoint = "get_block_receipts"
	EndpointGetBlock              Endpoint = "get_block"
	EndpointGetLatestBlock        Endpoint = "get_latest_block"
	EndpointTokenBalanceByAccount Endpoint = "token_balance_by_account"

	EndpointGetTransaction        Endpoint = "get_transaction"
	EndpointGetTransactionReceipt Endpoint = "get_transaction_receipt"
	EndpointGetTransactionTraces  Endpoint = "get_transaction_traces"
	EndpointGetBlockLogs          Endpoint = "get_block_logs"
	EndpointTokenBalancesByOwner  Endpoint = "token_balances_by_owner"
	EndpointSOLBalanceByAccount   Endpoint = "sol_balance_by_account"
	EndpointFilterLogs            Endpoint = "filter_logs"
	EndpointExportTraces          Endpoint = "export_traces"
	EndpointExportLogs            Endpoint = "export_logs"
)

// Endpoints lists every endpoint in a stable order. A key made with "all"
// is enabled for those listed when it was made: an endpoint added later
// needs keys update --endpoints.
var Endpoints = []Endpoint{
	EndpointFilterTraces,
	EndpointGetTransactionLogs,
	EndpointGetBlockReceipts,
	EndpointGetBlock,
	EndpointGetLatestBlock,
	EndpointTokenBalanceByAccount,
	EndpointGetTransaction,
	EndpointGetTransactionReceipt,
	EndpointGetTransactionTraces,
	EndpointGetBlockLogs,
	EndpointTokenBalancesByOwner,
	EndpointSOLBalanceByAccount,
	EndpointFilterLogs,
	EndpointExportTraces,
	EndpointExportLogs,
}

// Chains returns the values of the path parameter chain that the endpoint
// accepts (docs/api.md, "Endpoints at a glance"). Of these, Filter Traces,
// Export Traces and Get Block serve the chains whose traces are indexed
// (package http, traced.go).
func (e Endpoint) Chains() []Chain {
	switch e {
	case EndpointGetTransactionLogs, EndpointGetBlockReceipts, EndpointGetLatestBlock, EndpointFilterTraces, EndpointGetBlock,
		EndpointGetTransaction, EndpointGetTransactionReceipt, EndpointGetTransactionTraces, EndpointGetBlockLogs,
		EndpointFilterLogs, EndpointExportTraces, EndpointExportLogs:
		return EVMChains
	case EndpointTokenBalanceByAccount, EndpointTokenBalancesByOwner, EndpointSOLBalanceByAccount:
		return []Chain{Solana}
	}
	return nil
}

// ParseChain checks that s names a chain the endpoint serves. It returns
// EINVALID, with the allowed values in the message, otherwise.
func ParseChain(e Endpoint, s string) (Chain, error) {
	allowed := e.Chains()
	for _, c := range allowed {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, len(allowed))
	for i, c := range allowed {
		names[i] = string(c)
	}
	return "", Errorf(EINVALID, "chain must be one of: %s", strings.Join(names, ", "))
}

// ParseEndpoints parses "all" or a comma-separated list of endpoint names.
// The result is sorted in the order of Endpoints and has no duplicates.
func ParseEndpoints(s string) ([]Endpoint, error) {
	s = strings.TrimSpace(s)
	if s == "all" {
		return append([]Endpoint(nil), Endpoints...), nil
	}
	seen := map[Endpoint]bool{}
	for _, part := range strings.Split(s, ",") {
		e := Endpoint(strings.TrimSpace(part))
		if !e.valid() {
			return nil, Errorf(EINVALID, "unknown endpoint %q: use all or a comma-separated list of %s", part, endpointNames())
		}
		seen[e] = true
	}
	var out []Endpoint
	for _, e := range Endpoints {
		if seen[e] {
			out = append(out, e)
		}
	}
	return out, nil
}

func (e Endpoint) valid() bool {
	for _, v := range Endpoints {
		if v == e {
			return true
		}
	}
	return false
}

func endpointNames() string {
	names := make([]string, len(Endpoints))
	for i, e := range Endpoints {
		names[i] = string(e)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
