package evm_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/evm"
	"github.com/chainquery/chainquery/internal/testenv"
)

// The real mainnet responses are in the repository's testdata/evm (see its
// SOURCES.md), named here relative to that folder by their plain names:
// testenv reads the gzipped copy of the large ones.

// tdResult reads a fixture (path relative to testdata/evm) and returns the RPC
// result in it, whichever of the three shapes the file has: a JSON-RPC
// envelope {"jsonrpc", "id", "result"}, a recorded call {"method",
// "params", "result"}, or the bare result.
func tdResult(t testing.TB, name string) json.RawMessage {
	t.Helper()
	data := bytes.TrimSpace(testenv.ReadTestdata(t, "evm", name))
	if len(data) == 0 || data[0] != '{' {
		return data
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	_, isRPC := env["jsonrpc"]
	_, isCall := env["method"]
	if !isRPC && !isCall {
		return data
	}
	if e, ok := env["error"]; ok {
		t.Fatalf("fixture %s holds an error answer: %s", name, e)
	}
	res, ok := env["result"]
	if !ok {
		t.Fatalf("fixture %s: envelope without result", name)
	}
	return res
}

// tdElems returns the elements of a fixture's result; a result that is one
// object (eth_getTransactionReceipt, debug_traceTransaction) is one element.
func tdElems(t testing.TB, name string) []json.RawMessage {
	t.Helper()
	res := tdResult(t, name)
	if len(res) > 0 && res[0] == '{' {
		return []json.RawMessage{res}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(res, &elems); err != nil {
		t.Fatalf("fixture %s: want an array or object: %v", name, err)
	}
	return elems
}

// tdArray returns a fixture's result as a JSON array, wrapping a single
// object, for the trace decoders that take whole arrays.
func tdArray(t testing.TB, names ...string) json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	for _, n := range names {
		all = append(all, tdElems(t, n)...)
	}
	out, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tdGlob lists fixtures matching pattern (relative to testdata/evm), failing
// when none match so that a moved directory cannot make a test pass
// vacuously.
func tdGlob(t testing.TB, pattern string) []string {
	t.Helper()
	names := testenv.GlobTestdata(t, filepath.Join("evm", pattern))
	for i, n := range names {
		names[i], _ = filepath.Rel("evm", n)
	}
	return names
}

// tdChain is the chain a fixture belongs to: its directory.
func tdChain(name string) chainquery.Chain {
	return chainquery.Chain(strings.Split(filepath.ToSlash(name), "/")[0])
}

// tdBlock decodes a block fixture.
func tdBlock(t testing.TB, name string) *chainquery.BlockData {
	t.Helper()
	d, err := evm.DecodeBlock(tdChain(name), tdResult(t, name))
	if err != nil {
		t.Fatalf("DecodeBlock %s: %v", name, err)
	}
	return d
}

// tdReceipts returns the receipts of one or more receipt fixtures.
func tdReceipts(t testing.TB, names ...string) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	for _, n := range names {
		all = append(all, tdElems(t, n)...)
	}
	return all
}

// tdTx returns the transaction of d with the given hash.
func tdTx(t testing.TB, d *chainquery.BlockData, hash string) *chainquery.Transaction {
	t.Helper()
	for _, tx := range d.Transactions {
		if tx.Hash.Hex() == hash {
			return tx
		}
	}
	t.Fatalf("block %d has no transaction %s", d.Block.Number, hash)
	return nil
}

// tdHash and tdAddr parse test literals.
func tdHash(t testing.TB, s string) chainquery.Hash {
	t.Helper()
	h, err := chainquery.ParseHash("hash", s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func tdAddr(t testing.TB, s string) chainquery.Address {
	t.Helper()
	a, err := chainquery.ParseAddress("address", s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
